import { stationPageSchema, stationRecordSchema } from '../../../domain/export-v2/schemas.js';
import type { RouteDoc } from '../../../http/contract.js';
import { examplesOf, parameterRef, responseRef } from '../../../http/openapi.js';
import { COMMON, conditionalResponses } from '../../export/docs.js';
import { geoJsonContent } from './geo.js';
import { stationDeltaSchema } from '../../../domain/export-v2/delta.js';

/**
 * The operations on static station data: the station list and one station record (its events and photo:
 * ../../export/docs.ts). They begin as the history's operations (./history.ts) do, because every
 * operation states a tag, an id, its words and its parameters; what they share beyond that (the
 * conditional answers, COMMON) is written once in ../../export/docs.ts.
 */

/** `GET /v2/hrs`: the station list, a page at a time; conditional; the geo extension's filters and GeoJSON. */
export function listStationsDoc(): RouteDoc {
  const ok = conditionalResponses(
    'One page of station records (GeoJSON on request: extension), or with `since` or `updated_since` one page of the delta (extension; not conditional).',
    { ...examplesOf(stationPageSchema), ...examplesOf(stationDeltaSchema, ['delta']) },
  );
  return {
    tags: ['Stations'],
    operationId: 'listStations',
    summary: 'List stations (paginated)',
    description:
      'Every registered station with its static details and layout, sorted by `hrs_id`, a page at a time. Follow ' +
      '`next` until it is null to obtain the full list. Conditional: supports `If-Modified-Since` (the list\'s ' +
      '`Last-Modified` also moves when a station is added or removed). There is no `fuelling_option` filter on v2.\n\n' +
      'Extension beyond the specification (see "Extension: geo queries"): `bbox`, or `near` with `radius_km`, list only ' +
      'the stations with coordinates they find (`near`: nearest first, each record with its `distance_km`), paged and ' +
      'conditional alike; `Accept: application/geo+json` answers a GeoJSON FeatureCollection.\n\n' +
      'Extension (see "Extension: delta sync"): every page carries `sync_token`; with `since` (a `sync_token`) or `updated_since` ' +
      '(a time) the answer is the delta: only the stations changed after that point, each once as it is now (a removed one as ' +
      'its tombstone), in the order of their changes, paged by `next`. A point older than the change log holds is a 410.',
    parameters: [parameterRef('If-Modified-Since')],
    responses: {
      ...ok,
      '200': { ...ok['200'], headers: { ...ok['200'].headers, Vary: VARY_HEADER }, content: { ...ok['200'].content, ...geoJsonContent('StationFeatureCollection') } },
      '400': responseRef('BadRequest'),
      '410': responseRef('SyncExpired'),
      ...COMMON,
    },
  };
}

/** `Vary: Accept` on the lists' answers (they answer JSON or GeoJSON by it). */
export const VARY_HEADER = {
  description: 'Names the request headers the answer depends on: `Accept` (JSON or GeoJSON), on the status list also `Accept-Encoding`.',
  schema: { type: 'string', examples: ['Accept'] },
};

/** `GET /v2/hrs/:hrs_id`: one station record with its layout; conditional. */
export function stationDoc(): RouteDoc {
  return {
    tags: ['Stations'],
    operationId: 'getStation',
    summary: 'One station with static details and layout',
    description:
      'The station record: the static details it carries on v1.1, unchanged, plus its layout (`dispensers`, ' +
      '`storages`, `products`), null until the operator has registered and confirmed it. The nozzle, storage and ' +
      'product `external_id` values are the ids used in status payloads. Conditional: supports `If-Modified-Since`.',
    parameters: [parameterRef('If-Modified-Since')],
    responses: {
      ...conditionalResponses('The station record.', examplesOf(stationRecordSchema)),
      '404': responseRef('StationNotFound'),
      ...COMMON,
    },
  };
}
