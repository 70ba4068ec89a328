import type { ReferenceData } from '../../../db/queries/reference.js';
import { v1FuelTypeListSchema } from '../../domain/export-v1/schemas.js';
import { PROBLEM_ERRORS } from '../../http/errors.js';
import type { Family, Guard } from '../../http/family.js';
import type { HttpServer } from '../../http/server.js';
import type { TokenFinder } from '../auth.js';
import type { Sql } from '../../../db/connect.js';
import { deprecatedPolicy } from '../deprecation.js';
import { legacyStationRoutes } from '../export-legacy/stations.js';
import { summaryRoutes, type SummaryDeps } from '../export-legacy/status.js';
import { v1FuelTypes, referenceApi, type ReferenceFamily } from '../reference.js';
import { exportV1Document } from '../export-legacy/docs/document.js';
import { exportDialectDocs } from '../export-legacy/docs/dialects.js';
import { fuelTypeDoc } from '../export-legacy/docs/reference.js';

/** export v1: the legacy export API (export v1/v1.1 tokens), deprecated: every response says so and links v1.1's reference. */
export const EXPORT_V1: ReferenceFamily = {
  name: 'export_v1',
  prefix: '/v1/',
  label: 'export v1',
  accepts: 'export_v1',
  errors: PROBLEM_ERRORS,
  policy: deprecatedPolicy('/v1.1/doc/'),
  lists: (reference) => ({ '/v1/fuel-type': { reply: v1FuelTypes(reference), schema: v1FuelTypeListSchema, doc: fuelTypeDoc(exportDialectDocs().v1, reference) } }),
  document: { path: '/v1/doc', title: 'HRS signal platform: Export API v1', define: (context) => exportV1Document(context) },
};

/** The export v1 family and its routes: the v1 fuel types and the five-state summary in v1 codes. */
export function exportV1Api(server: HttpServer, deps: { tokens: TokenFinder; reference: ReferenceData; sql: Sql; baseUrl: () => string; guards: Guard[] } & SummaryDeps): Family {
  const family = referenceApi(server, EXPORT_V1, deps);
  summaryRoutes(server, family, 'v1', deps);
  legacyStationRoutes(server, family, 'v1', deps);
  return family;
}
