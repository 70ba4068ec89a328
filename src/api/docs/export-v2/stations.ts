import { eventListSchema, stationPageSchema, stationRecordSchema } from '../../../domain/export-v2/schemas.js';
import { examplesOf, headerRef, parameterRef, responseRef, schemaRef, type OperationDoc } from '../../../http/openapi.js';
import { COMMON, problem, problemBody } from './shared.js';

/** The operations on static station data: the station list, one station record, its events and its photo. */

/** `GET /v2/hrs`: the station list, a page at a time; conditional. */
export function listStationsOperation(): OperationDoc {
  return {
    method: 'GET',
    path: '/v2/hrs',
    operation: {
      tags: ['Stations'],
      operationId: 'listStations',
      summary: 'List stations (paginated)',
      description:
        'Every registered station with its static details and layout, sorted by `hrs_id`, a page at a time. Follow ' +
        '`next` until it is null to obtain the full list. Conditional: supports `If-Modified-Since` (the list\'s ' +
        '`Last-Modified` also moves when a station is added or removed). There is no `fuelling_option` filter on v2.',
      parameters: [parameterRef('limit'), parameterRef('offset'), parameterRef('If-Modified-Since')],
      responses: {
        '200': {
          description: 'One page of station records.',
          headers: { 'Last-Modified': headerRef('Last-Modified') },
          content: { 'application/json': { schema: schemaRef('StationPage'), examples: examplesOf(stationPageSchema) } },
        },
        '304': responseRef('NotModified'),
        '400': responseRef('BadRequest'),
        ...COMMON,
      },
    },
  };
}

/** `GET /v2/hrs/:hrs_id`: one station record with its layout; conditional. */
export function getStationOperation(): OperationDoc {
  return {
    method: 'GET',
    path: '/v2/hrs/:hrs_id',
    operation: {
      tags: ['Stations'],
      operationId: 'getStation',
      summary: 'One station with static details and layout',
      description:
        'The station record: the static details it carries on v1.1, unchanged, plus its layout (`dispensers`, ' +
        '`storages`, `products`), null until the operator has registered and confirmed it. The nozzle, storage and ' +
        'product `external_id` values are the ids used in status payloads. Conditional: supports `If-Modified-Since`.',
      parameters: [parameterRef('hrs_id'), parameterRef('If-Modified-Since')],
      responses: {
        '200': {
          description: 'The station record.',
          headers: { 'Last-Modified': headerRef('Last-Modified') },
          content: { 'application/json': { schema: schemaRef('Station'), examples: examplesOf(stationRecordSchema) } },
        },
        '304': responseRef('NotModified'),
        '404': responseRef('StationNotFound'),
        ...COMMON,
      },
    },
  };
}

/** `GET /v2/hrs/:hrs_id/events`: a station's ongoing and upcoming events. */
export function listEventsOperation(): OperationDoc {
  return {
    method: 'GET',
    path: '/v2/hrs/:hrs_id/events',
    operation: {
      tags: ['Stations'],
      operationId: 'listStationEvents',
      summary: 'Ongoing and upcoming events of one station',
      description:
        'The station\'s events not over yet (maintenance, closures, limited service, openings, other announcements), ' +
        'by start time: a JSON array, empty when there are none. An event without `ends_at` is ongoing.',
      parameters: [parameterRef('hrs_id')],
      responses: {
        '200': {
          description: 'The station\'s ongoing and upcoming events.',
          content: { 'application/json': { schema: schemaRef('EventList'), examples: examplesOf(eventListSchema) } },
        },
        '404': responseRef('StationNotFound'),
        ...COMMON,
      },
    },
  };
}

/** `GET /v2/hrs/:hrs_id/photo`: a station's photo, as a binary image. */
export function getPhotoOperation(): OperationDoc {
  return {
    method: 'GET',
    path: '/v2/hrs/:hrs_id/photo',
    operation: {
      tags: ['Stations'],
      operationId: 'getStationPhoto',
      summary: 'The photo of one station',
      description:
        'The station photo as a binary image: JPEG, PNG or WebP (at most 5 MiB), the `Content-Type` saying which. ' +
        'The station record\'s `photo_url` links here when there is a photo.',
      parameters: [parameterRef('hrs_id')],
      responses: {
        '200': {
          description: 'The photo; the `Content-Type` says which format.',
          content: {
            'image/jpeg': { schema: { contentMediaType: 'image/jpeg' } },
            'image/png': { schema: { contentMediaType: 'image/png' } },
            'image/webp': { schema: { contentMediaType: 'image/webp' } },
          },
        },
        '404': problem('No station with this `hrs_id`, or the station has no photo.', {
          unknown_station: { value: problemBody(404, 'Not Found', 'not_found', 'No station with hrs_id "OSLO1".') },
          no_photo: { value: problemBody(404, 'Not Found', 'not_found', 'Station "HAMBG" has no photo.') },
        }),
        ...COMMON,
      },
    },
  };
}
