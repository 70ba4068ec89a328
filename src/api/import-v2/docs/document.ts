import type { FamilyDocument } from '../../../http/openapi.js';
import { headers, responses, responseSchemas } from './components.js';
import { info, securitySchemes, tags } from './info.js';
import { signalSchemas } from './signals.js';

/**
 * The import v2 document, as the family value declares it (../family.ts): the info, the components
 * (the signal requests' schemas from signals.ts, the rest from components.ts). Its operations are the
 * routes' own `doc` (../signals.ts, ../active-stations.ts).
 */
export const IMPORT_V2_DOCUMENT: FamilyDocument = {
  path: '/import/v2/doc',
  title: 'HRS signal platform: Import API v2',
  listed: 'Import API v2',
  define: (context) => ({
    family: 'import_v2',
    info: info(context),
    tags: tags(),
    securitySchemes: securitySchemes(),
    requestSchemas: signalSchemas(),
    responseSchemas: responseSchemas(),
    headers: headers(context.config.importV2RateLimit),
    responses: responses(context.config),
    everyResponseHeaders: ['X-Request-Id'],
    afterAuthenticationHeaders: ['RateLimit-Limit', 'RateLimit-Remaining', 'RateLimit-Reset'],
  }),
};
