import type { DocContext, DocDefinition } from '../../http/openapi.js';
import { headers, parameters, responses, responseSchemas, securitySchemes } from './export-v2/components.js';
import { info, tags } from './export-v2/info.js';
import { streamStatusOperation } from './export-v2/push.js';
import { listFuelTypesOperation, listVehicleTypesOperation } from './export-v2/reference.js';
import { getPhotoOperation, getStationOperation, listEventsOperation, listStationsOperation } from './export-v2/stations.js';
import { getStatusOperation, listStatusOperation } from './export-v2/status.js';
import { historyOperation, historyParameters, historyResponses, reliabilityOperation } from './export-v2/history.js';
import { historyPageSchema, reliabilitySchema } from '../../domain/export-v2/history.js';
import { datex2StatusOperation, datex2TableOperation } from './export-v2/datex2.js';

/**
 * The export v2 document's definition, put together from its parts under src/api/docs/export-v2/:
 * the info and tags, the components, and the operations by path group, in the document's order.
 */
export function exportV2Document(context: DocContext): DocDefinition {
  return {
    family: 'export_v2',
    alsoFamilies: ['datex2'],
    info: info(context),
    tags: tags(),
    securitySchemes: securitySchemes(),
    requestSchemas: {},
    responseSchemas: { ...responseSchemas(), Reliability: reliabilitySchema, HistoryPage: historyPageSchema },
    parameters: { ...parameters(), ...historyParameters() },
    headers: headers(context.config),
    responses: { ...responses(context.config), ...historyResponses() },
    everyResponseHeaders: ['X-Request-Id', 'Link'],
    afterAuthenticationHeaders: ['RateLimit-Limit', 'RateLimit-Remaining', 'RateLimit-Reset'],
    operations: [
      listStationsOperation(),
      getStationOperation(),
      listStatusOperation(),
      streamStatusOperation(context.config),
      getStatusOperation(),
      listEventsOperation(),
      getPhotoOperation(),
      reliabilityOperation(),
      historyOperation(),
      listFuelTypesOperation(context.reference),
      listVehicleTypesOperation(context.reference),
      datex2TableOperation(),
      datex2StatusOperation(),
    ],
  };
}
