import type { Logger } from 'pino';
import { DRF_ERRORS } from '../../http/errors.js';
import type { Family, Observer } from '../../http/family.js';
import type { RateLimiter } from '../../infra/rate-limit.js';
import { originatorLimitGuard, tokenAuth, type TokenFinder } from '../auth.js';
import { IMPORT_V1_LIMIT, type LegacyImport } from './declaration.js';
import { legacyImportDocument } from './docs/document.js';

export interface LegacyImportFamilyDeps {
  tokens: TokenFinder;
  limiter: RateLimiter;
  /** Requests per minute per originator across v1 and v1.1 (IMPORT_V1_RATE_LIMIT). */
  perMinute: number;
  log: Logger;
  /** The call log (../call-log.ts). */
  observers: Observer[];
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
