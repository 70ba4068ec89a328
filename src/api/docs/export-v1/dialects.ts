import type { Dialect } from '../../../domain/import-v1/options.js';
import { EXPORT_V1 } from '../../export-v1/index.js';
import { EXPORT_V11 } from '../../export-v1.1/index.js';
import type { ReferenceFamily } from '../../reference.js';

/**
 * What the export v1 and v1.1 documents say differently: the family as its folder declares it
 * (prefix, label), the dialect of its codes, and whether it is frozen. Every other word of the two
 * documents is shared (the parts in this folder).
 */
export interface ExportDialectDoc {
  family: 'export_v1' | 'export_v1.1';
  declared: ReferenceFamily;
  dialect: Dialect;
  /** `v1`, `v1.1`: as the text names the version. */
  version: string;
  frozen: boolean;
  /** Deprecated (spec, Versioning): its operations are marked so, its responses carry `Deprecation` and `Link`. */
  deprecated: boolean;
}

/** Made on use: the families' declarations name their documents, which read them back (an import cycle). */
export const exportDialectDocs = (): Record<Dialect, ExportDialectDoc> => ({
  v1: { family: 'export_v1', declared: EXPORT_V1, dialect: 'v1', version: 'v1', frozen: true, deprecated: true },
  'v1.1': { family: 'export_v1.1', declared: EXPORT_V11, dialect: 'v1.1', version: 'v1.1', frozen: false, deprecated: false },
});

/** The interactive reference of the successor for station data, export v2 (src/api/docs/routes.ts serves it there). */
export const V2_REFERENCE = '/v2/doc/';

/** A path of the dialect's family: `path(d, 'hrs/:hrs_id')` → `/v1.1/hrs/:hrs_id`. */
export const pathOf = (d: ExportDialectDoc, rest: string) => `${d.declared.prefix}${rest}`;
