import type { Logger } from 'pino';
import { RedisDeadlineError, RedisNotConnectedError, redisUsable, withinRedis, type Redis } from './redis.js';
import { isSentinelNodeError } from './redis-sentinel.js';

/**
 * A process's Redis outages, told once: one warning when Redis is lost (the connection fails, or a
 * command waited REDIS_TIMEOUT unanswered), saying what the platform does meanwhile, and one info line
 * when it answers again. Everything in the process that uses Redis (the bus and its announcements,
 * registry acknowledgements, rate limits and the failed-authentication limit, stream slots, the call
 * log, mail and webhook queues, BullMQ's workers, a Sentinel group's master) reports its failures
 * through `redisFailed` instead of logging them itself: during an outage they are debug lines under its
 * one warning; otherwise they are what they are (a caller's own deadline is not an outage, a refused
 * command is a fault of its own).
 */

/** node-redis's errors for a connection that failed, closed or timed out (by class name: its classes are not all exported). */
const CONNECTION_ERRORS = new Set([
  'SocketClosedUnexpectedlyError',
  'ConnectionTimeoutError',
  'SocketTimeoutError',
  'ClientClosedError',
  'ClientOfflineError',
  'ReconnectStrategyError',
  'DisconnectsClientError',
]);
/** System errors of a TCP connection that cannot be made or was lost. */
const CONNECTION_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'EPIPE', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENETUNREACH', 'ENOTFOUND', 'EAI_AGAIN']);

/** Whether an error is a Redis connection failing (not a job's, a script's or BullMQ's own fault). */
export function isConnectionError(err: unknown): boolean {
  if (!(err instanceof Error)) return false;
  if (CONNECTION_ERRORS.has(err.constructor.name) || CONNECTION_ERRORS.has(err.name)) return true;
  const code = (err as { code?: unknown }).code;
  if (typeof code === 'string' && CONNECTION_CODES.has(code)) return true;
  // A client that follows a Sentinel group reports its connections' errors wrapped, naming the node
  // (`Master Client (host:port): …`), with node-redis's own error as the cause.
  return err.cause !== undefined && err.cause !== err && isConnectionError(err.cause);
}

/**
 * Whether an error is a wait that ran out before Redis answered: a caller's own deadline
 * (`RedisDeadlineError`), the rate limiter's batch timeout, node-redis's command timeout. Such a wait
 * says nothing yet about Redis: it is asked (a PING within REDIS_TIMEOUT) whether there is an outage.
 */
function isWaitRunOut(err: unknown): boolean {
  if (!(err instanceof Error)) return false;
  const code = (err as { code?: unknown }).code;
  return err instanceof RedisDeadlineError || code === 'REDIS_DEADLINE' || code === 'REDIS_TIMEOUT' || err.name === 'TimeoutError' || err.constructor.name === 'TimeoutError';
}

/**
 * Whether an error says Redis did not answer: the client not connected or not answering
 * (`RedisNotConnectedError`), a wait that ran out (REDIS_TIMEOUT, or the caller's own deadline), a
 * connection failing. The one place this is decided: what met such an error may succeed a moment later
 * (an HTTP request is answered 503 with Retry-After, src/api/unavailable.ts), while Redis refusing a
 * command, or anything else failing, is a fault of its own.
 */
export function redisUnanswered(err: unknown): boolean {
  return err instanceof RedisNotConnectedError || isWaitRunOut(err) || isConnectionError(err);
}

interface Outage {
  down: boolean;
  /** Marks Redis lost and logs the outage's one warning, unless it is lost already. */
  lost(err: { type: string; message: string }): void;
}

/** Each watched client's outage (a process has one client; the bus's subscriber reports through its publisher). */
const outages = new WeakMap<object, Outage>();
/** Clients a PING is out to, asked whether a wait that ran out was an outage. */
const probing = new WeakSet<object>();

/**
 * Logs a Redis connection's outages: one warning when it is lost (or a reconnect fails first), with
 * what the platform does meanwhile, and one info line when it is back; the client's error events in
 * between (one per reconnect attempt), and every failure its users report through `redisFailed`, are
 * not logged again. Returns whether it is down now.
 */
