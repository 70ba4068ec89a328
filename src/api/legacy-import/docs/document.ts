import { V1_DEPRECATED_AT } from '../../deprecation.js';
import { deprecationHeaders } from '../../docs/headers.js';
import type { DocDefinition, FamilyDocument } from '../../../http/openapi.js';
import type { LegacyImport } from '../declaration.js';
import { headers, requestSchemas, responses, responseSchemas } from './components.js';
import { dialectDoc } from './dialects.js';
import { info, securitySchemes, tags } from './info.js';

/**
 * The import v1 and v1.1 documents, as the legacy import family declares them (one for each of its
 * folders, told apart by dialects.ts): the info and the components, whose schemas are those of
 * src/domain/import-v1/schemas.ts. The operations are the routes' own `doc` (signals.ts, stations.ts).
 */
export function legacyImportDocument(declared: LegacyImport): FamilyDocument {
  return {
    path: `${declared.prefix}doc`,
    title: `HRS signal platform: Import API ${declared.dialect}`,
    listed: declared.listed,
    define: (context) => {
      const d = dialectDoc(declared);
      const deprecation = d.deprecated ? declared.policy!.headers! : undefined;
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
      };
    },
  };
}
