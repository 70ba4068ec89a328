/**
 * Rate limits as values: what a family declares (a number of requests per window, named and described)
 * and what a check answers. The HTTP core's guard reads them (src/http/rate-limit-guard.ts, which
 * declares the limiter it needs), the limiter in Redis computes them (src/infra/rate-limit.ts).
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
