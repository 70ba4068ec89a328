import type { Dialect } from '../../../domain/import-v1/options.js';
import { IMPORT_V1 } from '../../import-v1/index.js';
import { IMPORT_V11 } from '../../import-v1.1/index.js';
import type { LegacyImport } from '../../legacy-import/index.js';

/**
 * What the import v1 and v1.1 documents say differently: the family as its folder declares it
 * (prefix, label, dialect, whether it has the active stations), and whether it is deprecated. Every
 * other word of the two documents is shared (the parts in this folder).
 */
export interface DialectDoc {
  family: 'import_v1' | 'import_v1.1';
  declared: LegacyImport;
  dialect: Dialect;
  /** `v1`, `v1.1`: as the text names the version. */
  version: string;
  deprecated: boolean;
}

/** Made on use: the families' declarations name their documents, which read them back (an import cycle). */
export const dialectDocs = (): Record<Dialect, DialectDoc> => ({
  v1: { family: 'import_v1', declared: IMPORT_V1, dialect: 'v1', version: 'v1', deprecated: true },
  'v1.1': { family: 'import_v1.1', declared: IMPORT_V11, dialect: 'v1.1', version: 'v1.1', deprecated: false },
});

/** The interactive reference of the successor, import v2 (src/api/docs/routes.ts serves it there). */
export const V2_REFERENCE = '/import/v2/doc/';

/** The dialect's signal path: `/import/v1/hrs-availability`. */
export const signalPath = (d: DialectDoc) => `${d.declared.prefix}hrs-availability`;
export const fuelTypePath = (d: DialectDoc) => `${d.declared.prefix}fuel-type`;
export const activeStationsPath = (d: DialectDoc) => `${d.declared.prefix}active-stations`;
