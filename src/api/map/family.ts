import type { Logger } from 'pino';
import { PROBLEM_ERRORS } from '../../http/errors.js';
import type { Family } from '../../http/family.js';
import type { FamilyPolicy } from '../../http/policy.js';
import { rateLimitGuard } from '../../http/rate-limit-guard.js';
import type { RateLimit, RateLimiter } from '../../infra/rate-limit.js';

/** The licence of what the public map publishes, as export v2's: CC BY 4.0, as a `Link` header (RFC 8288). */
export const MAP_LICENCE_LINK = '<https://creativecommons.org/licenses/by/4.0/>; rel="license"';

/** Open data for any origin: no credential is ever sent, so `*` and nothing varying by `Origin`. */
export const MAP_POLICY: FamilyPolicy = {
  headers: { Link: MAP_LICENCE_LINK },
  cors: {
    methods: ['GET', 'HEAD', 'OPTIONS'],
    allowHeaders: ['If-None-Match', 'If-Modified-Since'],
    exposeHeaders: ['ETag', 'Last-Modified', 'Link', 'RateLimit-Limit', 'RateLimit-Remaining', 'RateLimit-Reset', 'Retry-After', 'X-Request-Id'],
    maxAgeSeconds: 86_400,
  },
};

/** The public map's limit: MAP_RATE_LIMIT requests per minute per client address (default 120). */
export const MAP_LIMIT: RateLimit = { limit: 120, windowSeconds: 60, name: 'minute' };
/**
 * The public map's daily cap: MAP_RATE_LIMIT_DAY requests per day (a sliding 24 hours) per client
 * address (default 2000). A driver's day is a few hundred (a page load spends the feed and the
 * stream's upgrade, an opened station its detail, photo and forecast); the per-minute limit alone would let one
 * address read 172,800 a day.
 */
export const MAP_DAY_LIMIT: RateLimit = { limit: 2000, windowSeconds: 86_400, name: 'day' };
/** Whom the limit counts, in the refusal's words. */
export const MAP_PER = 'client address';

export interface MapLimitDeps {
  limiter: RateLimiter;
  log: Logger;
  /** Requests per minute per client address (MAP_RATE_LIMIT). */
  perMinute: number;
  /** Requests per day per client address (MAP_RATE_LIMIT_DAY). */
  perDay: number;
}

/** The map's limits as configured: per minute, then per day. */
export function mapLimits(settings: Pick<MapLimitDeps, 'perMinute' | 'perDay'>): RateLimit[] {
  return [
    { ...MAP_LIMIT, limit: settings.perMinute },
    { ...MAP_DAY_LIMIT, limit: settings.perDay },
  ];
}

/**
 * The public map's family: `/map/…`, no credential, problem bodies, the licence and open CORS. Every
 * route and the stream's upgrade spend one request of the client address's budget (counted in Redis,
 * so every instance shares it; the address honours TRUST_PROXY): its routes are public, and the family
 * runs its guard on them (`guardsOnPublicRoutes`); both limits count every such request, and one refused
 * counts against neither. Without limits (`limits` undefined) nothing is counted.
 */
export function mapFamily(limits?: MapLimitDeps): Family {
  const guards = limits
    ? [
        rateLimitGuard(limits.limiter, {
          limits: mapLimits(limits),
          key: (req) => `map:address:${req.clientAddress}`,
          style: PROBLEM_ERRORS,
          per: MAP_PER,
          log: limits.log,
        }),
      ]
    : [];
  return { name: 'map', prefix: '/map/', errors: PROBLEM_ERRORS, policy: MAP_POLICY, guards, guardsOnPublicRoutes: true };
}
