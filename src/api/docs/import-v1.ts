import { V1_DEPRECATED_AT } from '../deprecation.js';
import { IMPORT_V1 } from '../import-v1/index.js';
import { deprecationHeaders } from './headers.js';
import type { DocContext, DocDefinition } from '../../http/openapi.js';
import { headers, requestSchemas, responses, responseSchemas } from './import-v1/components.js';
import { dialectDocs, type DialectDoc } from './import-v1/dialects.js';
import { info, securitySchemes, tags } from './import-v1/info.js';
import { signalOperation } from './import-v1/signals.js';
import { activeStationsOperation, fuelTypeOperation } from './import-v1/stations.js';

/**
 * The import v1 and v1.1 documents' definitions, put together from their parts under
 * src/api/docs/import-v1/ (shared by both, told apart by dialects.ts): the info, the signal
 * endpoint, the fuel-type list, the active stations (v1.1), and the components. The schemas are
 * those of src/domain/import-v1/schemas.ts.
 */
function legacyImportDocument(d: DialectDoc, context: DocContext): DocDefinition {
  const deprecation = d.deprecated ? IMPORT_V1.policy!.headers! : undefined;
  return {
    family: d.family,
    info: info(d, context),
    tags: tags(),
    securitySchemes: securitySchemes(),
    requestSchemas: requestSchemas(d),
    responseSchemas: responseSchemas(d),
    headers: { ...headers(context.config.importV1RateLimit), ...(deprecation && (deprecationHeaders(deprecation.Deprecation!, deprecation.Link!, V1_DEPRECATED_AT) as DocDefinition['headers'])) },
    responses: responses(d, context.config),
    everyResponseHeaders: ['X-Request-Id', ...(deprecation ? ['Deprecation', 'Link'] : [])],
    afterAuthenticationHeaders: ['RateLimit-Limit', 'RateLimit-Remaining', 'RateLimit-Reset'],
    operations: [
      signalOperation(d),
      fuelTypeOperation(d, context.reference),
      ...(d.declared.activeStations ? [activeStationsOperation(d)] : []),
    ],
  };
}

export const importV1Document = (context: DocContext): DocDefinition => legacyImportDocument(dialectDocs().v1, context);
export const importV11Document = (context: DocContext): DocDefinition => legacyImportDocument(dialectDocs()['v1.1'], context);
