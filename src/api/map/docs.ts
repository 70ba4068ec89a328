import type { RouteDoc } from '../../http/contract.js';
import { examplesOf, headerRef, parameterRef, responseRef } from '../../http/openapi.js';
import { forecastSchema } from '../../domain/export-v2/forecast.js';
import { jsonExamples, problem, problemBody } from '../export/docs.js';

/**
 * The public map's feed, detail, photo, forecast and stream as operations of the export v2 document (its
 * `alsoPublic` paths: ../export-v2/docs/document.ts): public (`security: []`), CC BY 4.0 like the rest
 * of export v2, limited per client address rather than per user (MAP_RATE_LIMIT a minute and
 * MAP_RATE_LIMIT_DAY a day, as configured). docs/api-export.md, "Public map feed", says the same in prose.
 */

const TAGS = ['Public map'];

/** The map's limits as configured, for the refusals' examples. */
export interface MapDocLimits {
  perMinute: number;
  perDay: number;
}

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

/** The 429 of the map's data routes: per client address, not per user as export v2's own. */
const rateLimited = ({ perMinute, perDay }: MapDocLimits) => ({
  '429': problem(
    `A limit of the client address is exhausted: at most ${perMinute} requests per minute and ${perDay} per day (24 hours), over the ` +
      'feed, the details, the photos, the forecasts and the streams\' upgrades together; nothing was processed. `Retry-After` says when one is allowed again.',
    {
      minute: { value: problemBody(429, 'Too Many Requests', 'throttled', `Rate limit exceeded: at most ${perMinute} requests per minute per client address. Retry in 12 seconds.`) },
      day: {
        value: problemBody(429, 'Too Many Requests', 'throttled', `Rate limit exceeded: at most ${perDay} requests per day per client address. Retry in 5400 seconds (about 1 hour 30 minutes).`),
      },
    },
    { 'Retry-After': headerRef('Retry-After') },
  ),
  '500': responseRef('InternalError'),
});

/** The detail's example: BERLA with its 700 bar price. */
const DETAIL_EXAMPLE = {
  hrs_id: 'BERLA',
  feature: FEATURE_EXAMPLE,
  opening_hours: 'Mo-Su 06:00-22:00',
  week: [{ date: '2026-11-27', intervals: [{ from: '06:00', to: '22:00' }] }],
  fuelling_options: [
    {
      ...FEATURE_EXAMPLE.properties.fuelling_options[0],
      gross_price: '13.850',
      currency: 'EUR',
      price_datetime: '2026-11-27T06:00:00.000Z',
      green_hydrogen_share: 80,
      certification: { nozzles: 1, certified: 1 },
    },
  ],
  certification: { nozzles: 2, certified: 2 },
  events: [{ kind: 'maintenance', starts_at: '2026-12-01T08:00:00.000Z', ends_at: '2026-12-01T12:00:00.000Z', description: 'Compressor service' }],
  photo: '/map/v1/stations/BERLA/photo',
};

const notOnMap = (hrsId = 'OSLO1') => problemBody(404, 'Not Found', 'not_found', `No station with hrs_id "${hrsId}" on the map.`);

export function feedDoc(limits: MapDocLimits): RouteDoc {
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
      ...rateLimited(limits),
    },
  };
}

export function detailDoc(limits: MapDocLimits): RouteDoc {
  return {
    tags: TAGS,
    operationId: 'getMapStation',
    summary: 'One station as a driver sees it: feature, hours, per-option status and price, events',
    description:
      'What the map\'s station panel shows, in one answer: the station\'s Feature exactly as in the feed (name, position, operator, ' +
      'address), its opening hours and the next seven days\' intervals in its time zone (`[]` closed all day, `00:00`–`24:00` open all ' +
      'day), per fuelling option the five-state status of the feed with the gross price (and its time) and the green hydrogen share ' +
      'of the product its nozzles dispense, how many nozzles are certified, its ongoing and upcoming events (kind, times, ' +
      'description) and the link to its photo (null when none). No credential. A driver\'s view only: the station\'s record ' +
      '(dispensers, nozzles, storages, products and their ids) and net prices are `GET /v2/hrs/{hrs_id}` and ' +
      '`GET /v2/hrs/{hrs_id}/status`, for personal tokens and their limits (the detail carried both, `record` and `prices`, until ' +
      'they moved there). A station the map does not show (unknown, a sandbox station, no coordinates) is a 404.',
    security: [],
    responses: {
      '200': {
        description: 'The panel\'s data.',
        content: { 'application/json': { examples: { example: { value: DETAIL_EXAMPLE } } } },
      },
      '404': problem('The map shows no station with this id.', { not_on_map: { value: notOnMap() } }),
      ...rateLimited(limits),
    },
  };
}

