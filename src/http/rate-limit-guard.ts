import type { Logger } from 'pino';
import { HttpError, type ErrorStyle } from './errors.js';
import type { Guard } from './family.js';
import type { Request } from './request.js';
import type { RateLimit, RateLimitResult } from '../domain/rate-limits.js';

/**
 * The rate limits as HTTP guards: each request spends its key's budget through a rate limiter (the
 * port below; src/infra/rate-limit.ts's RateLimiter, in Redis, is the platform's), gets the
 * `RateLimit-*` headers, and is refused with 429 and `Retry-After` in its family's wording when a limit
 * is exhausted. The families declare their own limits and keys.
 */

/**
 * The rate limiter the guards spend budgets through, as this core needs it: the infrastructure
 * implements it (src/infra/rate-limit.ts), the composition root hands it to the families.
 */
export interface RateLimiterPort {
  /** Whether checks can be made now (the store connected and answering); while not, requests pass without waiting. */
  readonly ready: boolean;
  /** Checks every limit for `key` and, only if all allow it, counts the request; rejects when the store fails or does not answer in time. */
  hit(key: string, limits: readonly RateLimit[]): Promise<RateLimitResult>;
  /** Logs a check that failed (limits not enforced); `fault` when it is a failure of its own (warned of), not an outage or a wait that ran out. */
  failed(log: Logger, err: unknown, msg: string): 'outage' | 'wait' | 'fault';
}

export interface RateLimitGuardOptions {
  limits: readonly RateLimit[];
  /** Whose budget a request spends; `undefined` lets the request through uncounted. */
  key: (req: Request) => string | undefined;
  /** The family's error style, whose wording the refusal takes (`Request was throttled: ...`, `Rate limit exceeded: ...`). */
  style: ErrorStyle;
  /** Who the limit applies to, for the default description: `per signal originator`. */
  per?: string;
  log: Logger;
}

/** Requests a rate limit refused (metrics count refusals by family from the answers). */
const refused = new WeakSet<Request>();

/** Whether a rate-limit guard refused this request (its 429 is a rate limit's, not another refusal's). */
export function refusedByRateLimit(req: Request): boolean {
  return refused.has(req);
}

/**
 * A guard that spends one request of `key`'s budget under every limit, sets `RateLimit-Limit`,
 * `RateLimit-Remaining` and `RateLimit-Reset` on whatever response follows, and refuses with 429 and
 * `Retry-After` when a limit is exhausted.
 *
 * When Redis is unreachable (not connected, an error, or no answer within the limiter's timeout) the request
 * goes through unlimited and without the headers — a rate limiter must not take the API down with
 * it. During a Redis outage the process's one outage warning says so (src/infra/redis-outage.ts) and
 * this logs at debug only, as when only the limiter's timeout ran out (Redis is then asked whether it
 * is down); another failure is a warning, once until a check succeeds again, with one info line then.
 */
export function rateLimitGuard(limiter: RateLimiterPort, options: RateLimitGuardOptions): Guard {
  let failing = false;
  let warned = false;
  const failOpen = (err: unknown) => {
    if (failing) return;
    failing = true;
    warned = limiter.failed(options.log, err, 'rate limits not enforced: Redis unavailable, requests pass unlimited') === 'fault';
  };
  const recovered = () => {
    if (!failing) return;
    failing = false;
    if (warned) options.log.info('rate limits enforced again');
  };
  const counted = (req: Request, result: RateLimitResult): void => {
    recovered();
    req.responseHeaders['RateLimit-Limit'] = String(result.limit.limit);
    req.responseHeaders['RateLimit-Remaining'] = String(result.remaining);
    req.responseHeaders['RateLimit-Reset'] = String(result.resetSeconds);
    if (result.allowed) return;
    const seconds = result.retryAfterSeconds!;
    const description = result.limit.description ?? describeLimit(result.limit, options.per);
    const wait = describeWait(seconds);
    const detail = options.style.throttled(description, wait);
    refused.add(req);
    throw new HttpError(429, 'throttled', detail, { headers: { 'Retry-After': String(seconds) } });
  };
  // Not an async function: the check's own promise is the only one a request waits for.
  return (req) => {
    const key = options.key(req);
    if (key === undefined) return;
    let check: Promise<RateLimitResult>;
    try {
      // The offline queue would hold a command until a reconnect: while disconnected, do not wait.
      if (!limiter.ready) throw new Error('Redis client not connected');
      check = limiter.hit(key, options.limits);
    } catch (err) {
      failOpen(err);
      return;
    }
    return check.then((result) => counted(req, result), failOpen);
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
export function describeLimit(limit: RateLimit, per?: string, what = 'request'): string {
  const w = limit.windowSeconds;
  const unit = UNITS.find(([seconds]) => w === seconds);
  const window = unit ? unit[1] : `${w} seconds`;
  return `at most ${limit.limit} ${what}${limit.limit === 1 ? '' : 's'} per ${window}${per ? ` per ${per}` : ''}`;
}
