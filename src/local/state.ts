import { chmodSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { isAbsolute, join, resolve } from 'node:path';
import { isAlive } from './processes.js';

/**
 * The state folder of the local servers (PostgreSQL's and Redis's data, their logs, and which hrs
 * process runs them):
 * - `HRS_STATE_DIR` when set (a relative path is taken from the working folder);
 * - else `$XDG_STATE_HOME/hrs` when XDG_STATE_HOME is an absolute path (the XDG rule);
 * - else, as root, `/var/lib/hrs`: root's home is private, and PostgreSQL runs as another user that
 *   must reach its data;
 * - else `~/.local/state/hrs`.
 */
export function stateDir(env: Record<string, string | undefined> = process.env): string {
  if (env.HRS_STATE_DIR) return resolve(env.HRS_STATE_DIR);
  if (env.XDG_STATE_HOME && isAbsolute(env.XDG_STATE_HOME)) return join(env.XDG_STATE_HOME, 'hrs');
  if (process.getuid?.() === 0) return '/var/lib/hrs';
  return join(homedir(), '.local', 'state', 'hrs');
}

/** Creates the state folder; 0755 so that PostgreSQL's own user can pass through it when we are root. */
export function ensureStateDir(dir: string): void {
  mkdirSync(dir, { recursive: true, mode: 0o755 });
}

/** What a running hrs process tells others about the local servers it owns (`servers.json`, 0600). */
export interface RunningServers {
  /** The hrs process that started them and stops them. */
  pid: number;
  postgres?: { url: string; port: number; pid: number };
  redis?: { url: string; port: number; pid: number };
}

/** Ports the servers had last time, so a user's saved connection keeps working when they are free. */
interface Remembered {
  postgres?: number;
  redis?: number;
}

const SERVERS = 'servers.json';
const PORTS = 'ports.json';
const LOCK = 'owner.pid';

function readJson<T>(path: string): T | undefined {
  try {
    return JSON.parse(readFileSync(path, 'utf8')) as T;
  } catch {
    return undefined;
  }
}

function writeJson(path: string, value: unknown, mode: number): void {
  const temporary = `${path}.${process.pid}.tmp`;
  writeFileSync(temporary, `${JSON.stringify(value, null, 2)}\n`, { mode });
  chmodSync(temporary, mode);
  renameSync(temporary, path);
}

/** The servers a live hrs process runs from this folder, if any. */
export function runningServers(dir: string): RunningServers | undefined {
  const found = readJson<RunningServers>(join(dir, SERVERS));
  return found && Number.isInteger(found.pid) && isAlive(found.pid) ? found : undefined;
}

export function rememberedPorts(dir: string): Remembered {
  return readJson<Remembered>(join(dir, PORTS)) ?? {};
}

/** Raised when another live hrs process owns the local servers of a state folder. */
export class StateInUseError extends Error {
  override readonly name = 'StateInUseError';
  constructor(
    readonly dir: string,
    readonly pid: number,
  ) {
    super(`the local servers in ${dir} belong to another hrs process (pid ${pid}): stop it, or set HRS_STATE_DIR to another folder`);
  }
}

/**
 * This process's claim on a state folder: one hrs process at a time starts, owns and stops its
 * servers. A claim left by a process that died is taken over (its orphaned servers are stopped by
 * whoever starts them next).
 */
export class StateClaim {
  /** The claims this process holds, for {@link StateClaim.releaseAll}. */
  private static readonly held = new Set<StateClaim>();
  private released = false;

  private constructor(readonly dir: string) {
    StateClaim.held.add(this);
  }

  /** Releases every claim of this process (once its servers have stopped). */
  static releaseAll(): void {
    for (const claim of StateClaim.held) claim.release();
  }

  static take(dir: string): StateClaim {
    ensureStateDir(dir);
    const lock = join(dir, LOCK);
    for (let attempt = 0; attempt < 3; attempt++) {
      try {
        writeFileSync(lock, `${process.pid}\n`, { flag: 'wx', mode: 0o644 });
        return new StateClaim(dir);
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
      }
      const owner = Number(readFileSync(lock, 'utf8').trim());
      if (Number.isInteger(owner) && owner > 0 && owner !== process.pid && isAlive(owner)) throw new StateInUseError(dir, owner);
      rmSync(lock, { force: true });
    }
    throw new Error(`could not claim ${dir}: its ${LOCK} keeps reappearing`);
  }

  /** Publishes the running servers' addresses (with their passwords: 0600) and remembers the ports. */
  publish(servers: Omit<RunningServers, 'pid'>): void {
    writeJson(join(this.dir, SERVERS), { pid: process.pid, ...servers }, 0o600);
    const ports: Remembered = { ...rememberedPorts(this.dir) };
    if (servers.postgres) ports.postgres = servers.postgres.port;
    if (servers.redis) ports.redis = servers.redis.port;
    writeJson(join(this.dir, PORTS), ports, 0o644);
  }

  release(): void {
    if (this.released) return;
    this.released = true;
    StateClaim.held.delete(this);
    rmSync(join(this.dir, SERVERS), { force: true });
    rmSync(join(this.dir, LOCK), { force: true });
  }
}

/** The live owner of a state folder, if any (for `hrs reset-local`). */
export function stateOwner(dir: string): number | undefined {
  try {
    const pid = Number(readFileSync(join(dir, LOCK), 'utf8').trim());
    return Number.isInteger(pid) && pid > 0 && isAlive(pid) ? pid : undefined;
  } catch {
    return undefined;
  }
}
