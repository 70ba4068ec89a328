import type { RouteDoc } from '../../../http/contract.js';
import { examplesOf, parameterRef, responseRef } from '../../../http/openapi.js';
import { COMMON, conditionalResponses, eventsDoc as v2EventsDoc, photoDoc as v2PhotoDoc } from '../../export/docs.js';
import { legacyDoc, type ExportDialectDoc } from './dialects.js';

/** The station records' operations (../stations.ts); the events and the photo are described as on export v2, whose handlers they share. */

/** `GET {prefix}hrs`: every station's record, not paginated; conditional. */
export function listStationsDoc(d: ExportDialectDoc): RouteDoc {
  return legacyDoc(d, {
    tags: ['Stations'],
    operationId: 'listStations',
    summary: 'Every station\'s record',
    description:
      'Every registered station\'s record, sorted by `hrs_id`, in one response (not paginated). Conditional: supports ' +
      '`If-Modified-Since` (the `Last-Modified` also moves when a station is added or removed).',
    parameters: [parameterRef('If-Modified-Since')],
    responses: {
      ...conditionalResponses('Every station\'s record.', examplesOf(d.bodies.StationList)),
      ...COMMON,
    },
  });
}

/** `GET {prefix}hrs/:hrs_id`: one station's record; conditional. */
export function stationDoc(d: ExportDialectDoc): RouteDoc {
  return legacyDoc(d, {
    tags: ['Stations'],
    operationId: 'getStation',
    summary: 'One station\'s record',
    description:
      (d.dialect === 'v1'
        ? 'The station\'s record in the frozen v1 contract (v1 codes, no AFIR details). '
        : 'The station\'s record with its static (AFIR) details at the top level, as given. ') +
      'Conditional: supports `If-Modified-Since`.',
    parameters: [parameterRef('If-Modified-Since')],
    responses: {
      ...conditionalResponses('The station record.', examplesOf(d.bodies.Station)),
      '404': responseRef('StationNotFound'),
      ...COMMON,
    },
  });
}

/** `GET {prefix}hrs/:hrs_id/events`: as on export v2. */
export const eventsDoc = (d: ExportDialectDoc): RouteDoc => legacyDoc(d, v2EventsDoc());

/** `GET {prefix}hrs/:hrs_id/photo`: as on export v2. */
export const photoDoc = (d: ExportDialectDoc): RouteDoc => legacyDoc(d, v2PhotoDoc());
