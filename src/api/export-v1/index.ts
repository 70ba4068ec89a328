import type { ReferenceData } from '../../../db/queries/reference.js';
import { v1FuelTypeListSchema } from '../../domain/export-v1/schemas.js';
import type { Family, Guard } from '../../http/family.js';
import type { HttpServer } from '../../http/server.js';
import type { TokenFinder } from '../auth.js';
import type { Sql } from '../../../db/connect.js';
import { legacyStationRoutes } from '../export-legacy/stations.js';
import { summaryRoutes, type SummaryDeps } from '../export-legacy/status.js';
import { v1FuelTypes, referenceApi, type ReferenceFamily } from '../reference.js';
import { exportV1Document } from '../export-legacy/docs/document.js';
import { EXPORT_DIALECT_DOCS } from '../export-legacy/docs/dialects.js';
import { fuelTypeDoc } from '../export-legacy/docs/reference.js';
import { EXPORT_V1 } from './declaration.js';

/** export v1 as served: its declaration (./declaration.ts), its v1 fuel types and its document. */
const SERVED: ReferenceFamily = {
  ...EXPORT_V1,
  lists: (reference) => ({ '/v1/fuel-type': { reply: v1FuelTypes(reference), schema: v1FuelTypeListSchema, doc: fuelTypeDoc(EXPORT_DIALECT_DOCS.v1, reference) } }),
  document: { path: '/v1/doc', title: 'HRS signal platform: Export API v1', listed: 'Export API v1 (legacy, frozen)', define: (context) => exportV1Document(context) },
};

/** The export v1 family and its routes: the v1 fuel types and the five-state summary in v1 codes. */
export function exportV1Api(server: HttpServer, deps: { tokens: TokenFinder; reference: ReferenceData; sql: Sql; baseUrl: () => string; now: () => Date; guards: Guard[] } & SummaryDeps): Family {
  const family = referenceApi(server, SERVED, deps);
  summaryRoutes(server, family, 'v1', deps);
  legacyStationRoutes(server, family, 'v1', deps);
  return family;
}
