import { createClient, ErrorReply, type RedisClientType } from '@redis/client';
import { redactUrl } from '../config/config.js';
import { describeSentinels, type RedisSentinelSettings } from '../config/redis-settings.js';
import { sentinelClient } from './redis-sentinel.js';
import { deadlineTimer, type DeadlineTimer } from '../domain/late-timer.js';

/**
 * A Redis client as the platform uses it: node-redis's client of one server (REDIS_URL), or its
 * RedisSentinel, which follows the master a Sentinel group names (REDIS_SENTINELS; see
 * redis-sentinel.ts for how it stands in for the client).
 */
export type Redis = RedisClientType;

/** Raised when Redis cannot be reached at start. */
export class RedisUnavailableError extends Error {
  readonly code = 'REDIS_UNAVAILABLE';
}

const HOW_TO_START =
  'start one (`redis-server --daemonize yes`, `docker compose up -d redis`), point REDIS_URL at a running server, ' +
  'or leave REDIS_URL unset and run `hrs serve` or `hrs demo`, which start a local one that other hrs commands then use';

/**
 * Connects and proves the server answers. At start an unreachable Redis is an error; once running,
 * the client reconnects by itself with a capped backoff.
 */
/** Listeners one Redis client may have before Node warns of a leak (see `openRedis`). */
export const REDIS_LISTENERS = 40;

/** How long a command may go unanswered by default (REDIS_TIMEOUT's default), in milliseconds. */
export const DEFAULT_REDIS_WAIT_MS = 2000;

export interface OpenRedisOptions {
  /** REDIS_TIMEOUT in milliseconds (default DEFAULT_REDIS_WAIT_MS). */
  waitMs?: number;
  /** REDIS_SENTINELS and REDIS_SENTINEL_NAME: the master is the one these Sentinels name, followed through failovers. */
  sentinel?: RedisSentinelSettings;
}

/** How long connecting may take before the server counts as unreachable, at start and on every reconnect. */
const CONNECT_TIMEOUT_MS = 5000;

export async function openRedis(url: string, name: string, options: OpenRedisOptions = {}): Promise<Redis> {
  let started = false;
  const client = options.sentinel
    ? sentinelClient(url, options.sentinel, {
        name,
        connectTimeoutMs: CONNECT_TIMEOUT_MS,
        maxListeners: REDIS_LISTENERS,
        onMasterLost: markLost,
      })
    : (createClient({
        url,
        name,
        socket: {
          connectTimeout: CONNECT_TIMEOUT_MS,
          reconnectStrategy: (retries: number, cause: Error) => (started ? Math.min(retries * 100, 3000) : cause),
        },
      }) as unknown as Redis);
  // node-redis emits 'error' for every failed reconnect; the owner logs them.
  client.on('error', () => {});
  // BullMQ's wrapper of this client (one for every queue and worker of the process: workers/queues.ts
  // bullConnection) and the platform's parts add listeners to it for the client's life. The bound stays
  // a leak detector (a listener added per request would still pass it) without warning about the ones
  // the platform means to have.
  client.setMaxListeners(REDIS_LISTENERS);
  const where = options.sentinel
    ? { what: `The master named by ${describeSentinels(options.sentinel)}`, help: SENTINEL_HELP(options.sentinel.name) }
    : { what: `Redis at ${redactUrl(url)}`, help: HOW_TO_START };
  try {
    // A Sentinel set none of which answers, or that names a master nobody reaches, is retried for a
    // while inside connect(): bounded like a client of one server.
    await withDeadline(client.connect(), options.sentinel ? 2 * CONNECT_TIMEOUT_MS : undefined);
    await client.ping();
  } catch (err) {
    await Promise.resolve(client.destroy()).catch(() => {});
    throw new RedisUnavailableError(openingFailure(where, err));
  }
  started = true;
  waits.set(client, options.waitMs ?? DEFAULT_REDIS_WAIT_MS);
  return client;
}

async function withDeadline<T>(promise: Promise<T>, ms: number | undefined): Promise<T> {
  if (ms === undefined) return promise;
  let timer: NodeJS.Timeout | undefined;
  try {
    return await Promise.race([
      promise,
      new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error(`no master reached within ${ms} ms`)), ms);
      }),
    ]);
  } finally {
    clearTimeout(timer);
  }
}

const SENTINEL_HELP = (name: string) =>
  `check that REDIS_SENTINELS lists running Sentinels and that they watch a master group named ${name} ` +
  `(\`redis-cli -p 26379 SENTINEL GET-MASTER-ADDR-BY-NAME ${name}\` on a Sentinel's machine names its master), ` +
  'or set REDIS_SENTINEL_NAME to the name in their `sentinel monitor` line';

/**
 * Why opening failed, in words: the server answered with an error (a database index out of range, a
 * wrong password) is the server's own reason; otherwise it is not reachable and how to start one (or,
 * with Sentinels, what to check).
 */
function openingFailure(where: { what: string; help: string }, err: unknown): string {
  // The reconnect strategy's refusal wraps the error it was given.
  const wrapped = err as { originalError?: unknown; socketError?: unknown };
  const reply = [err, wrapped.originalError, wrapped.socketError].find((e) => e instanceof ErrorReply);
  if (reply instanceof ErrorReply) {
    const reason = reply.message.replace(/^ERR /, '');
    const hint = /DB index/i.test(reason) ? ' (a Redis server has databases 0-15 unless configured otherwise: fix the number in REDIS_URL)' : '';
    return `${where.what} refused the connection: ${reason}${hint}`;
  }
  const reason = err instanceof Error ? err.message || err.constructor.name : String(err);
  return `${where.what} is not reachable (${reason}); ${where.help}`;
}

