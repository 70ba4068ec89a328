import type postgres from 'postgres';
import { DatabaseTimeoutError } from './errors.js';
import { deadlineTimer } from '../src/domain/late-timer.js';

/**
 * The platform's own deadline on PostgreSQL work (DATABASE_TIMEOUT), kept by the client: the server's
 * `statement_timeout` bounds a statement only while the server runs, and a frozen server, a network
 * black hole or a pool whose connections are all stuck never applies it. A pool opened with a bound
 * is wrapped here, so every route gets the deadline:
 *
 * - a statement (`sql\`…\``, `sql.unsafe`) must be answered within the bound from the moment it is
 *   handed to the pool, waiting for a connection included. When the deadline passes first, the
 *   statement fails with a `DatabaseTimeoutError`: one still waiting for a connection is never sent
 *   (it runs `SELECT 1` instead, if it is ever reached); one already sent has its connection closed (the server, when it reads
 *   again, finds the connection gone after it). A single statement that changes data and was sent may
 *   still commit when the server resumes: its error says so (`mayHaveApplied`).
 * - a transaction (`sql.begin`) must be done, COMMIT included, within the bound from the call. COMMIT
 *   is sent only while the deadline has not passed; when it passes before, the transaction's
 *   connection is closed (a server that resumes reads BEGIN and the statements, then the end of the
 *   connection, and rolls back) and every later statement of it fails, so nothing of it can commit
 *   and the error says so; when it passes after COMMIT was sent, the error says it may have been
 *   applied.
 *
 * This uses postgres.js 3.4's query internals (a query's `handler`, `resolve`, `reject`, `state` and
 * the `onexecute` hook that hands over the connection it runs on); test/platform/outages.test.ts
 * proves them.
 */

type Sql = postgres.Sql;

/** A connection as postgres.js hands it to `onexecute`. */
interface Connection {
  id: number;
  terminate(): void;
}

/**
 * The connections of one pool seen so far, by id, so that one the server closed is marked ended at
 * once: postgres.js otherwise lets a transaction whose connection was closed under it write its
 * ROLLBACK to the closed socket (a TypeError thrown outside any promise).
 */
export class PoolConnections {
  private readonly byId = new Map<number, Connection>();

  seen(connection: Connection): void {
    this.byId.set(connection.id, connection);
  }

  /** For the pool's `onclose` option. */
  readonly closed = (id: number): void => {
    this.byId.get(id)?.terminate();
  };
}

type Handler = ((query: RawQuery) => void) & { debug?: unknown };

/** What the deadline touches of a postgres.js query. */
interface RawQuery extends Promise<unknown> {
  handler: Handler;
  resolve: (value: unknown) => void;
  reject: (err: unknown) => void;
  /** The connection's backend key object, set when the query is written to a connection. */
  state: object | null;
  options: { onexecute?: (connection: Connection) => unknown };
  strings: readonly string[];
  args: unknown[];
}

/** Where statements of one unit of work stand against its deadline. */
interface Scope {
  /** performance.now() by which a statement handed over now must be answered. */
  deadline(): number;
  /** The error a statement that missed the deadline fails with. */
  expired(query: RawQuery, sent: boolean): Error;
  /** Told of the connection a statement runs on. */
  onConnection?(connection: Connection): void;
  /** The pool's connections. */
  connections?: PoolConnections;
  /** Statements commit by themselves (outside a transaction). */
  autocommit?: boolean;
}

/** The connection each backend key object (one per postgres.js connection) belongs to. */
const connectionOf = new WeakMap<object, Connection>();
/** Connections closed because a statement or transaction on them missed its deadline. */
const closedByDeadline = new WeakSet<Connection>();

function terminate(connection: Connection | undefined): void {
  if (!connection) return;
  closedByDeadline.add(connection);
  connection.terminate();
}

interface Bounded {
  raw: Sql;
  ms: number;
  connections?: PoolConnections;
}

const boundedPools = new WeakMap<object, Bounded>();

function isQuery(value: unknown): value is RawQuery {
  return (
    value instanceof Promise &&
    typeof (value as Partial<RawQuery>).handler === 'function' &&
    typeof (value as Partial<RawQuery>).resolve === 'function'
  );
}

/** Whether a statement may change data (so, once sent, may commit after its deadline). */
function mayChangeData(query: RawQuery): boolean {
  const text = query.strings.join(' ').replace(/\bfor\s+(no\s+key\s+)?update\b/gi, '');
  return !/^\s*(select|values|show|table)\b/i.test(text) || /\b(insert|update|delete|merge|nextval|setval|pg_notify)\b/i.test(text);
}

/** Errors that say the connection ended without an answer (not a server's error response). */
const LOST_CONNECTION = new Set(['CONNECTION_CLOSED', 'CONNECTION_DESTROYED', 'CONNECTION_ENDED', 'ECONNRESET', 'EPIPE', 'ETIMEDOUT']);

