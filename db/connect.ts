import { connect as dial, type Socket } from 'node:net';
import postgres from 'postgres';
import { redactUrl } from '../src/config/config.js';
import { databaseHosts, databaseName as nameIn, isHostList, sessionAttrs, withDatabase, type DatabaseAddress } from '../src/config/database-url.js';
import { bounded, PoolConnections } from './deadline.js';
import { DatabaseUnavailableError } from './errors.js';

export type Sql = postgres.Sql;
export type Tx = postgres.TransactionSql;
/** A piece of SQL made with `sql`…`` to nest in another statement (a WHERE condition, say). */
export type Fragment = postgres.PendingQuery<postgres.Row[]>;

export { DatabaseTimeoutError, DatabaseUnavailableError } from './errors.js';

const HOW_TO_START =
  'start one (`pg_ctlcluster <version> main start`, `docker compose up -d postgres`), point DATABASE_URL at a running ' +
  'server, or leave DATABASE_URL unset and run `hrs serve` or `hrs demo`, which start a local one that other hrs commands then use';

/** How long the platform waits on PostgreSQL (DATABASE_TIMEOUT) before it answers that it is unavailable. */
export interface DatabaseTimeouts {
  /** Bounds connecting and each statement, in milliseconds; unset: connecting within 5 s, statements unbounded. */
  timeoutMs?: number;
}

/** The longest a pool waits before trying to connect again after failures: a request never waits out a long backoff. */
const MAX_RECONNECT_DELAY_S = 0.05;

/**
 * A pool. With `timeoutMs`, connecting, every statement and every transaction are bounded by it: by
 * the platform itself (db/deadline.ts: waiting for a connection included, whatever state the server
 * is in, and a transaction answered with an error never commits later) and by the server (a statement
 * running longer is cancelled), idle connections are closed after a
 * minute (a connection the server dropped is noticed before it is used) and reconnecting after a failure
 * is tried again within 50 ms: requests queued in the pool during an outage fail one per attempt, so
 * they must not wait out a long backoff (postgres.js backs off up to 20 s by default), and the first
 * request after it connects at once.
 */
export function connect(url: string, options: postgres.Options<{}> & DatabaseTimeouts = {}): Sql {
  const { timeoutMs, ...given } = options;
  const rest = { ...primaryOnly(url), ...given };
  const serverBounds: postgres.Options<{}> =
    timeoutMs === undefined
      ? {}
      : {
          connect_timeout: timeoutMs / 1000,
          idle_timeout: 60,
          backoff: (retries: number) => Math.min(0.01 * 2 ** retries, MAX_RECONNECT_DELAY_S),
          // A little under the client's own deadline (db/deadline.ts), so that a server that runs
          // cancels a slow statement itself, before the client has to give up on the connection.
          connection: { statement_timeout: Math.max(1, Math.floor(timeoutMs * 0.9)) },
        };
  if (timeoutMs === undefined) return postgres(url, { max: 10, onnotice: () => {}, connect_timeout: 5, ...rest });
  const connections = new PoolConnections();
  const pool = postgres(url, { max: 10, onnotice: () => {}, connect_timeout: 5, ...serverBounds, ...rest, onclose: connections.closed });
  const sql = bounded(pool, timeoutMs, connections);
  timeouts.set(sql, timeoutMs);
  return sql;
}

const timeouts = new WeakMap<Sql, number>();

/**
 * `target_session_attrs=read-write` of a host list, as postgres.js must be told it. postgres.js 3.4
 * decides "read-write" from `default_transaction_read_only` alone, which a hot standby of PostgreSQL 14
 * or later reports as off: it would keep a connection to the standby and every write there would fail.
 * "primary" asks what libpq's read-write also checks, whether the server is in hot standby
 * (`in_hot_standby`, or `pg_is_in_recovery()` on older servers), so the pool connects to the primary
 * only, tries the hosts in turn while there is none (a failover), and holds its queries meanwhile
 * (each bounded by DATABASE_TIMEOUT, db/deadline.ts). The hosts of a list are dialled by hostDialer.
 */
function primaryOnly(url: string): postgres.Options<{}> {
  const hosts = isHostList(url) ? databaseHosts(url) : undefined;
  return {
    ...(sessionAttrs(url) === 'read-write' ? { target_session_attrs: 'primary' as const } : {}),
    ...(hosts ? { socket: hostDialer(hosts) } : {}),
  };
}

/**
 * A connection closed sooner than this after it was opened, or that never heard from its server, did
 * not yield a session (refused, unreachable, silent, or not the primary).
 */
const SETTLED_MS = 100;
/** While every host failed in turn: the least time between two attempts of a pool, per host. */
const RETRY_EVERY_MS = 25;