/** A command refused at once because the client is not connected (instead of waiting in its offline queue). */
export class RedisNotConnectedError extends Error {
  readonly code = 'REDIS_NOT_CONNECTED';
}

/** A command Redis did not answer in time (REDIS_TIMEOUT): it may still be carried out when Redis answers again. */
export class RedisTimeoutError extends Error {
  readonly code = 'REDIS_TIMEOUT';
}

/**
 * A command whose caller's own deadline (shorter than REDIS_TIMEOUT: what was left of a wait) passed
 * before Redis answered. It says nothing about Redis, which may answer a moment later: not an outage.
 */
export class RedisDeadlineError extends Error {
  readonly code = 'REDIS_DEADLINE';
}

const waits = new WeakMap<object, number>();
/** Clients that left a command unanswered past the bound, until Redis answers again. */
const stalled = new WeakSet<object>();

/**
 * Whether commands may be sent to Redis now: the client is connected and Redis has not left a command
 * unanswered past the bound since it last answered. A frozen Redis (or one behind a network black
 * hole) keeps the connection open, so the client says it is ready while nothing is answered; code
 * that would wait for it asks this instead and fails at once, as while it is disconnected.
 */
export function redisUsable(client: Redis): boolean {
  return client.isReady && !stalled.has(client);
}

/**
 * The command's answer, or a `RedisTimeoutError` once the client's bound (REDIS_TIMEOUT, or `ms`)
 * has passed. A command already sent cannot be withdrawn: Redis may still carry it out when it
 * answers again (an announcement is then delivered late, a counter counted). A timeout at the
 * client's bound marks the client stalled (`redisUsable` false) until Redis answers a PING sent
 * behind the unanswered command. A shorter `ms` is the caller's own deadline (what is left of a wait):
 * running out of it says nothing about Redis, so it rejects with a `RedisDeadlineError` that names the
 * caller's deadline, without marking the client stalled, which would let every other user of the client
 * (stream slots, rate limits) fail open meanwhile.
 */
export async function withinRedis<T>(client: Redis, command: Promise<T>, ms?: number): Promise<T> {
  const clientBound = waits.get(client) ?? DEFAULT_REDIS_WAIT_MS;
  const bound = ms ?? clientBound;
  command.catch(() => {});
  let timer: DeadlineTimer | undefined;
  try {
    return await Promise.race([
      command,
      new Promise<never>((_, reject) => {
        // Time the event loop was blocked does not count against Redis (src/domain/late-timer.ts).
        timer = deadlineTimer(bound, () => {
          if (bound < clientBound) {
            reject(new RedisDeadlineError(`the caller's deadline (${bound} ms) passed before Redis answered; not an outage (REDIS_TIMEOUT is ${clientBound} ms)`));
            return;
          }
          stall(client, bound);
          reject(new RedisTimeoutError(`Redis did not answer within ${bound} ms (REDIS_TIMEOUT)`));
        });
      }),
    ]);
  } finally {
    timer?.clear();
  }
}

function stall(client: Redis, ms: number): void {
  if (stalled.has(client)) return;
  stalled.add(client);
  client.emit('stalled', ms);
  awaitAnswer(client);
}

/**
 * Marks a client whose master connection failed (a client that follows a Sentinel group stays ready
 * meanwhile) as not usable until Redis answers; its `error` event, which reported the failure, is what
 * watchRedis logs.
 */
function markLost(client: Redis): void {
  if (stalled.has(client)) return;
  stalled.add(client);
  awaitAnswer(client);
}

/**
 * Clears the mark once Redis answers a PING (Redis answers in order: it is answered once everything
 * sent before it is), or once the client says it is not ready (then `isReady` speaks for it). A PING
 * refused while the client still says it is ready was not answered either (node-redis's own command
 * timeout; a master followed through Sentinels that is gone while they have not yet named another):
 * it is sent again.
 */
function awaitAnswer(client: Redis): void {
  const answered = () => {
    if (stalled.delete(client)) client.emit('answering');
  };
  const refused = () => {
    if (!client.isReady || !stalled.has(client)) return answered();
    setTimeout(() => awaitAnswer(client), 100).unref();
  };
  try {
    client.ping().then(answered, refused);
  } catch {
    answered();
  }
}

/** Whether Redis answers, failing at once while the client is not connected and within the bound otherwise. */
export async function pingRedis(client: Redis): Promise<void> {
  if (!redisUsable(client)) throw new RedisNotConnectedError('Redis is not connected or not answering');
  await withinRedis(client, client.ping());
}

/** How long a graceful close may wait for the answers to the commands still pending. */
export const CLOSE_GRACE_MS = 2000;

/**
 * Closes a client: gracefully (the commands it sent answered first) while Redis answers, at once
 * (pending commands fail) while it does not. node-redis's `close()` waits for its pending commands'
 * answers even when the socket is down and no longer reconnecting (Redis down or restarting, the
 * client between attempts), which is forever; a frozen Redis never answers either. So a client that
 * is not usable is destroyed, and a graceful close past `CLOSE_GRACE_MS` is cut short.
 */
export async function closeRedis(client: Redis, graceMs = CLOSE_GRACE_MS): Promise<void> {
  if (!client.isOpen) return;
  if (!redisUsable(client)) return void client.destroy();
  let timer: NodeJS.Timeout | undefined;
  const inTime = await Promise.race([
    client.close().then(
      () => true,
      () => false,
    ),
    new Promise<false>((resolve) => (timer = setTimeout(resolve, graceMs, false))),
  ]);
  clearTimeout(timer);
  if (!inTime) client.destroy(); // safe after close(): it tears down the draining socket
}
