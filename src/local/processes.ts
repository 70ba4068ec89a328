import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { readFileSync, statSync } from 'node:fs';
import { connect, createServer } from 'node:net';
import { dirname, resolve } from 'node:path';

/**
 * Process and file-system facts the local servers need: whether a pid lives, a free port, whether a
 * TCP port answers, how a started server is stopped, and, when we run as root, the unprivileged user
 * PostgreSQL must run as and whether that user can reach a path.
 */

/** True while a process with this pid exists (signal 0 only asks). */
export function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    // EPERM: it exists but belongs to another user.
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * The fields of /proc/PID/stat after the command name (state, ppid, pgrp, session, tty_nr, tpgid, …),
 * or undefined where /proc cannot tell. The name, in parentheses, may itself hold spaces and parentheses.
 */
export function procStat(pid: number | 'self'): string[] | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  } catch {
    return undefined;
  }
}

/** Waits until the pid is gone; false when it still lives after `timeoutMs`. */
export async function waitForExit(pid: number, timeoutMs: number): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (isAlive(pid)) {
    if (Date.now() > deadline) return false;
    await sleep(50);
  }
  return true;
}

export const sleep = (ms: number) => new Promise<void>((done) => setTimeout(done, ms));

/**
 * Sends `signal` to a child that still runs and waits until it exits (SIGKILL after `killAfterMs`).
 * Called again while the child stops (a second signal hurrying the shutdown), it sends the new signal
 * and waits for the same exit.
 */
export async function stopChild(child: ChildProcess | undefined, signal: NodeJS.Signals, killAfterMs = 60_000): Promise<void> {
  if (!child || child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((done) => child.once('exit', done));
  child.kill(signal);
  const timer = setTimeout(() => child.kill('SIGKILL'), killAfterMs);
  await exited;
  clearTimeout(timer);
}

/** How a server this process started is stopped: in order, and at once. */
export interface StopSignals {
  /** PostgreSQL: SIGINT (fast: clients disconnected, a checkpoint); Redis: SIGTERM. */
  orderly: NodeJS.Signals;
  /** PostgreSQL: SIGQUIT (immediate, as in a crash: the next start recovers from its WAL). */
  now: NodeJS.Signals;
}

/** The servers this process started and that still run (they run detached, out of the terminal's reach). */
const children = new Map<ChildProcess, StopSignals>();

/**
 * Registers a started server until it exits, for {@link stopChildren}, and gives it a watchdog: a shell
 * reading a pipe from this process. Should this process end without stopping the server (SIGKILL, a
 * crash), the pipe closes and the watchdog sends the server its orderly stop signal; once the server
 * has exited, the watchdog is told so and exits too.
 */
export function adopt(child: ChildProcess, signals: StopSignals): void {
  if (child.pid === undefined || child.exitCode !== null || child.signalCode !== null) return;
  children.set(child, signals);
  const watchdog = spawn('/bin/sh', ['-c', WATCHDOG, signals.orderly.slice(3), String(child.pid)], { detached: true, stdio: ['pipe', 'ignore', 'ignore'] });
  watchdog.on('error', () => {}); // no /bin/sh: the next start stops a server left running (stopOrphan…)
  watchdog.stdin?.on('error', () => {});
  watchdog.unref();
  (watchdog.stdin as unknown as { unref?(): void } | null)?.unref?.();
  child.once('exit', () => {
    children.delete(child);
    watchdog.stdin?.end('stopped\n');
  });
}

/** `$0` the signal's name, `$1` the server's pid: signalled unless the line says it has stopped. */
const WATCHDOG = 'read -r said; [ "$said" = stopped ] || kill -s "$0" "$1" 2>/dev/null';

/**
 * Stops every server this process started and that still runs, and waits until they have exited:
 * in order, or at once (a second signal; also while an orderly stop is under way).
 */
export async function stopChildren(now: boolean): Promise<void> {
  await Promise.all([...children].map(([child, signals]) => stopChild(child, now ? signals.now : signals.orderly, now ? 10_000 : 60_000)));
}

/** True when something accepts a TCP connection on host:port within `timeoutMs`. */
export function answers(host: string, port: number, timeoutMs = 1000): Promise<boolean> {
  return new Promise((done) => {
    const socket = connect({ host, port });
    const finish = (ok: boolean) => {
      socket.destroy();
      done(ok);
    };
    socket.setTimeout(timeoutMs, () => finish(false));
    socket.once('connect', () => finish(true));
    socket.once('error', () => finish(false));
  });
}

/** `preferred` when nothing listens on it on 127.0.0.1, otherwise a port the system picks. */
export async function freePort(preferred?: number): Promise<number> {
  if (preferred !== undefined && preferred > 0) {
    const port = await bind(preferred).catch(() => undefined);
    if (port !== undefined) return port;
  }
  return bind(0);
}

function bind(port: number): Promise<number> {
  return new Promise((done, fail) => {
    const server = createServer();
    server.once('error', fail);
    server.listen({ port, host: '127.0.0.1', exclusive: true }, () => {
      const bound = (server.address() as { port: number }).port;
      server.close(() => done(bound));
    });
  });
}

export interface ServerUser {
  name: string;
  uid: number;
  gid: number;
}

/**
 * The user PostgreSQL runs as. initdb and postgres refuse root, so as root it is the `postgres` user
 * when the system has one, otherwise `nobody`; as anyone else it is that user (no switch).
 */
export function serverUser(): ServerUser | undefined {
  if (process.getuid?.() !== 0) return undefined;
  for (const name of ['postgres', 'nobody']) {
    const ids = idsOf(name);
    if (ids) return { name, ...ids };
  }
  throw new Error('PostgreSQL will not run as root and this system has neither a "postgres" nor a "nobody" user: run as another user, or set DATABASE_URL');
}

function idsOf(name: string): { uid: number; gid: number } | undefined {
  try {
    const uid = Number(execFileSync('id', ['-u', name], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim());
    const gid = Number(execFileSync('id', ['-g', name], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim());
    return Number.isInteger(uid) && Number.isInteger(gid) ? { uid, gid } : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Whether `user` may pass through every folder above `path` (and the path itself when it is a
 * folder): the owner, group or other execute bit that applies. Supplementary groups and ACLs are not
 * consulted, so a "no" may be too strict, never too lenient.
 */
export function reachable(path: string, user: ServerUser): boolean {
  let current = resolve(path);
  for (;;) {
    let stat;
    try {
      stat = statSync(current);
    } catch {
      stat = undefined; // not created yet: its parents decide
    }
    if (stat?.isDirectory()) {
      const bit = stat.uid === user.uid ? 0o100 : stat.gid === user.gid ? 0o010 : 0o001;
      if ((stat.mode & bit) === 0) return false;
    }
    const parent = dirname(current);
    if (parent === current) return true;
    current = parent;
  }
}
