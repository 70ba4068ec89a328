import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { isAlive, procStat } from '../local/processes.js';

/**
 * npm as the wrapper of hrs (`npx hrs demo`, `npm exec hrs …`, `npm start`). npm runs the command
 * through its script shell: npm → sh -c → node. It passes SIGINT and SIGTERM on to that shell, which
 * dies of them without passing them on (dash), so a SIGTERM to npm alone would leave hrs running on its
 * own; hrs therefore watches npm and the shell, and stops when either goes. Where the shell hands its
 * process over to the command (bash), hrs is npm's own child and gets a signal sent to the whole process
 * group twice: the group's and npm's copy.
 */

export interface Wrapper {
  /** npm's pid, and the script shell's between npm and hrs when there is one. */
  pids: number[];
  /** npm is hrs's parent: a signal sent to the group comes twice. */
  direct: boolean;
}

/** The parent pid and command line of a process (from /proc, else from `ps`), or undefined when it is gone. */
export interface ProcessFacts {
  parentOf(pid: number): number | undefined;
  commandLine(pid: number): string[] | undefined;
}

const systemFacts: ProcessFacts = {
  parentOf(pid) {
    const fields = procStat(pid);
    return fields ? Number(fields[1]) : Number(ps(pid, 'ppid=')) || undefined;
  },
  commandLine(pid) {
    try {
      return readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').filter((arg) => arg !== '');
    } catch {
      const line = ps(pid, 'command=');
      return line ? line.split(' ') : undefined;
    }
  },
};

function ps(pid: number, field: string): string {
  try {
    return execFileSync('ps', ['-o', field, '-p', String(pid)], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim();
  } catch {
    return '';
  }
}

/** npm sets its process title to `npm exec hrs demo`; its command line may also name npm-cli.js or npx-cli.js. */
function isNpm(args: string[] | undefined, npmPath: string | undefined): boolean {
  if (!args || args.length === 0) return false;
  const first = args[0]!;
  if (first === 'npm' || first === 'npx' || first.startsWith('npm ') || first.startsWith('npx ')) return true;
  return args.slice(0, 2).some((arg) => arg === npmPath || /(^|\/)np[mx]-cli\.js$/.test(arg));
}

/** The npm process that runs this one (as its parent, or through its script shell), if any. */
export function npmWrapper(env: Record<string, string | undefined>, pid = process.pid, facts: ProcessFacts = systemFacts): Wrapper | undefined {
  // npm tells its commands it runs them; without that, a parent is never taken for npm.
  if (env.npm_execpath === undefined && env.npm_command === undefined) return undefined;
  const parent = facts.parentOf(pid);
  if (parent === undefined || parent <= 1) return undefined;
  if (isNpm(facts.commandLine(parent), env.npm_execpath)) return { pids: [parent], direct: true };
  const grandparent = facts.parentOf(parent);
  if (grandparent === undefined || grandparent <= 1) return undefined;
  if (isNpm(facts.commandLine(grandparent), env.npm_execpath)) return { pids: [parent, grandparent], direct: false };
  return undefined;
}

/** Alive and not a zombie waiting to be reaped (where /proc tells). */
function running(pid: number): boolean {
  return isAlive(pid) && procStat(pid)?.[0] !== 'Z';
}

/** How long a wrapper's exit waits before it counts: a signal that made npm exit is taken first. */
const SETTLE_MS = 50;

/**
 * Calls `gone` once when a process of the wrapper exits (checked every `everyMs`); returns the unwatch.
 * A signal sent to the whole group reaches npm and hrs together, and npm exits at once: seen a moment
 * later, its exit is not taken for a stop of its own when the signal's handler has run meanwhile (the
 * unwatch it calls cancels it), so the stop's reason is the signal, and no second stop is counted.
 */
export function watchWrapper(wrapper: Wrapper, gone: () => void, everyMs = 500): () => void {
  const parent = process.ppid;
  let settling: NodeJS.Timeout | undefined;
  const timer = setInterval(() => {
    if (process.ppid === parent && wrapper.pids.every(running)) return;
    clearInterval(timer);
    settling = setTimeout(gone, SETTLE_MS);
  }, everyMs);
  timer.unref();
  return () => {
    clearInterval(timer);
    clearTimeout(settling);
  };
}