function lostConnection(err: unknown): boolean {
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === 'string' && LOST_CONNECTION.has(code);
}

/** What a statement that missed its deadline before it was sent runs instead, if it ever is. */
const HOLLOW = Object.assign(['SELECT 1'], { raw: ['SELECT 1'] }) as readonly string[];

/**
 * Makes a statement that was never sent harmless: it may still be waiting in the pool's queue, or be
 * the one a connection being opened runs first (taking it out then would leave that connection unused
 * for good), so it stays where it is and runs `SELECT 1` instead, its answer unread.
 */
function hollow(query: RawQuery): void {
  query.strings = HOLLOW;
  query.args = [];
}

/** Puts a statement under the scope's deadline, from when it is handed to the pool (or the transaction). */
function arm<T>(value: T, scope: Scope): T {
  if (!isQuery(value)) return value;
  const handler = value.handler;
  const armed: Handler = (query) => {
    const { resolve, reject } = query;
    const left = scope.deadline() - performance.now();
    if (left <= 0) {
      reject(scope.expired(query, false));
      return;
    }
    const timer = deadlineTimer(left, () => {
      const sent = query.state !== null;
      reject(scope.expired(query, sent));
      if (!sent) hollow(query);
      else terminate(connectionOf.get(query.state!));
    });
    query.resolve = (result) => {
      timer.clear();
      resolve(result);
    };
    query.reject = (err) => {
      timer.clear();
      // Sent on a connection closed for another statement's deadline (pipelined behind it): it missed
      // its answer as that one did, and may as well have been applied.
      const connection = query.state ? connectionOf.get(query.state) : undefined;
      if (connection && closedByDeadline.has(connection) && (err as { code?: unknown } | null)?.code === 'CONNECTION_DESTROYED') {
        reject(scope.expired(query, true));
      } else if (scope.autocommit && query.state !== null && lostConnection(err) && mayChangeData(query)) {
        // Sent, and the server went away before answering (a primary lost in a failover): it may have committed.
        reject(new DatabaseTimeoutError(`PostgreSQL closed the connection before confirming a change; it may have been applied`, true));
      } else reject(err);
    };
    query.options.onexecute = (connection) => {
      if (query.state) connectionOf.set(query.state, connection);
      scope.connections?.seen(connection);
      scope.onConnection?.(connection);
      // What postgres.js uses without the hook: the connection may take the next query.
      return true;
    };
    handler(query);
  };
  armed.debug = handler.debug;
  value.handler = armed;
  return value;
}

/** A view of `sql` (a pool or a transaction) whose statements are armed with the scope. */
function armedView<S extends Sql | postgres.TransactionSql>(sql: S, scope: () => Scope, begin?: Sql['begin']): S {
  return new Proxy(sql, {
    apply(target, thisArg, args) {
      return arm(Reflect.apply(target as unknown as (...a: unknown[]) => unknown, thisArg, args), scope());
    },
    get(target, prop, receiver) {
      const value = Reflect.get(target, prop, receiver) as unknown;
      if (typeof value !== 'function') return value;
      if (prop === 'unsafe' || prop === 'file') {
        return (...args: unknown[]) => arm((value as (...a: unknown[]) => unknown).apply(target, args), scope());
      }
      if (prop === 'begin' && begin) return begin;
      if (prop === 'savepoint') {
        return (...args: unknown[]) => {
          const fn = args.pop() as (tx: postgres.TransactionSql) => unknown;
          const current = scope();
          return (value as (...a: unknown[]) => unknown).apply(target, [...args, (tx: postgres.TransactionSql) => fn(armedView(tx, () => current))]);
        };
      }
      return value;
    },
  });
}

/** A statement outside a transaction: the bound runs from when it is handed to the pool. */
function statementScope(ms: number, connections?: PoolConnections, by?: number): Scope {
  const at = by ?? performance.now() + ms;
  return {
    connections,
    autocommit: true,
    deadline: () => at,
    expired: (query, sent) =>
      sent && mayChangeData(query)
        ? new DatabaseTimeoutError(`PostgreSQL did not confirm a change within ${ms} ms; it may have been applied`, true)
        : new DatabaseTimeoutError(`PostgreSQL did not answer within ${ms} ms`, false),
  };
}

