import { createHash, randomBytes } from 'node:crypto';
import type { Logger } from 'pino';
import type { Redis } from '../infra/redis.js';
import type { Services } from '../services.js';
import { HttpError, type ErrorStyle } from './errors.js';
import type { Request } from './request.js';
import type { Guard } from './server.js';

/**
 * Rate limits shared by every instance through Redis.
 *
 * Algorithm: a sliding-window log. Each (key, limit) pair is one sorted set whose members are the
 * requests counted in the last `windowSeconds`, scored by the microsecond at which Redis counted them.
 * A request is allowed when every limit has fewer than `limit` members left in the half-open window
 * (now - window, now]; only then is it added to every set. So at most `limit` requests are ever
 * counted in any window of that length — no burst at a window edge as with fixed windows, no
 * averaging as with a sliding-window counter — and the wait is exact: the request that must leave a
 * full window first is the member at rank `count - limit`, which leaves it at its score plus the
 * window. Retry-After is that instant (the latest over every full limit) rounded up to whole seconds,
 * so after waiting it a request is allowed, and one whole second less would not have been enough.
 *
 * Everything happens in one Lua script, so check-and-count is atomic across all limits of a call, and
 * the clock is Redis's (`TIME`), so all instances agree. Each set expires one window after its newest
 * member. Memory is one small sorted-set entry per counted request still in its window.
 */

export interface RateLimit {
  /** Requests allowed within the window. */
  limit: number;
  /** Window length in seconds (fractions allowed; whole milliseconds). */
  windowSeconds: number;
  /** Distinguishes the limits of one key in Redis; defaults to the window, e.g. `60s`. */
  name?: string;
  /** How a refusal names the limit, e.g. `at most 300 requests per minute per signal originator`. */
  description?: string;
}

export interface RateLimitState {
  limit: RateLimit;
  /** Requests still allowed now under this limit. */
  remaining: number;
  /** Microseconds until the oldest request counted in this window leaves it (0 when none is counted). */
  resetMicros: number;
}

export interface RateLimitResult {
  allowed: boolean;
  /** The tightest limit: when refused, the one that keeps the request waiting longest. */
  limit: RateLimit;
  remaining: number;
  /**
   * Seconds (rounded up) until the tightest limit's oldest counted request leaves its window, i.e.
   * until `remaining` next grows; 0 when that limit counts nothing. When `remaining` is 0 this is
   * exactly the Retry-After the next request would get.
   */
  resetSeconds: number;
  /** When refused: whole seconds (at least 1, rounded up) until a request would be allowed. */
  retryAfterSeconds?: number;
  /** When refused: the exact wait in milliseconds (fractional). */
  retryAfterMs?: number;
  /** Every limit's state, in the order given. */
  limits: RateLimitState[];
}

/**
 * KEYS: one sorted set per limit. ARGV[1]: a member unique to this call; then per limit, the limit
 * and the window in microseconds. Returns {allowed, hit, wait_us, then per limit count, reset_us}.
 */
const SCRIPT = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000000 + tonumber(t[2])
local member = ARGV[1]
local n = #KEYS
local counts, limits, windows = {}, {}, {}
local hit, wait = 0, 0
for i = 1, n do
  local limit = tonumber(ARGV[2 * i])
  local window = tonumber(ARGV[2 * i + 1])
  limits[i], windows[i] = limit, window
  redis.call('ZREMRANGEBYSCORE', KEYS[i], '-inf', now - window)
  local count = redis.call('ZCARD', KEYS[i])
  counts[i] = count
  if count >= limit then
    local entry = redis.call('ZRANGE', KEYS[i], count - limit, count - limit, 'WITHSCORES')
    local w = tonumber(entry[2]) + window - now
    if hit == 0 or w > wait then hit, wait = i, w end
  end
end
if hit == 0 then
  for i = 1, n do
    redis.call('ZADD', KEYS[i], now, member)
    redis.call('PEXPIRE', KEYS[i], math.ceil(windows[i] / 1000))
    counts[i] = counts[i] + 1
  end
