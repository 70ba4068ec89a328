import { execFile, execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { chmodSync, chownSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { createServer, connect as tcpConnect, type Server, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { freePort } from './process.js';

/**
 * PostgreSQL and Redis servers of a test file's own, on free ports, that the test may stop and start
 * again (the shared ones on 5432 and 6379 must never be stopped). PostgreSQL runs as the `postgres`
 * user (initdb refuses root) on a data directory under a temporary directory it owns.
 */

const run = promisify(execFile);

interface Teardown {
  teardown(fn: () => unknown): void;
}

function postgresBin(): string {
  const versions = readdirSync('/usr/lib/postgresql').sort((a, b) => Number(b) - Number(a));
  if (versions.length === 0) throw new Error('no PostgreSQL under /usr/lib/postgresql');
  return `/usr/lib/postgresql/${versions[0]}/bin`;
}

/** Runs a PostgreSQL program as the `postgres` user when we are root. */
async function asPostgres(program: string, args: string[]): Promise<void> {
  const path = join(postgresBin(), program);
  if (process.getuid?.() === 0) await run('runuser', ['-u', 'postgres', '--', path, ...args], { timeout: 60_000 });
  else await run(path, args, { timeout: 60_000 });
}

export interface PrivatePostgres {
  port: number;
  /** A URL of a database on it (created by the platform at start). */
  url(database: string): string;
  /** `pg_ctl stop -m immediate`: the server dies as in a crash; connections drop at once. */
  stop(): Promise<void>;
  start(): Promise<void>;
}

/** A fresh cluster on a free port, trusted local connections; stopped and removed when the test ends. */
export async function privatePostgres(t: Teardown): Promise<PrivatePostgres> {
  const dir = mkdtempSync(join(tmpdir(), 'hrs-pg-'));
  const data = join(dir, 'data');
  chmodSync(dir, 0o755);
  if (process.getuid?.() === 0) chownSync(dir, postgresId('-u'), postgresId('-g'));
  await asPostgres('initdb', ['-D', data, '-U', 'postgres', '--auth=trust', '--no-sync', '-E', 'UTF8']);
  const port = await freePort();
  const ctl = (args: string[]) => asPostgres('pg_ctl', ['-D', data, '-w', '-t', '30', ...args]);
  const options = `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1 -c fsync=off -c full_page_writes=off`;
  const start = () => ctl(['-o', options, '-l', join(dir, 'log'), 'start']);
  await start();
  t.teardown(async () => {
    await ctl(['stop', '-m', 'immediate']).catch(() => {});
    rmSync(dir, { recursive: true, force: true });
  });
  return {
    port,
    url: (database) => `postgres://postgres@127.0.0.1:${port}/${database}`,
    stop: () => ctl(['stop', '-m', 'immediate']),
    start,
  };
}

/** The `postgres` user's uid or gid (`id -u postgres`). */
function postgresId(flag: '-u' | '-g'): number {
  return Number(execFileSync('id', [flag, 'postgres'], { encoding: 'utf8' }).trim());
}

export interface PrivateRedis {
  port: number;
  url: string;
  /** Kills the server (SIGKILL): clients see their connections drop. */
  stop(): Promise<void>;
  start(): Promise<void>;
}

/** A Redis without persistence on a free port; killed when the test ends. */
export async function privateRedis(t: Teardown): Promise<PrivateRedis> {
  const port = await freePort();
  let child: ChildProcess | undefined;
  const start = async () => {
    const started = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], { stdio: 'ignore' });
    child = started;
    await untilListening(port);
  };
  const stop = async () => {
    const running = child;
    child = undefined;
    if (!running || running.exitCode !== null) return;
    const exited = new Promise((resolve) => running.once('exit', resolve));
    running.kill('SIGKILL');
    await exited;
  };
  await start();
  t.teardown(stop);
  return { port, url: `redis://127.0.0.1:${port}`, stop, start };
}

async function untilListening(port: number, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const ok = await new Promise<boolean>((resolve) => {
      const socket = tcpConnect(port, '127.0.0.1');
      socket.once('connect', () => (socket.destroy(), resolve(true)));
      socket.once('error', () => resolve(false));
    });
    if (ok) return;
    if (Date.now() > deadline) throw new Error(`nothing listens on ${port} after ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

export interface Blackhole {
  port: number;
  close(): Promise<void>;
}

/** A port that accepts connections and never says anything: a server that hangs. */
export async function blackhole(t: Teardown): Promise<Blackhole> {
  const sockets = new Set<Socket>();
  const server: Server = createServer((socket) => {
    sockets.add(socket);
    socket.on('error', () => {});
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as { port: number }).port;
  const close = async () => {
    for (const socket of sockets) socket.destroy();
    await new Promise((resolve) => server.close(resolve));
  };
  t.teardown(close);
  return { port, close };
}
