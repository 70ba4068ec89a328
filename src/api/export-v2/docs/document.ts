import type { DocContext, DocDefinition, FamilyDocument } from '../../../http/openapi.js';
import { historyPageSchema, reliabilitySchema } from '../../../domain/export-v2/history.js';
import { forecastSchema } from '../../../domain/export-v2/forecast.js';
import { headers, parameters, responses, responseSchemas, securitySchemes } from './components.js';
import { alertAcceptedSchema } from '../../../domain/alerts/schemas.js';
import { historyResponses } from './history.js';
import { geoSchemas } from './geo.js';
import { deltaResponses, deltaSchemas } from './delta.js';
import { info, tags } from './info.js';
import { webhookPayloadSchemas, webhooks } from './webhooks.js';

/**
 * The export v2 document's definition: the info and tags, the components (./components.ts, the
 * history extension's from ./history.ts, the geo extension's from ./geo.ts, the delta's from ./delta.ts). Its operations are the routes' own `doc` (../stations.ts,
 * ../status.ts, ../history.ts, ../forecast.ts, ../index.ts), the status stream's (./push.ts, on its socket route) and
 * the DATEX II publications' (../../datex2/docs.ts: same tokens and limits, no document of their own)
 * and the public map's feed (../../map/docs.ts: public, limited per client address). Its `webhooks` are
 * the messages webhook subscriptions receive (./webhooks.ts).
 */
export function exportV2Document(context: DocContext): DocDefinition {
  return {
    family: 'export_v2',
    alsoFamilies: ['datex2'],
    // The public map's feed, detail, photo and stream (../../map/docs.ts); its page and files are not operations.
    alsoPublic: ['/map/v1/stations', '/map/v1/stream', '/map/v1/alerts'],
    info: info(context),
    tags: tags(),
    securitySchemes: securitySchemes(),
    requestSchemas: {},
    responseSchemas: { ...responseSchemas(), Reliability: reliabilitySchema, HistoryPage: historyPageSchema, Forecast: forecastSchema, AlertAccepted: alertAcceptedSchema, ...geoSchemas(), ...deltaSchemas(), ...webhookPayloadSchemas() },
    parameters: parameters(),
    headers: headers(context.config),
    responses: { ...responses(context.config), ...historyResponses(), ...deltaResponses() },
    everyResponseHeaders: ['X-Request-Id', 'Link'],
    afterAuthenticationHeaders: ['RateLimit-Limit', 'RateLimit-Remaining', 'RateLimit-Reset'],
    // The messages POSTed to the endpoints of webhook subscriptions (./webhooks.ts).
    webhooks: webhooks(context.version),
  };
}

export const EXPORT_V2_DOCUMENT: FamilyDocument = { path: '/v2/doc', title: 'HRS signal platform: Export API v2', listed: 'Export API v2', define: exportV2Document };
