import { EXPORT_V1 } from '../export-v1/index.js';
import { V1_DEPRECATED_AT } from '../deprecation.js';
import { deprecationHeaders } from './headers.js';
import type { DocContext, DocDefinition, OperationDoc } from '../../http/openapi.js';
import { headers, parameters, responses, responseSchemas, securitySchemes } from './export-v1/components.js';
import { exportDialectDocs, type ExportDialectDoc } from './export-v1/dialects.js';
import { info, tags } from './export-v1/info.js';
import {
  fuelTypeOperation,
  getPhotoOperation,
  getStationOperation,
  getSummaryOperation,
  listEventsOperation,
  listStationsOperation,
  listSummaryOperation,
  vehicleTypeOperation,
} from './export-v1/operations.js';

/**
 * The export v1 and v1.1 documents' definitions, put together from their parts under
 * src/api/docs/export-v1/ (shared by both, told apart by dialects.ts). The schemas are those of
 * src/domain/export-v1/schemas.ts and src/domain/status/summary.ts.
 */
function legacyExportDocument(d: ExportDialectDoc, context: DocContext): DocDefinition {
  const deprecation = d.deprecated ? EXPORT_V1.policy!.headers! : undefined;
  // A deprecated generation's operations are all marked so.
  const marked = (operation: OperationDoc): OperationDoc => (d.deprecated ? { ...operation, operation: { ...operation.operation, deprecated: true } } : operation);
  return {
    family: d.family,
    info: info(d, context),
    tags: tags(),
    securitySchemes: securitySchemes(d),
    requestSchemas: {},
    responseSchemas: responseSchemas(d),
    parameters: parameters(d),
    headers: { ...headers(context.config), ...(deprecation && (deprecationHeaders(deprecation.Deprecation!, deprecation.Link!, V1_DEPRECATED_AT) as DocDefinition['headers'])) },
    responses: responses(d, context.config),
    everyResponseHeaders: ['X-Request-Id', ...(deprecation ? ['Deprecation', 'Link'] : [])],
    afterAuthenticationHeaders: ['RateLimit-Limit', 'RateLimit-Remaining', 'RateLimit-Reset'],
    operations: [
      listSummaryOperation(d),
      getSummaryOperation(d),
      listStationsOperation(d),
      getStationOperation(d),
      listEventsOperation(d),
      getPhotoOperation(d),
      fuelTypeOperation(d, context.reference),
      ...(d.dialect === 'v1.1' ? [vehicleTypeOperation(d, context.reference)] : []),
    ].map(marked),
  };
}

export const exportV1Document = (context: DocContext): DocDefinition => legacyExportDocument(exportDialectDocs().v1, context);
export const exportV11Document = (context: DocContext): DocDefinition => legacyExportDocument(exportDialectDocs()['v1.1'], context);