export function watchRedis(client: Redis, log: Logger, what = 'Redis'): { readonly down: boolean } {
  let since = 0;
  const outage: Outage = {
    down: false,
    lost(err) {
      if (outage.down) return;
      outage.down = true;
      since = Date.now();
      log.warn({ err }, `${what} unavailable: ${DEGRADED}`);
    },
  };
  const back = () => {
    if (!outage.down) return;
    outage.down = false;
    log.info({ down_ms: Date.now() - since }, `${what} available again`);
  };
  client.on('error', (err: Error) => {
    // One Sentinel of several gone is not Redis gone: the client asks another.
    if (isSentinelNodeError(err)) return;
    outage.lost({ type: err.constructor.name, message: err.message });
  });
  client.on('ready', back);
  // Connected but not answering (a frozen server): the same degraded mode, one line each way.
  client.on('stalled', (ms: number) => outage.lost({ type: 'RedisTimeoutError', message: `no answer within ${ms} ms (REDIS_TIMEOUT)` }));
  client.on('answering', () => {
    if (client.isReady) back();
  });
  outages.set(client, outage);
  return outage;
}

const DEGRADED =
  'rate limits are not enforced, announcements to other instances (readings, token revocations) and call log entries ' +
  'are lost, and token caches expire on their own, until it is back';

/** What a failure reported through `redisFailed` was. */
export type RedisFailure =
  /** Part of the process's outage, which is warned of once (this failure: a debug line). */
  | 'outage'
  /** A wait that ran out before Redis answered, Redis not (yet) counted as down: a debug line, and Redis asked whether it is down. */
  | 'wait'
  /** Redis answered with an error, or something else failed, while it is up: a warning of its own. */
  | 'fault';

/**
 * Reports a failure of a Redis command met by one of the client's users (`msg` and `fields` say what
 * was lost: "stream limits not enforced", the stations of an unannounced change). While the client is
 * down (disconnected, or a command waited REDIS_TIMEOUT unanswered) it is part of the outage: its
 * warning is logged once (now, if the client has not said so yet) and this failure is a debug line
 * (`during: 'info'` for a rare one an operator may want to find, a revocation not announced).
 * A wait that ran out sooner (a caller's deadline, the rate limiter's batch timeout) is not an outage:
 * a debug line, and a PING within REDIS_TIMEOUT tells whether Redis is down (then the outage's one
 * warning). Any other failure is a warning of its own. A client nobody watches (a one-off command)
 * has no outage to report under: its failures are warnings, but while it is not connected debug lines.
 */
export function redisFailed(client: Redis, log: Logger, err: unknown, msg: string, fields: Record<string, unknown> = {}, during: 'debug' | 'info' = 'debug'): RedisFailure {
  const outage = outages.get(client);
  if (outage === undefined) {
    // Nobody reports this client's outages: a client not connected is told by whoever opened it.
    if (!redisUsable(client)) {
      log.debug({ err, ...fields }, msg);
      return 'outage';
    }
    log.warn({ err, ...fields }, msg);
    return 'fault';
  }
  if (outage.down || !redisUsable(client)) {
    const e = err instanceof Error ? err : new Error(String(err));
    // A client closed on purpose (the process stopping) is no outage.
    if ((client as { isOpen?: boolean }).isOpen !== false) outage.lost({ type: e.constructor.name, message: e.message });
    log[during]({ err, ...fields }, msg);
    return 'outage';
  }
  if (isWaitRunOut(err) || isConnectionError(err)) {
    log.debug({ err, ...fields }, msg);
    probe(client);
    return 'wait';
  }
  log.warn({ err, ...fields }, msg);
  return 'fault';
}

/**
 * Whether the process's Redis outage is being reported now (its warning logged, the info line to come),
 * so its users' own "enforced again" lines have nothing to add.
 */
export function redisDown(client: Redis): boolean {
  return outages.get(client)?.down === true || !redisUsable(client);
}

/** Asks Redis for a PING within REDIS_TIMEOUT: unanswered, the client counts as down (and the outage is warned of). */
function probe(client: Redis): void {
  if (probing.has(client)) return;
  probing.add(client);
  void withinRedis(client, client.ping())
    .catch(() => {})
    .finally(() => probing.delete(client));
}
