import { EXPORT_V1 } from '../../export-v1/declaration.js';
import { V1_DEPRECATED_AT } from '../../deprecation.js';
import { deprecationHeaders } from '../../docs/headers.js';
import type { DocContext, DocDefinition } from '../../../http/openapi.js';
import { headers, parameters, responses, responseSchemas, securitySchemes } from './components.js';
import { EXPORT_DIALECT_DOCS, type ExportDialectDoc } from './dialects.js';
import { info, tags } from './info.js';

/**
 * The export v1 and v1.1 documents' definitions, put together from their parts in this folder (shared
 * by both, told apart by dialects.ts; what they share with export v2 is in
 * ../../export-v2/docs/shared.ts). Their operations are the routes' own `doc` (../status.ts,
 * ../stations.ts, and the reference lists of ../../export-v1/ and ../../export-v1.1/). The schemas are
 * those of src/domain/export-v1/schemas.ts and src/domain/status/summary.ts.
 */
function legacyExportDocument(d: ExportDialectDoc, context: DocContext): DocDefinition {
  const deprecation = d.deprecated ? EXPORT_V1.policy!.headers! : undefined;
  return {
    family: d.family,
    info: info(d, context),
    tags: tags(),
    securitySchemes: securitySchemes(d),
    requestSchemas: {},
    responseSchemas: responseSchemas(d),
    parameters: parameters(),
    headers: { ...headers(context.config), ...(deprecation && (deprecationHeaders(deprecation.Deprecation!, deprecation.Link!, V1_DEPRECATED_AT) as DocDefinition['headers'])) },
    responses: responses(d, context.config),
    everyResponseHeaders: ['X-Request-Id', ...(deprecation ? ['Deprecation', 'Link'] : [])],
    afterAuthenticationHeaders: ['RateLimit-Limit', 'RateLimit-Remaining', 'RateLimit-Reset'],
  };
}

export const exportV1Document = (context: DocContext): DocDefinition => legacyExportDocument(EXPORT_DIALECT_DOCS.v1, context);
export const exportV11Document = (context: DocContext): DocDefinition => legacyExportDocument(EXPORT_DIALECT_DOCS['v1.1'], context);
