import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { accessSync, constants, existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { connect } from 'node:net';
import { delimiter, isAbsolute, join } from 'node:path';
import { promisify } from 'node:util';
import { adopt, freePort, isAlive, sleep, stopChild, waitForExit } from './processes.js';
import { ensureStateDir } from './state.js';
import type { LocalServer } from './server.js';

/**
 * A private Redis: `redis-server` from the PATH when there is one, otherwise the one redis-memory-server
 * obtains and builds (once, into the state folder). BullMQ and the rate limiter's Lua scripts need a
 * real Redis, so there is no in-process imitation.
 */

const run = promisify(execFile);

export interface RedisBinary {
  path: string;
  /** `redis-server from the PATH (/usr/bin/redis-server)` */
  origin: string;
}

/** The first executable `redis-server` on `searchPath`. */
export function redisOnPath(searchPath = process.env.PATH ?? ''): string | undefined {
  return commandOnPath('redis-server', searchPath);
}

/** The first executable `name` on `searchPath` (an absolute path: itself, when executable). */
function commandOnPath(name: string, searchPath: string): string | undefined {
  const candidates = isAbsolute(name)
    ? [name]
    : searchPath
        .split(delimiter)
        .filter((folder) => folder !== '')
        .map((folder) => join(folder, process.platform === 'win32' ? `${name}.exe` : name));
  for (const candidate of candidates) {
    try {
      accessSync(candidate, constants.X_OK);
      return candidate;
    } catch {
      // not here
    }
  }
  return undefined;
}

/** Where redis-memory-server leaves the Redis it built in the state folder `dir`. */
function builtRedis(dir: string): string {
  return join(dir, 'redis-bin', 'stable', 'redis-server');
}

/** What to install where there is neither a Redis nor a way to build one. */
export const REDIS_INSTALL_HINT =
  'install redis-server (apt install redis-server, dnf install redis, brew install redis) or make and a C compiler ' +
  '(apt install build-essential) to build one, or set REDIS_URL to a running Redis';

/**
 * What building Redis from source lacks on `searchPath`: `make`, and the C compiler its build runs
 * (`$CC`, else `cc`). Empty where both are there (the download may still fail: that is said when it does).
 */
export function missingBuildTools(searchPath = process.env.PATH ?? '', cc = process.env.CC): string[] {
  const compiler = cc?.trim().split(/\s+/)[0] || 'cc';
  return [
    ...(commandOnPath('make', searchPath) ? [] : ['make']),
    ...(commandOnPath(compiler, searchPath) ? [] : [`C compiler (${compiler})`]),
  ];
}

/**
 * Throws a one-line `LocalRedisError` saying what to install when there is no `redis-server` on the
 * PATH, none built in the state folder before, and no way to build one: checked before anything starts.
 */
export function ensureRedisObtainable(dir: string, searchPath = process.env.PATH ?? '', cc = process.env.CC): void {
  if (redisOnPath(searchPath) || existsSync(builtRedis(dir))) return;
  const missing = missingBuildTools(searchPath, cc);
  if (missing.length === 0) return;
  throw new LocalRedisError(`no redis-server on the PATH, and no ${missing.join(' and no ')} to build one: ${REDIS_INSTALL_HINT}`);
}

/**
 * `redis-server` from the PATH, else through redis-memory-server, which downloads Redis's source and
 * builds it into `<dir>/redis-bin` the first time (it needs network access, make and a C compiler),
 * then finds it there.
 */
export async function findRedis(dir: string, say: (line: string) => void = () => {}, searchPath?: string): Promise<RedisBinary> {
  const onPath = redisOnPath(searchPath);
  if (onPath) return { path: onPath, origin: `${onPath} from the PATH` };
  ensureRedisObtainable(dir, searchPath);
  const downloadDir = join(dir, 'redis-bin');
  if (!existsSync(builtRedis(dir))) {
    say(`No redis-server on the PATH: redis-memory-server is downloading and building Redis into ${downloadDir} (once; a minute or two).`);
  }
  const { RedisBinary } = await import('redis-memory-server');
  let path: string;
  try {
    path = await RedisBinary.getPath({ downloadDir, version: 'stable' });
  } catch (err) {
    throw new LocalRedisError(
      `no redis-server on the PATH and redis-memory-server could not build one (${(err as Error).message.split('\n')[0]}): ${REDIS_INSTALL_HINT}`,
    );
  }
  return { path, origin: `${path}, built by redis-memory-server` };
}

export interface RedisOptions {
  /** The state folder: data in `redis/`, log in `redis.log`, password in `redis.password`. */
  dir: string;
  port?: number;
  /** Nothing kept on disk (test runs). */
  ephemeral?: boolean;
  /** Where to look for redis-server (default: the PATH). */
  searchPath?: string;
  /** Told when Redis must be built first. */
  say?: (line: string) => void;
}

export class LocalRedisError extends Error {
  override readonly name = 'LocalRedisError';
}

export class LocalRedis implements LocalServer {
  readonly name = 'Redis';
  readonly dataDir: string;
  private child: ChildProcess | undefined;
  private readonly onExit = () => this.child?.kill('SIGTERM');

  private constructor(
    private readonly binary: RedisBinary,
    readonly version: string,
    private readonly options: RedisOptions,
    private readonly password: string,
    public port: number,
  ) {
    this.dataDir = join(options.dir, 'redis');
  }

  get origin(): string {
    return this.binary.origin;
  }

  get pid(): number {
    return this.child?.pid ?? 0;
  }

  get url(): string {
    return `redis://:${encodeURIComponent(this.password)}@127.0.0.1:${this.port}`;
  }

  static async start(options: RedisOptions): Promise<LocalRedis> {
    ensureStateDir(options.dir);
    const binary = await findRedis(options.dir, options.say, options.searchPath);
    const printed = (await run(binary.path, ['--version'])).stdout; // "Redis server v=7.0.15 sha=…"
    const version = /v=(\S+)/.exec(printed)?.[1] ?? 'unknown';
    const dataDir = join(options.dir, 'redis');
    mkdirSync(dataDir, { recursive: true, mode: 0o700 });
    await stopOrphanRedis(join(dataDir, 'redis.pid'));
    const server = new LocalRedis(binary, version, options, secret(join(options.dir, 'redis.password')), await freePort(options.port));
    await server.start();
    return server;
  }

  /** Starts the server (again) on its port; resolves once it answers PING (after loading its data). */
  async start(): Promise<void> {
    if (this.child && this.child.exitCode === null && this.child.signalCode === null) return;
    const log = join(this.options.dir, 'redis.log');
    for (let attempt = 0; ; attempt++) {
      const conf = join(this.dataDir, 'redis.conf');
      writeFileSync(conf, this.configuration(log), { mode: 0o600 });
      const child = spawn(this.binary.path, [conf], { detached: true, stdio: 'ignore' });
      child.unref();
      adopt(child, { orderly: 'SIGTERM', now: 'SIGTERM' });
      this.child = child;
      process.on('exit', this.onExit);
      const ready = await this.untilReady(child);
      if (ready === true) return;
      if (attempt === 0 && /Address already in use/i.test(lastLines(log))) {
        this.port = await freePort();
        continue;
      }
      throw new LocalRedisError(`the local Redis did not start: ${ready}: ${lastLines(log)} (its log: ${log})`);
    }
  }

  private configuration(log: string): string {
    const quote = (value: string) => `"${value.replace(/\\/g, '\\\\').replace(/"/g, '\\"')}"`;
    const durable = !this.options.ephemeral;
    return [
      `port ${this.port}`,
      'bind 127.0.0.1',
      'protected-mode yes',
      'daemonize no',
      `dir ${quote(this.dataDir)}`,
      `pidfile ${quote(join(this.dataDir, 'redis.pid'))}`,
      `logfile ${quote(log)}`,
      `requirepass ${quote(this.password)}`,
      `appendonly ${durable ? 'yes' : 'no'}`,
      'appendfsync everysec',
      'save ""',
      '',
    ].join('\n');
  }

  /**
   * The wait PostgreSQL's start has too (./postgres.ts), by other means: a PING answered instead of a
   * connection, and a server that never answers killed outright (it has no WAL to leave consistent).
   */
  private async untilReady(child: ChildProcess): Promise<true | string> {
    const deadline = Date.now() + 60_000;
    for (;;) {
      if (child.exitCode !== null || child.signalCode !== null) return `it exited (${child.signalCode ?? `code ${child.exitCode}`})`;
      if ((await ping(this.port, this.password)) === 'PONG') return true;
      if (Date.now() > deadline) {
        child.kill('SIGKILL');
        return 'it did not answer PING within 60 s';
      }
      await sleep(50);
    }
  }

  /** `term` (the default): Redis writes what it holds and exits. `kill`: it dies at once (outage tests). */
  async stop(mode: 'term' | 'kill' = 'term'): Promise<void> {
    const child = this.child;
    try {
      await stopChild(child, mode === 'term' ? 'SIGTERM' : 'SIGKILL', mode === 'term' ? 60_000 : 10_000);
    } finally {
      if (this.child === child) {
        this.child = undefined;
        process.off('exit', this.onExit);
      }
    }
  }
}

/** A generated password kept in `file` (0600), made the first time. */
function secret(file: string): string {
  try {
    const kept = readFileSync(file, 'utf8').trim();
    if (kept) return kept;
  } catch {
    // first run
  }
  const made = randomBytes(18).toString('base64url');
  writeFileSync(file, `${made}\n`, { mode: 0o600 });
  return made;
}

/** AUTH then PING over a raw socket: `PONG`, or what came back instead (`LOADING …` while the AOF loads). */
function ping(port: number, password: string): Promise<string> {
  return new Promise((done) => {
    const socket = connect({ host: '127.0.0.1', port });
    let reply = '';
    const finish = (answer: string) => {
      socket.destroy();
      done(answer);
    };
    socket.setTimeout(2000, () => finish('no answer'));
    socket.once('error', (err) => finish(err.message));
    socket.on('data', (chunk) => {
      reply += chunk.toString('latin1');
      const lines = reply.split('\r\n');
      if (lines.length < 3) return;
      finish(lines[1] === '+PONG' ? 'PONG' : lines.slice(0, 2).join(' '));
    });
    socket.once('connect', () => {
      const auth = Buffer.byteLength(password);
      socket.write(`*2\r\n$4\r\nAUTH\r\n$${auth}\r\n${password}\r\n*1\r\n$4\r\nPING\r\n`);
    });
  });
}

function lastLines(path: string, count = 2): string {
  try {
    return readFileSync(path, 'utf8').trimEnd().split('\n').slice(-count).join(' | ');
  } catch {
    return 'no log';
  }
}

/** A Redis a killed hrs process left running on this data folder is told to shut down first. */
export async function stopOrphanRedis(pidfile: string): Promise<void> {
  let pid: number;
  try {
    pid = Number(readFileSync(pidfile, 'utf8').trim());
  } catch {
    return;
  }
  if (!Number.isInteger(pid) || pid <= 0 || !isAlive(pid) || !isRedis(pid)) {
    rmSync(pidfile, { force: true });
    return;
  }
  process.kill(pid, 'SIGTERM');
  if (!(await waitForExit(pid, 30_000))) {
    process.kill(pid, 'SIGKILL');
    await waitForExit(pid, 5_000);
  }
}

function isRedis(pid: number): boolean {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes('redis-server');
  } catch (err) {
    return (err as NodeJS.ErrnoException).code !== 'ENOENT' || !existsSync('/proc/self');
  }
}
