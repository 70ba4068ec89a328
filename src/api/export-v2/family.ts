import type { Logger } from 'pino';
import { PROBLEM_ERRORS } from '../../http/errors.js';
import type { Family } from '../../http/family.js';
import type { FamilyPolicy } from '../../http/policy.js';
import type { RateLimit, RateLimiter } from '../../infra/rate-limit.js';
import { rateLimitGuard } from '../../http/rate-limit-guard.js';
import { tokenAuth, userOf, type TokenFinder } from '../auth.js';
import { EXPORT_V2_DOCUMENT } from './docs/document.js';

/** The licence of everything export v2 publishes, as a `Link` header (RFC 8288). */
export const EXPORT_V2_LICENCE_LINK = '<https://creativecommons.org/licenses/by/4.0/>; rel="license"';

/**
 * Export v2 (`/v2/...`): open data under CC BY 4.0, readable by browser scripts of any origin. No
 * credentials mode is needed (the token travels in `Authorization`, not a cookie), so the origin is
 * `*` and nothing varies by `Origin`.
 */
export const EXPORT_V2_POLICY: FamilyPolicy = {
  headers: { Link: EXPORT_V2_LICENCE_LINK },
  cors: {
    methods: ['GET', 'HEAD', 'OPTIONS'],
    allowHeaders: ['Authorization', 'If-Modified-Since', 'Content-Type'],
    exposeHeaders: ['RateLimit-Limit', 'RateLimit-Remaining', 'RateLimit-Reset', 'Retry-After', 'Last-Modified', 'Link', 'X-Request-Id'],
    maxAgeSeconds: 86_400,
  },
};

/** The spec's export v2 burst limit: 60 requests per minute per user. */
export const EXPORT_V2_MINUTE_LIMIT: RateLimit = { limit: 60, windowSeconds: 60, name: 'minute' };

/** The spec's export v2 sustained limit: 5000 requests per day per user. */
export const EXPORT_V2_DAY_LIMIT: RateLimit = { limit: 5000, windowSeconds: 86_400, name: 'day' };

/** The export v2 limits as configured (the spec's unless EXPORT_V2_RATE_LIMIT_* say otherwise). */
export interface ExportV2LimitSettings {
  exportV2RateLimitMinute: number;
  exportV2RateLimitDay: number;
  exportV2RateLimitDayWindowSeconds: number;
}

export function exportV2Limits(settings: ExportV2LimitSettings): RateLimit[] {
  return [
    { ...EXPORT_V2_MINUTE_LIMIT, limit: settings.exportV2RateLimitMinute },
    { ...EXPORT_V2_DAY_LIMIT, limit: settings.exportV2RateLimitDay, windowSeconds: settings.exportV2RateLimitDayWindowSeconds },
  ];
}

export interface ExportV2FamilyDeps {
  tokens: TokenFinder;
  limiter: RateLimiter;
  limits: readonly RateLimit[];
  log: Logger;
}

/**
 * Export v2 in one place: paths under `/v2/`, personal tokens, RFC 9457 problem bodies, the licence and
 * CORS on every response, and both limits keyed by the token's user: every personal token of a user
 * spends the same budget, on every instance; both count every request (a refused one counts against neither).
 */
export function exportV2Family(deps: ExportV2FamilyDeps): Family {
  return {
    name: 'export_v2',
    prefix: '/v2/',
    auth: tokenAuth(deps.tokens, { label: 'export v2', accepts: 'export_v2' }),
    errors: PROBLEM_ERRORS,
    policy: EXPORT_V2_POLICY,
    document: EXPORT_V2_DOCUMENT,
    guards: [
      rateLimitGuard(deps.limiter, {
        limits: deps.limits,
        key: (req) => `export_v2:user:${userOf(req)}`,
        style: PROBLEM_ERRORS,
        per: 'user',
        log: deps.log,
      }),
    ],
  };
}
