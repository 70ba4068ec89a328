import type { Logger } from 'pino';
import type { Services } from '../services.js';
import { HttpError, type ErrorStyle } from './errors.js';
import { RateLimiter, type RateLimit, type RateLimitResult } from './rate-limit.js';
import type { Request } from './request.js';
import type { Guard } from './server.js';

/**
 * The rate limits as HTTP guards: each request spends its key's budget through the RateLimiter
 * (./rate-limit.ts), gets the `RateLimit-*` headers, and is refused with 429 and `Retry-After` in its
 * family's wording when a limit is exhausted; and the limits of the import v2 and export v2 families.
 */

export interface RateLimitGuardOptions {
  limits: readonly RateLimit[];
  /** Whose budget a request spends; `undefined` lets the request through uncounted. */
  key: (req: Request) => string | undefined;
  /** Wording of the refusal: `drf` as the import APIs (`Request was throttled: ...`), `problem` for the rest. */
  style: ErrorStyle;
  /** Who the limit applies to, for the default description: `per signal originator`. */
  per?: string;
  log: Logger;
}

const WARN_EVERY_MS = 60_000;

/**
 * A guard that spends one request of `key`'s budget under every limit, sets `RateLimit-Limit`,
 * `RateLimit-Remaining` and `RateLimit-Reset` on whatever response follows, and refuses with 429 and
 * `Retry-After` when a limit is exhausted.
 *
 * When Redis is unreachable (not connected, an error, or no answer within the limiter's timeout) the request
 * goes through unlimited and without the headers — a rate limiter must not take the API down with
 * it — and a warning is logged at most once a minute.
 */
export function rateLimitGuard(limiter: RateLimiter, options: RateLimitGuardOptions): Guard {
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
    try {
      // The offline queue would hold a command until a reconnect: while disconnected, do not wait.
      if (!limiter.ready) throw new Error('Redis client not connected');
      result = await limiter.hit(key, options.limits);
    } catch (err) {
      failOpen(err);
      return;
    }
    req.responseHeaders['RateLimit-Limit'] = String(result.limit.limit);
    req.responseHeaders['RateLimit-Remaining'] = String(result.remaining);
    req.responseHeaders['RateLimit-Reset'] = String(result.resetSeconds);
    if (result.allowed) return;
    const seconds = result.retryAfterSeconds!;
    const description = result.limit.description ?? describeLimit(result.limit, options.per);
    const wait = describeWait(seconds);
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

/**
 * `1 second`, `42 seconds`; from two minutes on the count of seconds (which is what Retry-After says)
 * is followed by hours and minutes, rounded up: `86399 seconds (about 24 hours)`.
 */
export function describeWait(seconds: number): string {
  const exact = `${seconds} second${seconds === 1 ? '' : 's'}`;
  if (seconds < 120) return exact;
  const minutes = Math.ceil(seconds / 60);
  const h = Math.floor(minutes / 60);
  const m = minutes % 60;
  const parts = [
    ...(h > 0 ? [`${h} hour${h === 1 ? '' : 's'}`] : []),
    ...(m > 0 ? [`${m} minute${m === 1 ? '' : 's'}`] : []),
  ];
  return `${exact} (about ${parts.join(' ')})`;
}

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

/** The spec's export v2 burst limit: 60 requests per minute per user. */
export const EXPORT_V2_MINUTE_LIMIT: RateLimit = { limit: 60, windowSeconds: 60, name: 'minute' };

/** The spec's export v2 sustained limit: 5000 requests per day per user. */
export const EXPORT_V2_DAY_LIMIT: RateLimit = { limit: 5000, windowSeconds: 86_400, name: 'day' };

/** The export v2 limits as configured (the spec's unless EXPORT_V2_RATE_LIMIT_* say otherwise). */
export function exportV2Limits(config: Services['config']): RateLimit[] {
  return [
    { ...EXPORT_V2_MINUTE_LIMIT, limit: config.exportV2RateLimitMinute },
    { ...EXPORT_V2_DAY_LIMIT, limit: config.exportV2RateLimitDay, windowSeconds: config.exportV2RateLimitDayWindowSeconds },
  ];
}

/**
 * The export v2 guard, keyed by the token's user: every personal token of a user spends the same
 * budget, on every instance; both limits count every request (a refused one counts against neither).
 */
export function exportV2RateLimit(services: Services, limits: readonly RateLimit[] = exportV2Limits(services.config)): Guard {
  return rateLimitGuard(new RateLimiter(services.redis, services.config.redisPrefix), {
    limits,
    key: (req) => {
      if (req.principal?.kind !== 'user') throw new Error('export v2 rate limit reached without a user');
      return `export_v2:user:${req.principal.id}`;
    },
    style: 'problem',
    per: 'user',
    log: services.log,
  });
}
