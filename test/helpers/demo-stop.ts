import { chmodSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Test } from 'tap';
import { HRS, freePort, start, type Running } from './process.js';
import { until } from './wait.js';

/**
 * `hrs demo --embedded` started as a user does (through `npx`, or `node bin/hrs.js`) in a process
 * group of its own, as a terminal runs it, and what is left of it after it was told to stop: every
 * process it ran (npm, the script shell, node, PostgreSQL and its workers, redis-server) is recorded
 * while it runs, and must be gone afterwards.
 */

export interface Proc {
  pid: number;
  ppid: number;
  pgid: number;
  /** R, S, Z (a zombie: exited, not yet reaped) … */
  state: string;
  args: string[];
}

/** Every process of the machine, from /proc. */
export function processes(): Proc[] {
  const found: Proc[] = [];
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const stat = readFileSync(`/proc/${name}/stat`, 'utf8');
      const [state, ppid, pgid] = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      const args = readFileSync(`/proc/${name}/cmdline`, 'utf8').split('\0').filter((a) => a !== '');
      found.push({ pid: Number(name), ppid: Number(ppid), pgid: Number(pgid), state: state!, args });
    } catch {
      // exited meanwhile
    }
  }
  return found;
}

/** `root` and every process below it. */
export function tree(root: number, all = processes()): Proc[] {
  const found = all.filter((p) => p.pid === root);
  for (let i = 0; i < found.length; i++) found.push(...all.filter((p) => p.ppid === found[i]!.pid));
  return found;
}

const running = (p: Proc) => p.state !== 'Z';

/** These tests read processes from /proc, and run npm's script shell as bash too. */
export const unsupported = !existsSync('/proc/self/stat') ? 'needs /proc' : !existsSync('/bin/bash') ? 'needs /bin/bash' : false;

/** A state folder for the file's demos: PostgreSQL's cluster is made by the first and reused. */
export function stateFolder(t: Test): string {
  const state = mkdtempSync(join(tmpdir(), 'hrs-stop-'));
  chmodSync(state, 0o755); // as root, PostgreSQL's own user must enter it
  t.teardown(() => rmSync(state, { recursive: true, force: true }));
  return state;
}

export interface DemoOptions {
  /** `npx hrs demo` (npm, its script shell, node) or `node bin/hrs.js demo`. */
  via: 'npx' | 'node';
  /** npm's script shell: /bin/sh (dash here: it stays between npm and node) or /bin/bash (it hands over to node). */
  shell?: string;
  env?: Record<string, string>;
  /** Resolve once this appears in the output (default: the banner's last line). */
  ready?: RegExp;
}

export class Demo {
  /** Every process of the demo seen while it ran. */
  readonly seen = new Map<number, Proc>();
  private logFrom = 0;

  private constructor(
    readonly launched: Running,
    readonly state: string,
  ) {}

  /** The launched process (npm or node): the leader of the demo's process group. */
  get group(): number {
    return this.launched.child.pid!;
  }

  static async start(t: Test, state: string, options: DemoOptions): Promise<Demo> {
    const args = ['demo', '--embedded', '--interval', '3600'];
    const env = {
      DATABASE_URL: undefined,
      REDIS_URL: undefined,
      HRS_STATE_DIR: state,
      PORT: String(await freePort()),
      LOG_LEVEL: 'info',
      // npx runs the project's own bin: nothing to fetch.
      npm_config_offline: 'true',
      npm_config_update_notifier: 'false',
      npm_config_script_shell: options.shell ?? '/bin/sh',
      ...options.env,
    };
    const launched =
      options.via === 'npx' ? start('npx', ['hrs', ...args], env, { detached: true }) : start(process.execPath, [HRS, ...args], env, { detached: true });
    const demo = new Demo(launched, state);
    demo.logFrom = logSize(join(state, 'postgres.log'));
    t.teardown(() => demo.kill());
    const ready = options.ready ?? /Stop with Ctrl-C/;
    await until('the demo to start', () => (ready.test(launched.output()) ? true : launched.child.exitCode !== null ? false : undefined), 120_000, 100);
    // What it printed, when it did not start: the failure says why.
    t.equal(launched.child.exitCode, null, 'the demo runs', launched.child.exitCode === null ? {} : { output: launched.output().slice(-4000) });
    demo.record();
    return demo;
  }

  /** Records the demo's processes as they are now. */
  record(): Proc[] {
    const now = tree(this.group);
    for (const p of now) this.seen.set(p.pid, p);
    return now;
  }

  /** The node process running hrs. */
  node(): Proc {
    const node = this.record().find((p) => /(^|\/)node$/.test(p.args[0]!) && p.args.some((a) => /\/\.?bin\/hrs(\.js)?$/.test(a)));
    if (!node) throw new Error(`no node process in ${JSON.stringify([...this.seen.values()].map((p) => p.args.join(' ')))}`);
    return node;
  }

  /** What is left: processes seen while it ran that still run, and any other in its group or naming its state folder. */
  left(): Proc[] {
    return processes().filter((p) => running(p) && (this.seen.has(p.pid) || p.pgid === this.group || p.args.some((a) => a.includes(this.state))));
  }

  /** Waits until nothing of the demo runs (at most `ms`); returns what is still left then. */
  async leftAfter(ms: number): Promise<string[]> {
    try {
      await until('no process of the demo left', () => (this.left().length === 0 ? true : undefined), ms, 100);
    } catch {
      // reported by the caller
    }
    return this.left().map((p) => `${p.pid} ${p.args.join(' ')}`);
  }

  /** What PostgreSQL logged since the demo started. */
  postgresLog(): string {
    try {
      return readFileSync(join(this.state, 'postgres.log'), 'utf8').slice(this.logFrom);
    } catch {
      return '';
    }
  }

  /** Teardown: whatever a failed test left is killed. */
  kill(): void {
    for (const p of this.left()) {
      try {
        process.kill(p.pid, 'SIGKILL');
      } catch {
        // gone
      }
    }
  }
}

function logSize(path: string): number {
  try {
    return statSync(path).size;
  } catch {
    return 0;
  }
}

/** Sends a signal to a process or (negative) a process group, ignoring one already gone. */
export function signal(pid: number, name: NodeJS.Signals): void {
  try {
    process.kill(pid, name);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ESRCH') throw err;
  }
}

/** The demo stopped in order: nothing of it left, PostgreSQL had a fast shutdown, no signal taken for a second one. */
export async function stoppedInOrder(t: Test, demo: Demo): Promise<void> {
  await demo.launched.exited;
  t.same(await demo.leftAfter(20_000), [], 'no process of the demo is left');
  const log = demo.postgresLog();
  t.match(log, /received fast shutdown request/, 'PostgreSQL was stopped in order');
  t.notMatch(log, /immediate shutdown request/, 'not at once');
  t.notMatch(demo.launched.output(), /second signal/, 'no signal was taken for a second one');
}
