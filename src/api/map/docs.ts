import { z } from 'zod';
import { stationRecordSchema } from '../../domain/export-v2/stations.js';
import type { RouteDoc } from '../../http/contract.js';
import { headerRef, parameterRef, responseRef } from '../../http/openapi.js';
import { problem, problemBody } from '../export/docs.js';

/**
 * The public map's feed, detail, photo and stream as operations of the export v2 document (its
 * `alsoPublic` paths: ../export-v2/docs/document.ts): public (`security: []`), CC BY 4.0 like the rest
 * of export v2, limited per client address rather than per user. docs/api-export.md, "Public map
 * feed", says the same in prose.
 */

const TAGS = ['Public map'];

/** The export v2 record's own example: the detail carries the record exactly as `GET /v2/hrs/{hrs_id}` gives it. */
const RECORD_EXAMPLE = (z.globalRegistry.get(stationRecordSchema)?.examples as unknown[] | undefined)?.[0] ?? {};

const FEATURE_EXAMPLE = {
  type: 'Feature',
  id: 'BERLA',
  geometry: { type: 'Point', coordinates: [13.5033, 52.3667] },
  properties: {
    hrs_id: 'BERLA', name: 'Berlin Airport', operator: 'H2 MOBILITY Deutschland', street: 'Melli-Beese-Ring 1', postcode: '12529',
    city: 'Schönefeld', country: 'DE', heavy_duty: false, time_zone: 'Europe/Berlin', open_now: true,
    fuelling_options: [{ fuelling_option: '700ld', status: 'AVAILABLE', reason: 'reported_available', datetime: '2026-11-27T09:40:00.000Z' }],
    modified_at: '2026-11-20T10:00:00.000Z',
  },
};

const RATE_LIMITED = {
  '429': responseRef('TooManyRequests'),
  '500': responseRef('InternalError'),
};

const notOnMap = (hrsId = 'OSLO1') => problemBody(404, 'Not Found', 'not_found', `No station with hrs_id "${hrsId}" on the map.`);

export function feedDoc(): RouteDoc {
  return {
    tags: TAGS,
    operationId: 'getMapStations',
    summary: 'Every station on the map, with its live status (GeoJSON)',
    description:
      'An RFC 7946 FeatureCollection of every production station with coordinates, sorted by hrs_id: its static fields and, per ' +
      'fuelling option, the five-state status of `GET /v1.1/hrs/status` with its reason and time. No credential. One body is kept per ' +
      'change: conditional on `If-None-Match` (its `ETag`) or `If-Modified-Since`, gzip or brotli when accepted. See "Public map feed" above.',
    security: [],
    parameters: [
      { name: 'If-None-Match', in: 'header', required: false, description: 'The `ETag` of the copy held: 304 while it is current.', schema: { type: 'string' } },
      parameterRef('If-Modified-Since'),
    ],
    responses: {
      '200': {
        description: 'The FeatureCollection (`application/geo+json`).',
        headers: { ETag: { description: 'A strong validator of this body.', schema: { type: 'string' } }, 'Last-Modified': headerRef('Last-Modified') },
        content: {
          'application/geo+json': {
            examples: { example: { value: { type: 'FeatureCollection', generated_at: '2026-11-27T09:42:00.000Z', features: [FEATURE_EXAMPLE] } } },
          },
        },
      },
      '304': responseRef('NotModified'),
      ...RATE_LIMITED,
    },
  };
}

export function detailDoc(): RouteDoc {
  return {
    tags: TAGS,
    operationId: 'getMapStation',
    summary: 'One station\'s panel: feature, record, hours, events, prices',
    description:
      'What the map\'s station panel shows, in one answer: the station\'s Feature exactly as in the feed, its record exactly as ' +
      '`GET /v2/hrs/{hrs_id}` answers it, its opening hours and the next seven days\' intervals in its time zone (`[]` closed all ' +
      'day, `00:00`–`24:00` open all day), its ongoing and upcoming events as `GET /v2/hrs/{hrs_id}/events` lists them, its live ' +
      'pricing section as `GET /v2/hrs/{hrs_id}/status` has it (null when none is published) and the link to its photo (null when ' +
      'none). No credential. A station the map does not show (unknown, a sandbox station, no coordinates) is a 404.',
    security: [],
    parameters: [parameterRef('hrs_id')],
    responses: {
      '200': {
        description: 'The panel\'s data.',
        content: {
          'application/json': {
            examples: { example: { value: { hrs_id: 'BERLA', feature: FEATURE_EXAMPLE, record: RECORD_EXAMPLE, opening_hours: 'Mo-Su 06:00-22:00', week: [{ date: '2026-11-27', intervals: [{ from: '06:00', to: '22:00' }] }], events: [], prices: null, photo: '/map/v1/stations/BERLA/photo' } } },
          },
        },
      },
      '404': problem('The map shows no station with this id.', { not_on_map: { value: notOnMap() } }),
      ...RATE_LIMITED,
    },
  };
}

export function photoDoc(): RouteDoc {
  return {
    tags: TAGS,
    operationId: 'getMapStationPhoto',
    summary: 'One station\'s photo',
    description: 'The photo\'s bytes, as `GET /v2/hrs/{hrs_id}/photo` serves them (`nosniff`). No credential.',
    security: [],
    parameters: [parameterRef('hrs_id')],
    responses: {
      '200': { description: 'The image.', content: { 'image/jpeg': { schema: { type: 'string', format: 'binary' } }, 'image/png': { schema: { type: 'string', format: 'binary' } }, 'image/webp': { schema: { type: 'string', format: 'binary' } } } },
      '404': problem('Not on the map, or no photo.', {
        not_on_map: { value: notOnMap() },
        no_photo: { value: problemBody(404, 'Not Found', 'not_found', 'Station "BERLA" has no photo.') },
      }),
      ...RATE_LIMITED,
    },
  };
}

export function mapStreamDoc(perAddress: number): RouteDoc {
  return {
    tags: TAGS,
    operationId: 'streamMapStations',
    summary: 'The map\'s changes pushed over a WebSocket',
    description:
      'Upgrades to a WebSocket (`Upgrade: websocket`), no credential: `hello` with the feed\'s ETag on open, one `station` message ' +
      'per station whose five-state values (or `open_now`) changed, `changed` with the new ETag when the station set or static ' +
      'fields changed (read the feed again), `heartbeat` every 25 s. The client sends nothing. Opening one counts once against ' +
      `the rate limit; at most ${perAddress} open per client address. See "Public map feed" above.`,
    security: [],
    responses: {
      '101': { description: 'Switching to the WebSocket protocol.' },
      '426': problem('Not a WebSocket upgrade request: connect with `Upgrade: websocket`.', {
        plain_get: { value: problemBody(426, 'Upgrade Required', 'upgrade_required', 'This endpoint is a WebSocket: connect with "Upgrade: websocket".') },
      }),
      '429': problem('Too many open streams from this address, or the rate limit exhausted.', {
        too_many_streams: { value: problemBody(429, 'Too Many Requests', 'throttled', `At most ${perAddress} open streams per client address: close one, or retry later.`) },
      }, { 'Retry-After': headerRef('Retry-After') }),
      '500': responseRef('InternalError'),
    },
  };
}
