import { stationStatusListSchema, stationStatusSchema } from '../../../domain/export-v2/schemas.js';
import { examplesOf, parameterRef, responseRef, schemaRef, type OperationDoc } from '../../../http/openapi.js';
import { COMMON } from './shared.js';

/** The operations on real-time status, polled (the stream is in push.ts). */

/** `GET /v2/hrs/status`: the status of every station. */
export function listStatusOperation(): OperationDoc {
  return {
    method: 'GET',
    path: '/v2/hrs/status',
    operation: {
      tags: ['Status'],
      operationId: 'listStationStatus',
      summary: 'Real-time status of every station',
      description:
        'The status object of every registered station, sorted by `hrs_id`. Served from memory; gzip-encoded when ' +
        'the client accepts it (`Accept-Encoding: gzip`; `Vary: Accept-Encoding`). Not conditional. Treat every ' +
        'section as optional.',
      responses: {
        '200': {
          description: 'The status of every station.',
          content: { 'application/json': { schema: schemaRef('StationStatusList'), examples: examplesOf(stationStatusListSchema) } },
        },
        ...COMMON,
      },
    },
  };
}

/** `GET /v2/hrs/:hrs_id/status`: the status of one station. */
export function getStatusOperation(): OperationDoc {
  return {
    method: 'GET',
    path: '/v2/hrs/:hrs_id/status',
    operation: {
      tags: ['Status'],
      operationId: 'getStationStatus',
      summary: 'Real-time status of one station',
      description:
        'Four sections (availability, usage, hydrogen storage, pricing), each the last live reading of its type or ' +
        'null. Only entities of the station\'s current confirmed layout are listed. Each section says whether its reading is ' +
        '`fresh` or `stale` (`freshness`, an extension beyond the specification). Not conditional.',
      parameters: [parameterRef('hrs_id')],
      responses: {
        '200': {
          description: 'The station status object.',
          content: {
            'application/json': {
              schema: schemaRef('StationStatus'),
              examples: examplesOf(stationStatusSchema, ['all_sections', 'no_live_source']),
            },
          },
        },
        '404': responseRef('StationNotFound'),
        ...COMMON,
      },
    },
  };
}
