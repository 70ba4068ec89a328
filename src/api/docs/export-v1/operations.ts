import { examplesOf, headerRef, parameterRef, responseRef, schemaRef, type DocContext, type OperationDoc } from '../../../http/openapi.js';
import {
  stationSummarySchema,
  v1StationSummarySchema,
} from '../../../domain/status/summary.js';
import {
  eventListSchema,
  v11StationListSchema,
  v11StationRecordSchema,
  v11SummaryListSchema,
  v1StationListSchema,
  v1StationRecordSchema,
  v1SummaryListSchema,
} from '../../../domain/export-v1/schemas.js';
import { pathOf, type ExportDialectDoc } from './dialects.js';
import { COMMON, problem, problemBody, unknownStation } from './shared.js';

/** The export v1 / v1.1 operations: reference lists, the five-state summary, the station records. */

const json = (schema: string, examples: Record<string, unknown>) => ({ 'application/json': { schema: schemaRef(schema), examples } });
const words = (d: ExportDialectDoc) => (d.dialect === 'v1' ? 'fuel type' : 'fuelling option');

/** `GET {prefix}fuel-type`: the v1 fuel types, or the fuelling options (v1.1). */
export function fuelTypeOperation(d: ExportDialectDoc, reference: DocContext['reference']): OperationDoc {
  const list =
    d.dialect === 'v1'
      ? reference.v1FuelTypes.map(({ code, description }) => ({ code, description }))
      : reference.fuellingOptions.map(({ code, description }) => ({ code, description }));
  return {
    method: 'GET',
    path: pathOf(d, 'fuel-type'),
    operation: {
      tags: ['Reference'],
      operationId: 'listFuelTypes',
      summary: d.dialect === 'v1' ? 'v1 fuel types' : 'Fuelling options',
      description:
        d.dialect === 'v1'
          ? 'The v1 fuel types (`700car`, `350car`, `350bus`) the records and the summary of v1 use. Heavy-duty 700 bar has no v1 code.'
          : 'The four fuelling options (`700ld`, `350ld`, `700hd`, `350hd`) the records and the summary of v1.1 use.',
      responses: {
        '200': { description: `Every ${words(d)}, in a fixed order.`, content: json('FuelTypeList', { all: { value: list } }) },
        ...COMMON,
      },
    },
  };
}

/** `GET /v1.1/vehicle-type`: the EU vehicle categories. */
export function vehicleTypeOperation(d: ExportDialectDoc, reference: DocContext['reference']): OperationDoc {
  return {
    method: 'GET',
    path: pathOf(d, 'vehicle-type'),
    operation: {
      tags: ['Reference'],
      operationId: 'listVehicleTypes',
      summary: 'EU vehicle categories',
      description: 'The EU vehicle categories (M1–M3, N1–N3) that resolve the `vehicle_types` codes of the station records.',
      responses: {
        '200': {
          description: 'Every vehicle category, in a fixed order.',
          content: json('VehicleTypeList', { all: { value: reference.vehicleCategories.map(({ code, name }) => ({ code, name })) } }),
        },
        ...COMMON,
      },
    },
  };
}

/** `GET {prefix}hrs/status`: every station's summary. */
export function listSummaryOperation(d: ExportDialectDoc): OperationDoc {
  return {
    method: 'GET',
    path: pathOf(d, 'hrs/status'),
    operation: {
      tags: ['Status'],
      operationId: 'listStatusSummaries',
      summary: `Five-state status of every station, per ${words(d)}`,
      description:
        `Every registered station's summary, sorted by \`hrs_id\`: one entry per ${words(d)} it provides, with its state and ` +
        'the reason (see "The five-state summary" above). Computed from what is in memory at the moment of the request, ' +
        'opening hours evaluated in each station\'s own time zone. Gzip-encoded when the client accepts it ' +
        '(`Accept-Encoding: gzip`; `Vary: Accept-Encoding`). Not conditional.',
      parameters: [parameterRef('fuelling_option')],
      responses: {
        '200': {
          description: 'Every station\'s summary.',
          content: json('StatusSummaryList', examplesOf(d.dialect === 'v1' ? v1SummaryListSchema : v11SummaryListSchema)),
        },
        '400': responseRef('BadFilter'),
        ...COMMON,
      },
    },
  };
}

