import type { Logger } from 'pino';
import type { Generation } from '../../domain/vocabulary.js';
import { DRF_ERRORS } from '../../http/errors.js';
import type { Family, Observer } from '../../http/family.js';
import type { FamilyPolicy } from '../../http/policy.js';
import type { RateLimit, RateLimiter } from '../../infra/rate-limit.js';
import { originatorLimitGuard, tokenAuth, type TokenFinder } from '../auth.js';
import { legacyImportDocument } from './docs/document.js';
import type { LegacyImport } from './index.js';

/**
 * The legacy import families (v1 and v1.1) as their folders declare them. The spec names no rate limit
 * for v1 and legacy originators were never told of one, so (as export v1's 600 is ten times export v2's
 * burst) both take 3000 requests per minute per signal originator (IMPORT_V1_RATE_LIMIT), ten times
 * import v2's: a monitoring system posting one request per station every minute for hundreds of stations
 * never meets it, only a runaway client does. ONE budget shared by v1 and v1.1 (one token generation),
 * apart from v2's.
 */
export const IMPORT_V1_LIMIT: RateLimit = { limit: 3000, windowSeconds: 60, name: 'minute' };

export interface LegacyImportFamilyDeps {
  tokens: TokenFinder;
  limiter: RateLimiter;
  /** Requests per minute per originator across v1 and v1.1 (IMPORT_V1_RATE_LIMIT). */
  perMinute: number;
  log: Logger;
  /** The call log (../call-log.ts). */
  observers: Observer[];
}

export interface LegacyFamilyName {
  name: string;
  prefix: string;
  /** How refusals name the family (`import v1`). */
  label: string;
  accepts: Generation;
  /** Headers on every response of the family (a deprecated generation's `Deprecation` and `Link`). */
  policy?: FamilyPolicy;
}

/**
 * Alike in shape to import v2's family (../import-v2/family.ts), which is one fixed generation: this one
 * is declared per generation (name, prefix, label, a deprecation policy) and spends its own budget
 * (`import_v1:` keys, IMPORT_V1_LIMIT), one for v1 and v1.1 together.
 */
export function legacyImportFamily(declared: LegacyImport, deps: LegacyImportFamilyDeps): Family {
  return {
    name: declared.name,
    prefix: declared.prefix,
    auth: tokenAuth(deps.tokens, { label: declared.label, accepts: declared.accepts }),
    errors: DRF_ERRORS,
    policy: declared.policy,
    document: legacyImportDocument(declared),
    guards: [originatorLimitGuard(deps.limiter, { ...IMPORT_V1_LIMIT, limit: deps.perMinute }, 'import_v1', deps.log)],
    observers: deps.observers,
  };
}
