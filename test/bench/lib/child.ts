import { fork, type ChildProcess } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { NODE_FLAGS } from '../../../src/config/node-flags.js';
import { writeProfileText } from './profile-text.js';

/** The repository root: children run from here so `--import tsx` resolves. */
export const ROOT = fileURLToPath(new URL('../../../', import.meta.url));

export interface ChildMessage {
  type: string;
  [key: string]: unknown;
}

const running = new Set<Child>();
/** The scripts that stand for the service's own processes (`hrs serve`, `hrs worker`): they get its V8 options. */
const SERVICE_SCRIPT = /(platform-server|webhook-worker|mail-worker)\.ts$/;

/**
 * A TypeScript script in its own Node.js process (own event loop, own core when one is free), talking
 * to this process over IPC. See ./ipc.ts for the child's side.
 */
export class Child {
  private constructor(
    readonly name: string,
    private readonly proc: ChildProcess,
  ) {}

  /** Forks `script` and waits for its `ready` message. */
  static async start(
    name: string,
    script: URL,
    options: { args?: string[]; env?: Record<string, string | undefined>; readyTimeoutMs?: number; nodeFlags?: readonly string[] } = {},
  ): Promise<{ child: Child; ready: ChildMessage }> {
    const proc = fork(fileURLToPath(script), options.args ?? [], {
      cwd: ROOT,
      // The platform and the workers run with the service's V8 options, as `hrs serve` and `hrs worker`
      // do (src/config/node-flags.ts; bin/hrs.js's first line). The service's own modules from dist/
      // once the run has built it (./build.ts): what is measured is the code `hrs` runs, not the
      // sources as tsx transforms them. BENCH_PERF_MAP=1: each child writes /tmp/perf-PID.map, so that
      // Linux `perf` names its JavaScript (docs/performance.md).
      execArgv: [...(process.env.BENCH_NODE_FLAGS ? process.env.BENCH_NODE_FLAGS.split(' ').filter(Boolean) : []), ...(process.env.BENCH_PERF_MAP === '1' ? ['--perf-basic-prof'] : []), ...(options.nodeFlags ?? (SERVICE_SCRIPT.test(script.pathname) ? NODE_FLAGS : [])), '--import', 'tsx', ...(process.env.BENCH_BUILT === '1' ? ['--import', './test/bench/lib/built.mjs'] : [])],
      env: { ...process.env, ...options.env },
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    });
    const child = new Child(name, proc);
    running.add(child);
    proc.once('exit', () => running.delete(child));
    // Without a listener an IPC error (child gone mid-send) would be thrown as an uncaught exception.
    proc.on('error', () => {});
    try {
      const ready = await child.next('ready', options.readyTimeoutMs ?? 60_000);
      return { child, ready };
    } catch (err) {
      await child.stop();
      throw err;
    }
  }

  get exited(): boolean {
    return this.proc.exitCode !== null || this.proc.signalCode !== null;
  }

  send(message: ChildMessage): void {
    if (!this.exited && this.proc.connected) this.proc.send(message);
  }

  /** The next message of `type`; rejects when the child exits first or the time runs out. */
  next(type: string, timeoutMs = 0): Promise<ChildMessage> {
    return new Promise((resolve, reject) => {
      if (this.exited) {
        reject(new Error(`${this.name} is not running (waiting for "${type}")`));
        return;
      }
      let timer: NodeJS.Timeout | undefined;
      const cleanup = () => {
        clearTimeout(timer);
        this.proc.off('message', onMessage);
        this.proc.off('exit', onExit);
      };
      const onMessage = (message: ChildMessage) => {
        if (message?.type !== type) return;
        cleanup();
        resolve(message);
      };
      const onExit = (code: number | null, signal: NodeJS.Signals | null) => {
        cleanup();
        reject(new Error(`${this.name} exited (${signal ?? `code ${code}`}) while waiting for "${type}"`));
      };
      if (timeoutMs > 0) {
        timer = setTimeout(() => {
          cleanup();
          reject(new Error(`${this.name} sent no "${type}" within ${timeoutMs} ms`));
        }, timeoutMs);
      }
      this.proc.on('message', onMessage);
      this.proc.once('exit', onExit);
    });
  }

  /** Sends `message` and waits for the answer of type `answer`. */
  async request(message: ChildMessage, answer: string, timeoutMs = 10_000): Promise<ChildMessage> {
    const reply = this.next(answer, timeoutMs);
    this.send(message);
    return reply;
  }

  /** CPU time (user + system, microseconds) the child has used so far. */
  async cpuMicros(): Promise<number> {
    const reply = await this.request({ type: 'cpu' }, 'cpu');
    const usage = reply.usage as NodeJS.CpuUsage;
    return usage.user + usage.system;
  }

  /**
   * With BENCH_PROFILE_DIR set, profiles this child's CPU until the returned function is called, which
   * writes `<BENCH_PROFILE_DIR>/<label>.cpuprofile` (open it in Chrome DevTools or speedscope) and its
   * flame graph as text beside it (`<label>.txt`, ./profile-text.ts). Without
   * it, does nothing.
   */
  async profile(label: string): Promise<() => Promise<void>> {
    const dir = process.env.BENCH_PROFILE_DIR;
    if (!dir) return async () => {};
    mkdirSync(dir, { recursive: true });
    await this.request({ type: 'profile-start' }, 'profiling');
    const file = join(dir, `${label.replace(/[^A-Za-z0-9._-]+/g, '-').replace(/^-|-$/g, '').slice(0, 120)}.cpuprofile`);
    return async () => {
      const reply = await this.request({ type: 'profile-stop', path: file }, 'profiled', 30_000);
      if (reply.error) throw new Error(`${this.name}: profiling failed: ${String(reply.error)}`);
      if (process.env.BENCH_PROFILE_KIND?.startsWith('heap')) process.stderr.write(`allocation profile of ${this.name} over "${label}": ${file.replace(/\.cpuprofile$/, '.heapprofile')}\n`);
      else process.stderr.write(`profile of ${this.name} over "${label}": ${file} (as text: ${writeProfileText(file)})\n`);
    };
  }

  /** SIGTERM (the child shuts down cleanly), SIGKILL after `timeoutMs`; resolves once it has exited. */
  async stop(timeoutMs = 15_000): Promise<void> {
    if (this.exited) return;
    const exited = new Promise<void>((resolve) => this.proc.once('exit', () => resolve()));
    this.proc.kill('SIGTERM');
    let timer: NodeJS.Timeout | undefined;
    const killed = new Promise<void>((resolve) => {
      timer = setTimeout(() => {
        process.stderr.write(`${this.name} did not stop within ${timeoutMs} ms; killing it\n`);
        this.proc.kill('SIGKILL');
        resolve();
      }, timeoutMs);
    });
    await Promise.race([exited, killed]);
    clearTimeout(timer);
    await exited;
  }

  /** Stops every child still running (on interrupt). */
  static async stopAll(): Promise<void> {
    await Promise.all([...running].map((child) => child.stop(5000)));
  }
}
