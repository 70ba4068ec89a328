/**
 * The child's side of ./child.ts. Importing it makes the process exit cleanly on SIGTERM, SIGINT or
 * when the parent goes away, after running what `onStop` registered.
 */
import { writeFileSync } from 'node:fs';
import { Session } from 'node:inspector';

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

let profiler: Session | undefined;
/** BENCH_PROFILE_KIND=heap: the profile is of allocations (sampled every 1 kB), not of the CPU. */
const HEAP = process.env.BENCH_PROFILE_KIND === 'heap' || process.env.BENCH_PROFILE_KIND === 'heap-live';
const LIVE = process.env.BENCH_PROFILE_KIND === 'heap-live';

/** Starts the V8 CPU profiler (`profile-start`), or stops it and writes the profile to `path` (`profile-stop`). */
function profile(message: ParentMessage): void {
  if (message.type === 'profile-start') {
    profiler = new Session();
    profiler.connect();
    if (HEAP) {
      // Every allocation sampled, garbage included: what the young generation's collections pay for.
      profiler.post('HeapProfiler.startSampling', { samplingInterval: 1024, includeObjectsCollectedByMajorGC: !LIVE, includeObjectsCollectedByMinorGC: !LIVE } as object, () => send({ type: 'profiling' }));
      return;
    }
    profiler.post('Profiler.enable', () =>
      profiler!.post('Profiler.start', () => send({ type: 'profiling' })),
    );
    return;
  }
  const session = profiler;
  profiler = undefined;
  if (!session) {
    send({ type: 'profiled', error: 'not profiling' });
    return;
  }
  if (HEAP) {
    session.post('HeapProfiler.stopSampling', (err, result) => {
      if (!err) writeFileSync(String(message.path).replace(/\.cpuprofile$/, '.heapprofile'), JSON.stringify(result.profile));
      session.disconnect();
      send({ type: 'profiled', ...(err ? { error: err.message } : {}) });
    });
    return;
  }
  session.post('Profiler.stop', (err, result) => {
    if (!err) writeFileSync(String(message.path), JSON.stringify(result.profile));
    session.disconnect();
    send({ type: 'profiled', ...(err ? { error: err.message } : {}) });
  });
}

/**
 * Tells the parent this child is up; from now on it answers `cpu` queries with its CPU usage and
 * profiles the CPU between `profile-start` and `profile-stop` (see ./child.ts, Child.profile).
 */
export function ready(info: Record<string, unknown> = {}): void {
  process.on('message', (message: ParentMessage) => {
    if (message?.type === 'cpu') send({ type: 'cpu', usage: process.cpuUsage() });
    else if (message?.type === 'profile-start' || message?.type === 'profile-stop') profile(message);
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