end
local out = { hit == 0 and 1 or 0, hit, wait }
for i = 1, n do
  local reset = 0
  if counts[i] > 0 then
    local oldest = redis.call('ZRANGE', KEYS[i], 0, 0, 'WITHSCORES')
    reset = tonumber(oldest[2]) + windows[i] - now
  end
  out[#out + 1] = counts[i]
  out[#out + 1] = reset
end
return out
`;

const MICROS = 1_000_000;
const SCRIPT_SHA = createHash('sha1').update(SCRIPT).digest('hex');

export class RateLimiter {
  private readonly memberPrefix = randomBytes(6).toString('base64url');
  private sequence = 0;

  /** @param prefix the platform's Redis prefix; keys are `${prefix}:rl:{key}:name`. */
  constructor(
    private readonly redis: Redis,
    private readonly prefix: string,
  ) {}

  /** Whether the Redis client is connected (while it is not, commands would wait for a reconnect). */
  get ready(): boolean {
    return this.redis.isReady;
  }

  /** The Redis key of one limit of a key (the braces keep all limits of a key in one cluster slot). */
  redisKey(key: string, limit: RateLimit): string {
    return `${this.prefix}:rl:{${key}}:${limit.name ?? `${limit.windowSeconds}s`}`;
  }

  /**
   * Checks every limit for `key` and, only if all allow it, counts the request against all of them.
   * Rejects when Redis fails.
   */
  async hit(key: string, limits: readonly RateLimit[]): Promise<RateLimitResult> {
    if (limits.length === 0) throw new Error('a rate limit check needs at least one limit');
    for (const l of limits) {
      if (!(Number.isInteger(l.limit) && l.limit > 0)) throw new Error(`rate limit must be a positive integer (got ${l.limit})`);
      if (!(l.windowSeconds >= 0.001)) throw new Error(`rate limit window must be at least 1 ms (got ${l.windowSeconds} s)`);
    }
    const keys = limits.map((l) => this.redisKey(key, l));
    const args = [`${this.memberPrefix}${(++this.sequence).toString(36)}`];
    for (const l of limits) args.push(String(l.limit), String(Math.round(l.windowSeconds * 1000) * 1000));
    let reply: unknown;
    try {
      reply = await this.redis.evalSha(SCRIPT_SHA, { keys, arguments: args });
    } catch (err) {
      // Not loaded yet (or gone after SCRIPT FLUSH or a failover): EVAL runs and caches it.
      if (!(err instanceof Error && err.message.startsWith('NOSCRIPT'))) throw err;
      reply = await this.redis.eval(SCRIPT, { keys, arguments: args });
    }
    return interpret(limits, reply as number[]);
  }
}

function interpret(limits: readonly RateLimit[], reply: number[]): RateLimitResult {
  const allowed = reply[0] === 1;
  const hit = Number(reply[1]);
  const waitMicros = Number(reply[2]);
  const states: RateLimitState[] = limits.map((limit, i) => ({
    limit,
    remaining: Math.max(0, limit.limit - Number(reply[3 + 2 * i])),
    resetMicros: Math.max(0, Number(reply[4 + 2 * i])),
  }));
  if (!allowed) {
    const state = states[hit - 1]!;
    const retryAfterSeconds = Math.max(1, Math.ceil(waitMicros / MICROS));
    return {
      allowed,
      limit: state.limit,
      remaining: 0,
      resetSeconds: retryAfterSeconds,
      retryAfterSeconds,
      retryAfterMs: waitMicros / 1000,
      limits: states,
    };
  }
  // The tightest limit: fewest requests left; among equals, the one that frees up last.
  let tightest = states[0]!;
  for (const s of states.slice(1)) {
    if (s.remaining < tightest.remaining || (s.remaining === tightest.remaining && s.resetMicros > tightest.resetMicros)) {
      tightest = s;
    }
  }
  return {
    allowed,
    limit: tightest.limit,
    remaining: tightest.remaining,
    resetSeconds: Math.ceil(tightest.resetMicros / MICROS),
    limits: states,
  };
}

export interface RateLimitGuardOptions {
  limits: readonly RateLimit[];
  /** Whose budget a request spends; `undefined` lets the request through uncounted. */
  key: (req: Request) => string | undefined;
  /** Wording of the refusal: `drf` as the import APIs (`Request was throttled: ...`), `problem` for the rest. */
  style: ErrorStyle;
  /** Who the limit applies to, for the default description: `per signal originator`. */
  per?: string;
  log: Logger;
  /** How long to wait for Redis before letting the request through (default 500 ms). */
  timeoutMs?: number;
}

const WARN_EVERY_MS = 60_000;

/**
 * A guard that spends one request of `key`'s budget under every limit, sets `RateLimit-Limit`,
 * `RateLimit-Remaining` and `RateLimit-Reset` on whatever response follows, and refuses with 429 and
 * `Retry-After` when a limit is exhausted.
 *
 * When Redis is unreachable (not connected, an error, or no answer within `timeoutMs`) the request
 * goes through unlimited and without the headers — a rate limiter must not take the API down with
 * it — and a warning is logged at most once a minute.
 */
export function rateLimitGuard(limiter: RateLimiter, options: RateLimitGuardOptions): Guard {
  const timeoutMs = options.timeoutMs ?? 500;
  let lastWarning = -Infinity;
  const failOpen = (err: unknown) => {
    const now = Date.now();
    if (now - lastWarning < WARN_EVERY_MS) return;
    lastWarning = now;
    options.log.warn({ err }, 'rate limits not enforced: Redis unavailable, requests pass unlimited');
  };
  return async (req) => {
    const key = options.key(req);
    if (key === undefined) return;
    let result: RateLimitResult;
    let timer: NodeJS.Timeout | undefined;
    try {
      // The offline queue would hold a command until a reconnect: while disconnected, do not wait.
      if (!limiter.ready) throw new Error('Redis client not connected');
      // A command already sent cannot be withdrawn; past the timeout its answer is just ignored.
      const timeout = new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error(`Redis gave no answer within ${timeoutMs} ms`)), timeoutMs);
      });
      result = await Promise.race([limiter.hit(key, options.limits), timeout]);
    } catch (err) {
      failOpen(err);
      return;
    } finally {
      clearTimeout(timer);
    }
    req.responseHeaders['RateLimit-Limit'] = String(result.limit.limit);
    req.responseHeaders['RateLimit-Remaining'] = String(result.remaining);
    req.responseHeaders['RateLimit-Reset'] = String(result.resetSeconds);
    if (result.allowed) return;
    const seconds = result.retryAfterSeconds!;
    const description = result.limit.description ?? describeLimit(result.limit, options.per);
    const wait = `${seconds} second${seconds === 1 ? '' : 's'}`;
    const detail =
      options.style === 'drf'
        ? `Request was throttled: ${description}. Expected available in ${wait}.`
        : `Rate limit exceeded: ${description}. Retry in ${wait}.`;
    throw new HttpError(429, 'throttled', detail, { headers: { 'Retry-After': String(seconds) } });
  };
}

const UNITS: [number, string][] = [
  [86_400, 'day'],
  [3_600, 'hour'],
  [60, 'minute'],
  [1, 'second'],
];

/** `at most 300 requests per minute per signal originator` */
export function describeLimit(limit: RateLimit, per?: string): string {
  const w = limit.windowSeconds;
  const unit = UNITS.find(([seconds]) => w === seconds);
  const window = unit ? unit[1] : `${w} seconds`;
  return `at most ${limit.limit} request${limit.limit === 1 ? '' : 's'} per ${window}${per ? ` per ${per}` : ''}`;
}

/** The spec's import v2 limit: 300 requests per minute per signal originator, across all import v2 endpoints. */
export const IMPORT_V2_LIMIT: RateLimit = { limit: 300, windowSeconds: 60, name: 'minute' };

/** The import v2 guard, keyed by the token's originator. */
export function importV2RateLimit(
  services: Services,
  limits: readonly RateLimit[] = [{ ...IMPORT_V2_LIMIT, limit: services.config.importV2RateLimit }],
): Guard {
  return rateLimitGuard(new RateLimiter(services.redis, services.config.redisPrefix), {
    limits,
    key: (req) => {
      if (req.principal?.kind !== 'originator') throw new Error('import v2 rate limit reached without an originator');
      return `import_v2:originator:${req.principal.id}`;
    },
    style: 'drf',
    per: 'signal originator',
    log: services.log,
  });
}
