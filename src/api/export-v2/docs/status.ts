import { stationStatusListSchema, stationStatusSchema } from '../../../domain/export-v2/schemas.js';
import type { RouteDoc } from '../../../http/contract.js';
import { examplesOf, responseRef } from '../../../http/openapi.js';
import { COMMON, jsonExamples } from '../../export/docs.js';
import { geoJsonContent } from './geo.js';
import { VARY_HEADER } from './stations.js';

/** The operations on real-time status, polled (the stream: ./push.ts). */

/** `GET /v2/hrs/status`: the status of every station; the geo extension's filters and GeoJSON. */
export function listStatusDoc(): RouteDoc {
  return {
    tags: ['Status'],
    operationId: 'listStationStatus',
    summary: 'Real-time status of every station',
    description:
      'The status object of every registered station, sorted by `hrs_id`. Served from memory; gzip-encoded when ' +
      'the client accepts it (`Accept-Encoding: gzip`; `Vary: Accept-Encoding`). Not conditional. Treat every ' +
      'section as optional.\n\nExtension beyond the specification (see "Extension: geo queries"): `bbox`, or `near` ' +
      'with `radius_km`, list only the stations with coordinates they find (`near`: nearest first, each entry with its ' +
      '`distance_km`); `Accept: application/geo+json` answers a GeoJSON FeatureCollection.',
    responses: {
      '200': {
        description: 'The status of every station (or of those the geo filter finds).',
        headers: { Vary: VARY_HEADER },
        content: { ...jsonExamples(examplesOf(stationStatusListSchema)), ...geoJsonContent('StationStatusFeatureCollection') },
      },
      '400': responseRef('BadGeoParameter'),
      ...COMMON,
    },
  };
}

/** `GET /v2/hrs/:hrs_id/status`: the status of one station. */
export function stationStatusDoc(): RouteDoc {
  return {
    tags: ['Status'],
    operationId: 'getStationStatus',
    summary: 'Real-time status of one station',
    description:
      'Four sections (availability, usage, hydrogen storage, pricing), each the last live reading of its type or ' +
      'null. Only entities of the station\'s current confirmed layout are listed. Each section says whether its reading is ' +
      '`fresh` or `stale` (`freshness`, an extension beyond the specification). Not conditional.',
    responses: {
      '200': {
        description: 'The station status object.',
        content: jsonExamples(examplesOf(stationStatusSchema, ['all_sections', 'no_live_source'])),
      },
      '404': responseRef('StationNotFound'),
      ...COMMON,
    },
  };
}
