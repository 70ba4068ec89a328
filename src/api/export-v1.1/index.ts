import type { ReferenceData } from '../../../db/queries/reference.js';
import { v11FuelTypeListSchema, vehicleTypeListSchema } from '../../domain/export-v1/schemas.js';
import type { Family, Guard } from '../../http/family.js';
import type { HttpServer } from '../../http/server.js';
import type { TokenFinder } from '../auth.js';
import type { Sql } from '../../../db/connect.js';
import { legacyStationRoutes } from '../export-legacy/stations.js';
import { summaryRoutes, type SummaryDeps } from '../export-legacy/status.js';
import { exportV11Document } from '../export-legacy/docs/document.js';
import { EXPORT_DIALECT_DOCS } from '../export-legacy/docs/dialects.js';
import { fuelTypeDoc, vehicleTypeDoc } from '../export-legacy/docs/reference.js';
import { fuellingOptions, vehicleTypes, referenceApi, type ReferenceFamily } from '../reference.js';
import { EXPORT_V11 } from './declaration.js';

/** export v1.1 as served: its declaration (./declaration.ts), its reference lists and its document. */
const SERVED: ReferenceFamily = {
  ...EXPORT_V11,
  document: { path: '/v1.1/doc', title: 'HRS signal platform: Export API v1.1', listed: 'Export API v1.1 (legacy)', define: (context) => exportV11Document(context) },
  lists: (reference) => ({
    '/v1.1/fuel-type': { reply: fuellingOptions(reference), schema: v11FuelTypeListSchema, doc: fuelTypeDoc(EXPORT_DIALECT_DOCS['v1.1'], reference) },
    '/v1.1/vehicle-type': { reply: vehicleTypes(reference), schema: vehicleTypeListSchema, doc: vehicleTypeDoc(EXPORT_DIALECT_DOCS['v1.1'], reference) },
  }),
};

/** The export v1.1 family and its routes: the reference lists and the five-state summary. */
export function exportV11Api(server: HttpServer, deps: { tokens: TokenFinder; reference: ReferenceData; sql: Sql; baseUrl: () => string; now: () => Date; guards: Guard[] } & SummaryDeps): Family {
  const family = referenceApi(server, SERVED, deps);
  summaryRoutes(server, family, 'v1.1', deps);
  legacyStationRoutes(server, family, 'v1.1', deps);
  return family;
}