export function photoDoc(limits: MapDocLimits): RouteDoc {
  return {
    tags: TAGS,
    operationId: 'getMapStationPhoto',
    summary: 'One station\'s photo',
    description: 'The photo\'s bytes, as `GET /v2/hrs/{hrs_id}/photo` serves them (`nosniff`). No credential.',
    security: [],
    responses: {
      '200': { description: 'The image.', content: { 'image/jpeg': { schema: { type: 'string', format: 'binary' } }, 'image/png': { schema: { type: 'string', format: 'binary' } }, 'image/webp': { schema: { type: 'string', format: 'binary' } } } },
      '404': problem('Not on the map, or no photo.', {
        not_on_map: { value: notOnMap() },
        no_photo: { value: problemBody(404, 'Not Found', 'not_found', 'Station "BERLA" has no photo.') },
      }),
      ...rateLimited(limits),
    },
  };
}

export function forecastDoc(limits: MapDocLimits): RouteDoc {
  return {
    tags: TAGS,
    operationId: 'getMapStationForecast',
    summary: 'One station\'s availability forecast for the next 12 hours, as the station panel shows it',
    description:
      'The body of `GET /v2/hrs/{hrs_id}/forecast` (the same figures: one set of learned models serves both), without a credential: per ' +
      'fuelling option the five-state value now and, for each of the next 12 hours (the present one first), the probability that it is ' +
      'available with its word (`very_likely` … `very_unlikely`, `closed` for an hour the opening hours close), or `forecast` null with ' +
      '`reason` `insufficient_history` for an option with less than two weeks of known status. Not conditional (it moves with the live ' +
      'status and the clock): `Cache-Control: max-age=60`. Before the first hour of status history is published: 503 with `Retry-After`. ' +
      'A station the map does not show (unknown, a sandbox station, no coordinates) is a 404, as its detail.',
    security: [],
    responses: {
      '200': {
        description: 'The forecast.',
        headers: { 'Cache-Control': { description: '`max-age=60`.', schema: { type: 'string' } } },
        content: jsonExamples(examplesOf(forecastSchema)),
      },
      '404': problem('The map shows no station with this id.', { not_on_map: { value: notOnMap() } }),
      '503': responseRef('HistoryNotPublished'),
      ...rateLimited(limits),
    },
  };
}

export function mapStreamDoc(perAddress: number, limits: MapDocLimits): RouteDoc {
  return {
    tags: TAGS,
    operationId: 'streamMapStations',
    summary: 'The map\'s changes pushed over a WebSocket',
    description:
      'Upgrades to a WebSocket (`Upgrade: websocket`), no credential: `hello` with the feed\'s ETag on open, one `station` message ' +
      'per station whose five-state values (or `open_now`) changed, `changed` with the new ETag when the station set or static ' +
      'fields changed (read the feed again), `heartbeat` every 25 s. The client sends nothing. Closed with 1001 at a shutdown and ' +
      'once open for the platform\'s maximum stream age (`PUSH_MAX_AGE`, an hour by default): reconnect. Opening one counts once against ' +
      `the rate limit; at most ${perAddress} open per client address. See "Public map feed" above.`,
    security: [],
    responses: {
      '101': { description: 'Switching to the WebSocket protocol.' },
      '426': problem('Not a WebSocket upgrade request: connect with `Upgrade: websocket`.', {
        plain_get: { value: problemBody(426, 'Upgrade Required', 'upgrade_required', 'This endpoint is a WebSocket: connect with "Upgrade: websocket".') },
      }),
      '429': problem('Too many open streams from this address, or a limit of the client address exhausted (per minute or per day).', {
        too_many_streams: { value: problemBody(429, 'Too Many Requests', 'throttled', `At most ${perAddress} open streams per client address: close one, or retry later.`) },
        day: { value: problemBody(429, 'Too Many Requests', 'throttled', `Rate limit exceeded: at most ${limits.perDay} requests per day per client address. Retry in 5400 seconds (about 1 hour 30 minutes).`) },
      }, { 'Retry-After': headerRef('Retry-After') }),
      '500': responseRef('InternalError'),
    },
  };
}