/** `GET {prefix}hrs/:hrs_id/status`: one station's summary. */
export function getSummaryOperation(d: ExportDialectDoc): OperationDoc {
  return {
    method: 'GET',
    path: pathOf(d, 'hrs/:hrs_id/status'),
    operation: {
      tags: ['Status'],
      operationId: 'getStatusSummary',
      summary: `Five-state status of one station, per ${words(d)}`,
      description:
        `One entry per ${words(d)} the station provides (with \`fuelling_option\`: only that one; an empty list when the ` +
        'station does not provide it), with its state and the reason. Not conditional.',
      parameters: [parameterRef('hrs_id'), parameterRef('fuelling_option')],
      responses: {
        '200': {
          description: 'The station\'s summary.',
          content: json('StatusSummary', examplesOf(d.dialect === 'v1' ? v1StationSummarySchema : stationSummarySchema)),
        },
        '400': responseRef('BadFilter'),
        '404': responseRef('StationNotFound'),
        ...COMMON,
      },
    },
  };
}

/** `GET {prefix}hrs`: every station's record, not paginated; conditional. */
export function listStationsOperation(d: ExportDialectDoc): OperationDoc {
  return {
    method: 'GET',
    path: pathOf(d, 'hrs'),
    operation: {
      tags: ['Stations'],
      operationId: 'listStations',
      summary: 'Every station\'s record',
      description:
        'Every registered station\'s record, sorted by `hrs_id`, in one response (not paginated). Conditional: supports ' +
        '`If-Modified-Since` (the `Last-Modified` also moves when a station is added or removed).',
      parameters: [parameterRef('If-Modified-Since')],
      responses: {
        '200': {
          description: 'Every station\'s record.',
          headers: { 'Last-Modified': headerRef('Last-Modified') },
          content: json('StationList', examplesOf(d.dialect === 'v1' ? v1StationListSchema : v11StationListSchema)),
        },
        '304': responseRef('NotModified'),
        ...COMMON,
      },
    },
  };
}

/** `GET {prefix}hrs/:hrs_id`: one station's record; conditional. */
export function getStationOperation(d: ExportDialectDoc): OperationDoc {
  return {
    method: 'GET',
    path: pathOf(d, 'hrs/:hrs_id'),
    operation: {
      tags: ['Stations'],
      operationId: 'getStation',
      summary: 'One station\'s record',
      description:
        (d.dialect === 'v1'
          ? 'The station\'s record in the frozen v1 contract (v1 codes, no AFIR details). '
          : 'The station\'s record with its static (AFIR) details at the top level, as given. ') +
        'Conditional: supports `If-Modified-Since`.',
      parameters: [parameterRef('hrs_id'), parameterRef('If-Modified-Since')],
      responses: {
        '200': {
          description: 'The station record.',
          headers: { 'Last-Modified': headerRef('Last-Modified') },
          content: json('Station', examplesOf(d.dialect === 'v1' ? v1StationRecordSchema : v11StationRecordSchema)),
        },
        '304': responseRef('NotModified'),
        '404': responseRef('StationNotFound'),
        ...COMMON,
      },
    },
  };
}

/** `GET {prefix}hrs/:hrs_id/events`: a station's ongoing and upcoming events. */
export function listEventsOperation(d: ExportDialectDoc): OperationDoc {
  return {
    method: 'GET',
    path: pathOf(d, 'hrs/:hrs_id/events'),
    operation: {
      tags: ['Stations'],
      operationId: 'listStationEvents',
      summary: 'Ongoing and upcoming events of one station',
      description:
        'The station\'s events not over yet (maintenance, closures, limited service, openings, other announcements), ' +
        'by start time: a JSON array, empty when there are none. An event without `ends_at` is ongoing.',
      parameters: [parameterRef('hrs_id')],
      responses: {
        '200': { description: 'The station\'s ongoing and upcoming events.', content: json('EventList', examplesOf(eventListSchema)) },
        '404': responseRef('StationNotFound'),
        ...COMMON,
      },
    },
  };
}

/** `GET {prefix}hrs/:hrs_id/photo`: a station's photo. */
export function getPhotoOperation(d: ExportDialectDoc): OperationDoc {
  return {
    method: 'GET',
    path: pathOf(d, 'hrs/:hrs_id/photo'),
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
          unknown_station: { value: unknownStation() },
          no_photo: { value: problemBody(404, 'Not Found', 'not_found', 'Station "HAMBG" has no photo.') },
        }),
        ...COMMON,
      },
    },
  };
}
