import type { ReferenceData } from '../../../db/queries/reference.js';
import type { Dialect } from '../../domain/import-v1/validate.js';
import type { Generation } from '../../domain/vocabulary.js';
import type { Reply } from '../../http/errors.js';
import type { FamilyPolicy } from '../../http/policy.js';
import type { RateLimit } from '../../infra/rate-limit.js';

/**
 * The legacy import families (v1 and v1.1) as their folders declare them. The spec names no rate limit
 * for v1 and legacy originators were never told of one, so (as export v1's 600 is ten times export v2's
 * burst) both take 3000 requests per minute per signal originator (IMPORT_V1_RATE_LIMIT), ten times
 * import v2's: a monitoring system posting one request per station every minute for hundreds of stations
 * never meets it, only a runaway client does. ONE budget shared by v1 and v1.1 (one token generation),
 * apart from v2's.
 */
export const IMPORT_V1_LIMIT: RateLimit = { limit: 3000, windowSeconds: 60, name: 'minute' };

export interface LegacyFamilyName {
  name: string;
  prefix: string;
  /** How refusals name the family (`import v1`). */
  label: string;
  accepts: Generation;
  /** Headers on every response of the family (a deprecated generation's `Deprecation` and `Link`). */
  policy?: FamilyPolicy;
}

/** A legacy import family as its folder (src/api/import-v1/, src/api/import-v1.1/) declares it. */
export interface LegacyImport extends LegacyFamilyName {
  dialect: Dialect;
  /** The reference list `GET {prefix}fuel-type` serves, made once from the reference data. */
  fuelTypes: (reference: ReferenceData) => Reply;
  /** Whether it has `GET {prefix}active-stations` (v1.1). */
  activeStations: boolean;
  /** What the service's index calls its reference: `Import API v1 (legacy, deprecated)`. */
  listed: string;
}
