import type { Dialect } from '../../../domain/import-v1/options.js';
import type { LegacyImport } from '../declaration.js';

/**
 * What the import v1 and v1.1 documents say differently: the family as its folder declares it
 * (prefix, label, dialect, whether it has the active stations), and whether it is deprecated. Every
 * other word of the two documents is shared (the parts in this folder).
 */
export interface DialectDoc {
  family: string;
  declared: LegacyImport;
  dialect: Dialect;
  /** `v1`, `v1.1`: as the text names the version. */
  version: string;
  /** Deprecated: its responses carry `Deprecation` (its policy's headers) and its operations are marked so. */
  deprecated: boolean;
}

export const dialectDoc = (declared: LegacyImport): DialectDoc => ({
  family: declared.name,
  declared,
  dialect: declared.dialect,
  version: declared.dialect,
  deprecated: declared.policy?.headers?.Deprecation !== undefined,
});

/** The interactive reference of the successor, import v2 (src/api/docs/routes.ts serves it there). */
export const V2_REFERENCE = '/import/v2/doc/';

/** The dialect's signal path: `/import/v1/hrs-availability`. */
export const signalPath = (d: DialectDoc) => `${d.declared.prefix}hrs-availability`;
export const fuelTypePath = (d: DialectDoc) => `${d.declared.prefix}fuel-type`;
export const activeStationsPath = (d: DialectDoc) => `${d.declared.prefix}active-stations`;
