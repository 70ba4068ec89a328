import type { Logger } from 'pino';
import { PROBLEM_ERRORS } from '../../http/errors.js';
import type { Guard } from '../../http/family.js';
import type { RateLimit, RateLimiter } from '../../infra/rate-limit.js';
import { rateLimitGuard } from '../../http/rate-limit-guard.js';
import { principalOf } from '../auth.js';

/**
 * The rate limits of export v1 and v1.1. The spec names none; two protect the service:
 * - an export v1/v1.1 token: 600 requests per minute (EXPORT_V1_RATE_LIMIT), one budget for v1 and
 *   v1.1 (one token generation), ten times export v2's per-user burst: legacy clients were never told
 *   of a limit and often serve an app's users through one token, so only abuse should meet it;
 * - the shared sandbox token: 60 requests per minute per client address (SANDBOX_RATE_LIMIT), so one
 *   client cannot use up a budget everyone shares.
 * Both count in Redis (every instance shares them) and refuse with 429, `Retry-After` and a problem body.
 */

export const EXPORT_V1_LIMIT: RateLimit = { limit: 600, windowSeconds: 60, name: 'minute' };
export const SANDBOX_LIMIT: RateLimit = { limit: 60, windowSeconds: 60, name: 'minute' };
/** Whom the sandbox limit counts, in the refusal's words. */
export const SANDBOX_PER = 'client address on the shared sandbox token';

export interface LegacyExportLimitDeps {
  limiter: RateLimiter;
  log: Logger;
  /** Requests per minute per export v1/v1.1 token (EXPORT_V1_RATE_LIMIT). */
  perMinute: number;
  /** Sandbox requests per minute per client address (SANDBOX_RATE_LIMIT). */
  sandboxPerMinute: number;
}

/** The guards both legacy export families take: one limit per token, one per client address for the sandbox token. */
export function legacyExportGuards(deps: LegacyExportLimitDeps): Guard[] {
  return [
    rateLimitGuard(deps.limiter, {
      limits: [{ ...EXPORT_V1_LIMIT, limit: deps.perMinute }],
      key: (req) => {
        const principal = principalOf(req);
        return principal === undefined || principal.kind === 'admin' || principal.kind === 'sandbox' ? undefined : `export_v1:token:${principal.tokenId}`;
      },
      style: PROBLEM_ERRORS,
      per: 'token',
      log: deps.log,
    }),
    rateLimitGuard(deps.limiter, {
      limits: [{ ...SANDBOX_LIMIT, limit: deps.sandboxPerMinute }],
      key: (req) => (principalOf(req)?.kind === 'sandbox' ? `export_v1:sandbox:${req.clientAddress}` : undefined),
      style: PROBLEM_ERRORS,
      per: SANDBOX_PER,
      log: deps.log,
    }),
  ];
}
