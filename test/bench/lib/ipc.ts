/**
 * The child's side of ./child.ts. Importing it makes the process exit cleanly on SIGTERM, SIGINT or
 * when the parent goes away, after running what `onStop` registered.
 */

export interface ParentMessage {
  type: string;
  [key: string]: unknown;
}

if (!process.send) {
  throw new Error(`${process.argv[1]} runs as a child of the benchmark runner: npm run bench`);
}

export function send(message: ParentMessage): void {
  if (process.connected) process.send!(message);
}

/** The next message of `type` from the parent. */
export function next(type: string): Promise<ParentMessage> {
  return new Promise((resolve) => {
    const onMessage = (message: ParentMessage) => {
      if (message?.type !== type) return;
      process.off('message', onMessage);
      resolve(message);
    };
    process.on('message', onMessage);
  });
}

/** Tells the parent this child is up; from now on it answers `cpu` queries with its CPU usage. */
export function ready(info: Record<string, unknown> = {}): void {
  process.on('message', (message: ParentMessage) => {
    if (message?.type === 'cpu') send({ type: 'cpu', usage: process.cpuUsage() });
  });
  send({ ...info, type: 'ready' });
}

const stoppers: (() => unknown)[] = [];
let stopping = false;

/** Registers a shutdown step; steps run last registered first. */
export function onStop(fn: () => unknown): void {
  stoppers.unshift(fn);
}

async function stop(why: string): Promise<void> {
  if (stopping) return;
  stopping = true;
  let code = 0;
  for (const fn of stoppers) {
    try {
      await fn();
    } catch (err) {
      process.stderr.write(`${process.argv[1]}: shutdown after ${why} failed: ${(err as Error).stack ?? String(err)}\n`);
      code = 1;
    }
  }
  process.exit(code);
}

process.on('SIGTERM', () => void stop('SIGTERM'));
process.on('SIGINT', () => void stop('SIGINT'));
process.on('disconnect', () => void stop('parent gone'));