/** `sql.begin` whose transaction must be done by `at` (performance.now()), COMMIT included; see above. */
function boundedBegin(raw: Sql, ms: number, connections?: PoolConnections, deadlineAt?: number): Sql['begin'] {
  return ((...args: unknown[]) => {
    const fn = args.pop() as (tx: postgres.TransactionSql) => unknown;
    const at = deadlineAt ?? performance.now() + ms;
    let committing = false;
    let timedOut = false;
    let connection: Connection | undefined;
    const notApplied = () => new DatabaseTimeoutError(`PostgreSQL did not finish a transaction within ${ms} ms; nothing of it was applied`, false);
    const scope: Scope = {
      connections,
      deadline: () => at,
      expired: () => ((timedOut = true), notApplied()),
      onConnection: (c) => (connection ??= c),
    };
    const work = (raw.begin as (...a: unknown[]) => Promise<unknown>)(...args, async (tx: postgres.TransactionSql) => {
      if (timedOut || performance.now() >= at) throw scope.expired({} as RawQuery, false);
      const result = await fn(armedView(tx, () => scope));
      // The last moment COMMIT may still be sent: after it, the answer can only be "may have been applied".
      if (timedOut || performance.now() >= at) throw scope.expired({} as RawQuery, false);
      committing = true;
      return result;
    });
    return new Promise((resolve, reject) => {
      const timer = deadlineTimer(Math.max(0, at - performance.now()), () => {
        const sentCommit = committing;
        timedOut = true;
        reject(
          sentCommit
            ? new DatabaseTimeoutError(`PostgreSQL did not confirm a COMMIT within ${ms} ms; the transaction may have been applied`, true)
            : notApplied(),
        );
        // Before COMMIT: the server rolls back when it finds the connection gone. After: frees the pool.
        terminate(connection);
      });
      work.then(
        (result) => {
          timer.clear();
          resolve(result as never);
        },
        (err: unknown) => {
          timer.clear();
          // A statement of it missed the deadline: whatever its rollback met, nothing was applied.
          if (timedOut && !committing) reject(notApplied());
          // COMMIT was sent and the server went away before answering (a primary lost in a failover).
          else if (committing && lostConnection(err)) {
            reject(new DatabaseTimeoutError('PostgreSQL closed the connection before confirming a COMMIT; the transaction may have been applied', true));
          } else reject(err);
        },
      );
    });
  }) as Sql['begin'];
}

/** The pool with the platform's client-side deadline of `ms` on every statement and transaction (see above). */
export function bounded(raw: Sql, ms: number, connections?: PoolConnections): Sql {
  const view = armedView(raw, () => statementScope(ms, connections), boundedBegin(raw, ms, connections));
  boundedPools.set(view, { raw, ms, connections });
  return view;
}

/**
 * `sql.begin` with a deadline of the caller's (performance.now()), for work that waited before it
 * began (a group commit's oldest request): the transaction is done by then or fails as above. On a
 * pool opened without a bound, a plain transaction.
 */
export function beginBy<T>(sql: Sql, at: number, fn: (tx: postgres.TransactionSql) => Promise<T>): Promise<T> {
  const pool = boundedPools.get(sql);
  if (!pool) return sql.begin(fn) as unknown as Promise<T>;
  return boundedBegin(pool.raw, pool.ms, pool.connections, at)(fn) as Promise<T>;
}

/**
 * The pool whose statements must be answered by `at` (performance.now()) rather than within the bound
 * from when each is handed over: for work that already waited (the signal writer's group commit, bound
 * from its oldest request). A statement that changes data and was sent when the deadline passed fails
 * saying it may have been applied. Without a bound, `sql` itself.
 */
export function statementsBy(sql: Sql, at: number): Sql {
  const pool = boundedPools.get(sql);
  if (!pool) return sql;
  const scope = statementScope(pool.ms, pool.connections, at);
  return armedView(pool.raw, () => scope);
}

/**
 * The pool without the client-side deadline, for background work whose transactions may run longer
 * than a request may wait (the history jobs); each statement is still bounded by the server's
 * `statement_timeout`.
 */
export function unbounded(sql: Sql): Sql {
  return boundedPools.get(sql)?.raw ?? sql;
}

/** The bound on a read over the whole registry (see wholeRegistryRead): the client's, and the server's statement_timeout a little under it. */
export const WHOLE_REGISTRY_READ_MS = 60_000;

/**
 * A read over every station (the registry's rows, the map's and DATEX II's static fields): one
 * read-only transaction at one snapshot (REPEATABLE READ), bounded by WHOLE_REGISTRY_READ_MS rather
 * than DATABASE_TIMEOUT, client and server alike. With 100,000 stations such a read takes seconds, and
 * under DATABASE_TIMEOUT it failed: the platform could not start (the registry) or showed stations
 * without their static fields. Its statements are sent together and answered in turn. Still bounded:
 * a frozen server fails it after a minute, not never. On a pool opened without a bound, the same
 * transaction without one.
 */
export function wholeRegistryRead<T>(sql: Sql, fn: (tx: postgres.TransactionSql) => Promise<T>): Promise<T> {
  const pool = boundedPools.get(sql);
  const run = async (tx: postgres.TransactionSql) => {
    if (pool) await tx`SELECT set_config('statement_timeout', ${String(Math.floor(WHOLE_REGISTRY_READ_MS * 0.9))}, true)`;
    return fn(tx);
  };
  const mode = 'isolation level repeatable read read only';
  if (!pool) return sql.begin(mode, run) as unknown as Promise<T>;
  return boundedBegin(pool.raw, WHOLE_REGISTRY_READ_MS, pool.connections)(mode, run) as unknown as Promise<T>;
}
