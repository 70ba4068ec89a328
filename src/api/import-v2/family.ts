import type { Logger } from 'pino';
import { DRF_ERRORS } from '../../http/errors.js';
import type { Family, Observer } from '../../http/family.js';
import type { RateLimit, RateLimiter } from '../../infra/rate-limit.js';
import { originatorLimitGuard, tokenAuth, type TokenFinder } from '../auth.js';
import { IMPORT_V2_DOCUMENT } from './docs/document.js';

/** The spec's import v2 limit: 300 requests per minute per signal originator, across all import v2 endpoints. */
export const IMPORT_V2_LIMIT: RateLimit = { limit: 300, windowSeconds: 60, name: 'minute' };

export interface ImportV2FamilyDeps {
  tokens: TokenFinder;
  limiter: RateLimiter;
  /** Requests per minute per originator (IMPORT_V2_RATE_LIMIT; the spec's 300 unless raised for load tests). */
  perMinute: number;
  log: Logger;
  /** The call log (./call-log.ts). */
  observers: Observer[];
}

/**
 * Import v2 in one place: paths under `/import/v2/`, import v2 tokens, the spec's error bodies
 * (`{"detail"}`, arrays aligned with the request), no licence or CORS headers, one budget per signal
 * originator across every endpoint, every answered call offered to the call log, and its document
 * (./docs/document.ts) at `/import/v2/doc/`. It is declared as every family is (../export-v2/family.ts):
 * the fields are what the HTTP core reads, and each family's values (prefix, auth, errors, limits) are its own.
 */
export function importV2Family(deps: ImportV2FamilyDeps): Family {
  return {
    name: 'import_v2',
    prefix: '/import/v2/',
    auth: tokenAuth(deps.tokens, { label: 'import v2', accepts: 'import_v2' }),
    errors: DRF_ERRORS,
    guards: [originatorLimitGuard(deps.limiter, { ...IMPORT_V2_LIMIT, limit: deps.perMinute }, 'import_v2', deps.log)],
    observers: deps.observers,
    document: IMPORT_V2_DOCUMENT,
  };
}
