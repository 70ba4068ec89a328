import type { z } from 'zod';
import {
  v11StationListSchema,
  v11StationRecordSchema,
  v11SummaryListSchema,
  v1StationListSchema,
  v1StationRecordSchema,
  v1SummaryListSchema,
} from '../../../domain/export-v1/schemas.js';
import type { Dialect } from '../../../domain/import-v1/options.js';
import { stationSummarySchema, v1StationSummarySchema } from '../../../domain/status/summary.js';
import { EXPORT_V1 } from '../../export-v1/declaration.js';
import { EXPORT_V11 } from '../../export-v1.1/declaration.js';
import type { RouteDoc } from '../../../http/contract.js';
import type { ReferenceDeclaration } from '../../reference.js';

/**
 * What the export v1 and v1.1 documents say differently: the family as its folder declares it
 * (prefix, label), the dialect of its codes, and whether it is frozen. Every other word of the two
 * documents is shared (the parts in this folder).
 */
export interface ExportDialectDoc {
  family: 'export_v1' | 'export_v1.1';
  declared: ReferenceDeclaration;
  dialect: Dialect;
  /** `v1`, `v1.1`: as the text names the version. */
  version: string;
  frozen: boolean;
  /** Deprecated (spec, Versioning): its operations are marked so, its responses carry `Deprecation` and `Link`. */
  deprecated: boolean;
  /** The bodies its routes answer with in the dialect's codes (their `response`; its document's schemas of the same names). */
  bodies: LegacyBodies;
}

export interface LegacyBodies {
  StationList: z.ZodType;
  Station: z.ZodType;
  StatusSummaryList: z.ZodType;
  StatusSummary: z.ZodType;
}

const BODIES: Record<Dialect, LegacyBodies> = {
  v1: {
    StationList: v1StationListSchema,
    Station: v1StationRecordSchema,
    StatusSummaryList: v1SummaryListSchema,
    StatusSummary: v1StationSummarySchema,
  },
  'v1.1': {
    StationList: v11StationListSchema,
    Station: v11StationRecordSchema,
    StatusSummaryList: v11SummaryListSchema,
    StatusSummary: stationSummarySchema,
  },
};

export const EXPORT_DIALECT_DOCS: Record<Dialect, ExportDialectDoc> = {
  v1: { family: 'export_v1', declared: EXPORT_V1, dialect: 'v1', version: 'v1', frozen: true, deprecated: true, bodies: BODIES.v1 },
  'v1.1': { family: 'export_v1.1', declared: EXPORT_V11, dialect: 'v1.1', version: 'v1.1', frozen: false, deprecated: false, bodies: BODIES['v1.1'] },
};

/** The interactive reference of the successor for station data, export v2 (src/api/docs/routes.ts serves it there). */
export const V2_REFERENCE = '/v2/doc/';

/** What the dialect calls the entries of a summary and the codes of a record. */
export const words = (d: ExportDialectDoc) => (d.dialect === 'v1' ? 'fuel type' : 'fuelling option');

/** A route's operation in the dialect's document: a deprecated generation's are all marked so. */
export const legacyDoc = (d: ExportDialectDoc, doc: RouteDoc): RouteDoc => (d.deprecated ? { ...doc, deprecated: true } : doc);