/**
 * Opens the connections of a pool on a host list (postgres.js's `socket` option). postgres.js itself
 * tries the next host on every new connection (so half of them first open a session on the standby
 * and are turned away), and while no host is the primary (a failover) it tries them again at once,
 * opening sessions on the standby back to back. Here every connection goes to the host that served
 * last; one that fails (see SETTLED_MS: a lost machine that never answers too) moves the pool on to
 * the next host; and once every host failed in turn, attempts are spaced RETRY_EVERY_MS / hosts
 * apart until one holds.
 */
function hostDialer(hosts: DatabaseAddress[]): () => Promise<Socket> {
  let current = 0;
  let failures = 0;
  let nextSlot = 0;
  return async () => {
    if (failures >= hosts.length) {
      const at = Math.max(performance.now(), nextSlot);
      nextSlot = at + RETRY_EVERY_MS / hosts.length;
      if (at > performance.now()) await new Promise((resolve) => setTimeout(resolve, at - performance.now()));
    }
    const index = current;
    const { host, port } = hosts[index]!;
    const opened = performance.now();
    // Named on the socket as postgres.js does, for its error messages and TLS server name.
    const socket = Object.assign(dial(port, host), { host, port });
    socket.once('close', () => {
      if ((socket.bytesRead > 0 && performance.now() - opened >= SETTLED_MS) || current !== index) return;
      current = (index + 1) % hosts.length;
      failures++;
    });
    setTimeout(() => {
      if (!socket.destroyed && socket.bytesRead > 0) failures = 0;
    }, SETTLED_MS).unref();
    return socket;
  };
}

/** The bound a pool was opened with (`timeoutMs`), if any: how long work may wait for it. */
export function timeoutOf(sql: Sql): number | undefined {
  return timeouts.get(sql);
}

/** Connection failures as postgres.js reports them, beside the node socket errors. */
const CONNECTION_CODES = new Set([
  'ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENETUNREACH', 'EPIPE', 'ENOTFOUND', 'EAI_AGAIN',
  'CONNECT_TIMEOUT', 'CONNECTION_CLOSED', 'CONNECTION_ENDED', 'CONNECTION_DESTROYED',
]);

/**
 * Whether an error says PostgreSQL is unavailable rather than that a statement was wrong: it cannot
 * be reached or dropped the connection, it is shutting down, starting or recovering (57P01-57P03), a
 * statement ran out of time (57014), any connection exception (class 08), or a write met a server
 * that takes no writes (25006: a standby, or a primary being demoted during a failover; the
 * statement, and its transaction, were refused whole). A request that met one may succeed later.
 */
export function isDatabaseUnavailable(err: unknown): boolean {
  if (err instanceof DatabaseUnavailableError) return true;
  const code = (err as { code?: unknown } | null)?.code;
  if (typeof code !== 'string') return false;
  return CONNECTION_CODES.has(code) || code === '57014' || code === '25006' || /^57P0[123]$/.test(code) || /^08[0-9A-Z]{3}$/.test(code);
}

function databaseName(url: string): string {
  const name = nameIn(url);
  if (!name) throw new DatabaseUnavailableError(`DATABASE_URL ${redactUrl(url)} names no database`);
  return name;
}

function unreachable(url: string, err: unknown): DatabaseUnavailableError {
  const reason = err instanceof Error ? err.message : String(err);
  return new DatabaseUnavailableError(
    `PostgreSQL at ${redactUrl(url)} is not reachable (${reason}); ${HOW_TO_START}`,
  );
}

/** Creates the database DATABASE_URL names when it does not exist yet. */
export async function ensureDatabase(url: string): Promise<void> {
  const name = databaseName(url);
  const sql = connect(withDatabase(url, 'postgres'), { max: 1 });
  try {
    const [found] = await sql`SELECT 1 AS one FROM pg_database WHERE datname = ${name}`;
    if (!found) await sql`CREATE DATABASE ${sql(name)}`;
  } catch (err) {
    // Another process created it between our look and our CREATE.
    if ((err as { code?: string }).code === '42P04') return;
    if (err instanceof postgres.PostgresError) throw err;
    throw unreachable(url, err);
  } finally {
    await sql.end({ timeout: 1 });
  }
}

/** Opens the pool and proves the server answers. */
export async function openDatabase(url: string, options: postgres.Options<{}> & DatabaseTimeouts = {}): Promise<Sql> {
  const sql = connect(url, options);
  try {
    await sql`SELECT 1`;
  } catch (err) {
    await sql.end({ timeout: 1 }).catch(() => {});
    if ((err as { code?: string }).code === '3D000') {
      throw new DatabaseUnavailableError(
        `database ${databaseName(url)} does not exist at ${redactUrl(url)}; run \`hrs migrate\` first`,
      );
    }
    throw unreachable(url, err);
  }
  return sql;
}
