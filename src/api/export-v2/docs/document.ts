import type { DocContext, DocDefinition, FamilyDocument } from '../../../http/openapi.js';
import { historyPageSchema, reliabilitySchema } from '../../../domain/export-v2/history.js';
import { headers, parameters, responses, responseSchemas, securitySchemes } from './components.js';
import { historyParameters, historyResponses } from './history.js';
import { geoParameters, geoSchemas } from './geo.js';
import { info, tags } from './info.js';

/**
 * The export v2 document's definition: the info and tags, the components (./components.ts, the
 * history extension's from ./history.ts, the geo extension's from ./geo.ts). Its operations are the routes' own `doc` (../stations.ts,
 * ../status.ts, ../history.ts, ../index.ts), the status stream's (./push.ts, on its socket route) and
 * the DATEX II publications' (../../datex2/docs.ts: same tokens and limits, no document of their own).
 */
export function exportV2Document(context: DocContext): DocDefinition {
  return {
    family: 'export_v2',
    alsoFamilies: ['datex2'],
    info: info(context),
    tags: tags(),
    securitySchemes: securitySchemes(),
    requestSchemas: {},
    responseSchemas: { ...responseSchemas(), Reliability: reliabilitySchema, HistoryPage: historyPageSchema, ...geoSchemas() },
    parameters: { ...parameters(), ...historyParameters(), ...geoParameters() },
    headers: headers(context.config),
    responses: { ...responses(context.config), ...historyResponses() },
    everyResponseHeaders: ['X-Request-Id', 'Link'],
    afterAuthenticationHeaders: ['RateLimit-Limit', 'RateLimit-Remaining', 'RateLimit-Reset'],
  };
}

export const EXPORT_V2_DOCUMENT: FamilyDocument = { path: '/v2/doc', title: 'HRS signal platform: Export API v2', define: exportV2Document };
