import type { DocContext, DocDefinition } from './openapi.js';
import { headers, responses, responseSchemas } from './import-v2/components.js';
import { info, securitySchemes, tags } from './import-v2/info.js';
import { signalOperations, signalSchemas } from './import-v2/signals.js';
import { activeStationsOperation } from './import-v2/stations.js';

/**
 * The import v2 document's definition, put together from its parts under src/api/docs/import-v2/:
 * the info, the signal endpoints (one per category, from categories.ts), the active stations
 * endpoint, and the components.
 */
export function importV2Document(context: DocContext): DocDefinition {
  return {
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
    operations: [...signalOperations(), activeStationsOperation()],
  };
}
