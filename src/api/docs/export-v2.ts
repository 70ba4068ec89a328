import { MESSAGES } from '../auth.js';
import {
  availabilitySectionSchema,
  dispenserSchema,
  eventListSchema,
  eventSchema,
  fuelTypeListSchema,
  fuelTypeSchema,
  hydrogenStorageSectionSchema,
  nozzleSchema,
  pricingSectionSchema,
  problemSchema,
  productSchema,
  stationPageSchema,
  stationRecordSchema,
  stationStatusListSchema,
  stationStatusSchema,
  storageSchema,
  usageSectionSchema,
  vehicleTypeListSchema,
  vehicleTypeSchema,
} from '../../domain/export-v2/schemas.js';
import { examplesOf, headerRef, parameterRef, responseRef, schemaRef, type DocContext, type DocDefinition } from './openapi.js';

const SECURITY = 'exportV2Token';
const PROBLEM = 'application/problem+json';

const problem = (description: string, examples: Record<string, { summary?: string; value: unknown }>, headers?: Record<string, unknown>) => ({
  description,
  ...(headers ? { headers } : {}),
  content: { [PROBLEM]: { schema: schemaRef('Problem'), examples } },
});

const problemBody = (status: number, title: string, code: string, detail: string) => ({ type: 'about:blank', title, status, detail, code });

/** The responses every authenticated export v2 operation can give besides its own. */
const COMMON = {
  '401': responseRef('Unauthorized'),
  '429': responseRef('TooManyRequests'),
  '500': responseRef('InternalError'),
};

const STATUS_EXAMPLE = {
  hrs_id: 'BERLA',
  availability: {
    datetime: '2026-11-23T10:15:00Z',
    received_datetime: '2026-11-23T10:15:02Z',
    station: { maintenance: false, limitedly_available: false },
    nozzles: [{ id: 'N1', available: true }],
  },
  usage: null,
  hydrogen_storage: null,
  pricing: null,
};

const code = (value: unknown) => '`' + JSON.stringify(value) + '`';

/** `1 MiB`, `512 KiB`, `20000 bytes`. */
function bytesText(bytes: number): string {
  if (bytes % (1024 * 1024) === 0) return `${bytes / (1024 * 1024)} MiB`;
  if (bytes % 1024 === 0) return `${bytes / 1024} KiB`;
  return `${bytes} bytes`;
}

/** The status stream's protocol, for the document's description (limits as configured). */
const pushDescription = (config: DocContext['config']) => [
  '## Status stream (WebSocket)',
  '`GET /v2/hrs/status/stream` upgrades to a WebSocket that pushes status changes instead of polling. Every message ' +
    'either way is one JSON text frame with a `type`; any client message may carry an `id` (string or number), echoed ' +
    'in its answer.',
  '**Authentication**: the `Authorization: Bearer <token>` header of the upgrade request (a bad token gets the HTTP ' +
    '401 problem, and no upgrade), or, for browsers, which cannot set headers, the first message ' +
    `${code({ type: 'auth', token: '<ACCESS_TOKEN>' })} within ${config.pushAuthTimeoutMs / 1000} seconds. Never put the token in the URL. The server ` +
    `answers ${code({ type: 'authenticated', user: 'alice' })}. Opening a stream counts once against the rate limits; ` +
    `one user holds at most ${config.pushStreamsPerUser} open streams (one more is refused: HTTP 429 at the upgrade, or an error and close ` +
    'code 4429 after an `auth` message).',
  '**Subscribing**: ' +
    `${code({ type: 'subscribe', hrs_ids: ['BERLA', 'HAMBG'] })} or ${code({ type: 'subscribe', hrs_ids: '*' })} ` +
    '(every station, including ones registered later), and `unsubscribe` in the same form (`"*"` drops every ' +
    'subscription). Each is acknowledged with the stations named and every current subscription: ' +
    `${code({ type: 'subscribed', hrs_ids: ['BERLA', 'HAMBG'], subscriptions: ['BERLA', 'HAMBG'] })}, then a subscribe ` +
    `gets a snapshot of the named stations' status objects (the shape of \`GET /v2/hrs/{hrs_id}/status\`): ` +
    `${code({ type: 'snapshot', stations: [STATUS_EXAMPLE] })}. An unknown station id refuses the whole subscribe ` +
    `(${code({ type: 'error', code: 'unknown_station', detail: '...', hrs_ids: ['ZZZZZ'] })}).`,
  '**Changes**: afterwards, whenever the status object of a subscribed station changes (a new reading, a section ' +
    'turning null at the 30-minute fallback, a layout change), the whole object: ' +
    `${code({ type: 'status', station: STATUS_EXAMPLE })}; changes of one instant are sent as one message with the ` +
    `result, in order. A station leaving the registry: ${code({ type: 'removed', hrs_id: 'BERLA' })}.`,
  '**Errors**: a bad message is answered ' +
    `${code({ type: 'error', code: 'invalid_message', detail: 'Invalid "subscribe" message - hrs_ids: ...' })} and ` +
    'the connection stays open. Codes: `invalid_message`, `not_authenticated`, `already_authenticated`, ' +
    '`authentication_failed`, `too_many_streams`, `throttled`, `unknown_station`, `not_subscribed`.',
  '**Closing**: 1001 the server is shutting down (reconnect); 1009 a message over 64 KiB; 4000 the client fell ' +
    `too far behind (more than ${bytesText(config.pushMaxBacklogBytes)} waited to be sent to it); 4401 the token was ` +
    'refused, revoked or expired; 4408 no ' +
    '`auth` message in time; 4429 too many streams or a rate limit exhausted. The server pings idle connections; ' +
    'reconnect with backoff and subscribe again (the snapshot brings you up to date).',
].join('\n\n');

function windowText(seconds: number): string {
  if (seconds === 86_400) return 'day';
  if (seconds % 3600 === 0) return `${seconds / 3600} hours`;
  return `${seconds} seconds`;
}

export function exportV2Document(context: DocContext): DocDefinition {
  const { exportV2RateLimitMinute: perMinute, exportV2RateLimitDay: perDay, exportV2RateLimitDayWindowSeconds: dayWindow } = context.config;
  const sustained = `${perDay} requests per ${windowText(dayWindow)}`;
  const fuelTypes = context.reference.fuellingOptions.map((o) => ({ ...o }));
  const vehicleTypes = context.reference.vehicleCategories.map(({ code, name }) => ({ code, name }));

  return {
    family: 'export_v2',
    info: {
      title: 'HRS signal platform: Export API v2',
      version: context.version,
      summary: 'Data users read stations, their layout and real-time status, events, photos and reference lists.',
      description: [
        'The export interface, version 2: the station list, one station with its static details and layout ' +
          '(dispensers, nozzles, storages, products), the real-time status (availability, usage, hydrogen storage, ' +
          'pricing) of one or all stations, station events, a station photo, fuelling options and vehicle categories. ' +
          'All endpoints are `GET` (`HEAD` works wherever `GET` does) and answer JSON, except the photo.',
        '## Licence\n\nExported data is licensed [CC BY 4.0](https://creativecommons.org/licenses/by/4.0/). Every ' +
          'response says so in a `Link: <https://creativecommons.org/licenses/by/4.0/>; rel="license"` header.',
        '## Authentication\n\nEvery request carries `Authorization: Bearer <ACCESS_TOKEN>` with a **personal** export v2 ' +
          'token, tied to a portal account: create one on the API tokens page of your account (up to five active), or ' +
          'request one from the platform contact. Export v1/v1.1 tokens and the shared sandbox token do not authenticate ' +
          'here (the 401 says so). A missing or malformed header, an unknown, revoked or expired token and a deactivated ' +
          'account get 401, and nothing is processed.',
        `## Rate limits\n\n${perMinute} requests per minute (burst) and ${sustained} (sustained) per user: all personal ` +
          'tokens of a user share the budget. Every response after authentication carries `RateLimit-Limit`, ' +
          '`RateLimit-Remaining` and `RateLimit-Reset` (of the tightest limit); over a limit the answer is 429 with ' +
          '`Retry-After`.',
        '## Conditional requests\n\n`GET /v2/hrs` and `GET /v2/hrs/{hrs_id}` return `Last-Modified`; sending it back as ' +
          '`If-Modified-Since` yields 304 with an empty body when nothing changed. The timestamp tracks changes to ' +
          'exported static content (station fields, layout, events), not real-time signals. The status endpoints are ' +
          'not conditional. There is no `ETag` support.',
        '## Browsers\n\nResponses carry `Access-Control-Allow-Origin: *` and expose the headers above to scripts; CORS ' +
          'preflights are answered without a token.',
        '## Errors\n\nErrors are RFC 9457 problem details (`application/problem+json`: `type`, `title`, `status`, ' +
          '`detail`) with a stable `code`. An unknown path gets 404 (its `detail` says when the path exists without a ' +
          'trailing slash; there is never a redirect); a known path with another method gets 405 with `Allow`. A 500 is ' +
          'an unexpected platform error: please report it with the response\'s `X-Request-Id`. A 503 from the ' +
          'infrastructure means temporary unavailability: retry with backoff.',
        pushDescription(context.config),
        '## Versioning\n\nExport v2 lives under `/v2/...` with its own (personal) credential type. The v1.1 ' +
          'per-fuelling-option status summary stays on v1.1. A DATEX II representation is planned and not yet available.',
      ].join('\n\n'),
      license: { name: 'CC BY 4.0 (exported data)', identifier: 'CC-BY-4.0' },
    },
    tags: [
      { name: 'Stations', description: 'Static station data and layout, events and photos.' },
      { name: 'Status', description: 'Real-time status per signal type, served from memory.' },
      { name: 'Reference', description: 'Reference lists resolving codes used elsewhere.' },
    ],
    securitySchemes: {
      [SECURITY]: {
        type: 'http',
        scheme: 'bearer',
        description:
          'A personal export v2 token of a portal account. Export v1/v1.1 tokens and the shared sandbox token are refused. ' +
          'The value is shown once when created; a lost token is replaced, not recovered.',
      },
    },
    requestSchemas: {},
    responseSchemas: {
      StationPage: stationPageSchema,
      Station: stationRecordSchema,
      Dispenser: dispenserSchema,
      Nozzle: nozzleSchema,
      Storage: storageSchema,
      Product: productSchema,
      EventList: eventListSchema,
      Event: eventSchema,
      StationStatusList: stationStatusListSchema,
      StationStatus: stationStatusSchema,
      AvailabilitySection: availabilitySectionSchema,
      UsageSection: usageSectionSchema,
      HydrogenStorageSection: hydrogenStorageSectionSchema,
      PricingSection: pricingSectionSchema,
      FuelTypeList: fuelTypeListSchema,
      FuelType: fuelTypeSchema,
      VehicleTypeList: vehicleTypeListSchema,
      VehicleType: vehicleTypeSchema,
      Problem: problemSchema,
    },
    parameters: {
      hrs_id: {
        name: 'hrs_id',
        in: 'path',
        required: true,
        description: 'Station id: five uppercase letters.',
        schema: { type: 'string', pattern: '^[A-Z]{5}$' },
        example: 'BERLA',
      },
      limit: {
        name: 'limit',
        in: 'query',
        required: false,
        description: 'Stations per page: 1 to 500, default 100.',
        schema: { type: 'integer', minimum: 1, maximum: 500, default: 100 },
      },
      offset: {
        name: 'offset',
        in: 'query',
        required: false,
        description: 'How many stations (sorted by `hrs_id`) to skip; default 0. Follow `next` rather than computing it.',
        schema: { type: 'integer', minimum: 0, maximum: 999_999_999_999_999, default: 0 },
      },
      'If-Modified-Since': {
        name: 'If-Modified-Since',
        in: 'header',
        required: false,
        description: 'The `Last-Modified` of an earlier response: 304 with an empty body when nothing changed since.',
        schema: { type: 'string' },
        example: 'Sun, 22 Nov 2026 10:00:00 GMT',
      },
    },
    headers: {
      'X-Request-Id': {
        required: true,
        description: 'The request\'s id: the client\'s own `X-Request-Id` if it sent a sane one, else one the service made. Quote it when reporting a problem.',
        schema: { type: 'string', examples: ['3f2a-1b'] },
      },
      Link: {
        required: true,
        description:
          'The licence of the data: `<https://creativecommons.org/licenses/by/4.0/>; rel="license"` (CC BY 4.0), on every ' +
          'response; further links follow it, comma-separated.',
        schema: { type: 'string', examples: ['<https://creativecommons.org/licenses/by/4.0/>; rel="license"'] },
      },
      'RateLimit-Limit': {
        description:
          `The limit of the tightest of the user's two limits (${perMinute} per minute, ${sustained}). ` +
          'Absent when the rate limiter is unavailable (requests then pass unlimited).',
        schema: { type: 'integer', minimum: 1, examples: [perMinute] },
      },
      'RateLimit-Remaining': {
        description: 'Requests still allowed now under that limit.',
        schema: { type: 'integer', minimum: 0, examples: [perMinute - 1] },
      },
      'RateLimit-Reset': {
        description: 'Seconds until the oldest counted request leaves that limit\'s window, i.e. until `RateLimit-Remaining` next grows.',
        schema: { type: 'integer', minimum: 0, examples: [60] },
      },
      'Retry-After': {
        required: true,
        description: 'Whole seconds to wait (at least 1); after waiting them a request passes.',
        schema: { type: 'integer', minimum: 1, examples: [12] },
      },
      'Last-Modified': {
        required: true,
        description: 'When the exported static content last changed (HTTP date). Send it back as `If-Modified-Since`.',
        schema: { type: 'string', examples: ['Sun, 22 Nov 2026 10:00:00 GMT'] },
      },
      'WWW-Authenticate': { required: true, description: 'The authentication scheme: `Bearer`.', schema: { type: 'string', const: 'Bearer' } },
    },
    responses: {
      NotModified: {
        description: 'Nothing exported changed since `If-Modified-Since`: empty body.',
        headers: { 'Last-Modified': headerRef('Last-Modified') },
      },
      BadRequest: problem('A query parameter is malformed, out of range or given twice (never clamped).', {
        bad_limit: { value: problemBody(400, 'Bad Request', 'invalid_parameter', 'limit: must be a whole number from 1 to 500.') },
        bad_offset: { value: problemBody(400, 'Bad Request', 'invalid_parameter', 'offset: must be a whole number, 0 or more.') },
        twice: { value: problemBody(400, 'Bad Request', 'invalid_parameter', 'limit: give it once (got 2 values).') },
      }),
      StationNotFound: problem('No station with this `hrs_id` is registered.', {
        unknown_station: { value: problemBody(404, 'Not Found', 'not_found', 'No station with hrs_id "OSLO1".') },
      }),
      Unauthorized: problem(
        'Authentication failed; nothing was processed. The `detail` says why.',
        {
          missing: { value: problemBody(401, 'Unauthorized', 'not_authenticated', MESSAGES.missing) },
          malformed: { value: problemBody(401, 'Unauthorized', 'not_authenticated', MESSAGES.malformed) },
          unknown: { value: problemBody(401, 'Unauthorized', 'not_authenticated', MESSAGES.unknown) },
          revoked: { value: problemBody(401, 'Unauthorized', 'not_authenticated', MESSAGES.revoked) },
          expired: { value: problemBody(401, 'Unauthorized', 'not_authenticated', MESSAGES.expired) },
          deactivated: { value: problemBody(401, 'Unauthorized', 'not_authenticated', MESSAGES.deactivated) },
          export_v1_token: { summary: 'An export v1/v1.1 token', value: problemBody(401, 'Unauthorized', 'not_authenticated', MESSAGES.exportV1OnV2) },
        },
        { 'WWW-Authenticate': headerRef('WWW-Authenticate') },
      ),
      TooManyRequests: problem(
        'A rate limit of the user is exhausted; nothing was processed.',
        {
          burst: {
            value: problemBody(429, 'Too Many Requests', 'throttled', `Rate limit exceeded: at most ${perMinute} requests per minute per user. Retry in 12 seconds.`),
          },
        },
        { 'Retry-After': headerRef('Retry-After') },
      ),
      InternalError: problem('Unexpected platform error; please report it with the `X-Request-Id`.', {
        internal: { value: problemBody(500, 'Internal Server Error', 'internal_error', 'Unexpected platform error; please report it.') },
      }),
    },
    everyResponseHeaders: ['X-Request-Id', 'Link'],
    afterAuthenticationHeaders: ['RateLimit-Limit', 'RateLimit-Remaining', 'RateLimit-Reset'],
    operations: [
      {
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
      },
      {
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
      },
      {
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
      },
      {
        method: 'GET',
        path: '/v2/hrs/status/stream',
        operation: {
          tags: ['Status'],
          operationId: 'streamStationStatus',
          summary: 'Status changes pushed over a WebSocket',
          description:
            'Upgrades to a WebSocket (`Upgrade: websocket`) that pushes the station status object of subscribed ' +
            'stations whenever it changes: see "Status stream" above for the messages. Authenticate with the ' +
            '`Authorization` header, or (browsers) with an `auth` message first; never in the URL. Opening a stream ' +
            `counts once against the rate limits; a user holds at most ${context.config.pushStreamsPerUser} open streams.`,
          responses: {
            '101': { description: 'Switching to the WebSocket protocol.' },
            '426': problem('Not a WebSocket upgrade request: connect with `Upgrade: websocket`.', {
              plain_get: {
                value: problemBody(426, 'Upgrade Required', 'upgrade_required', 'This endpoint is a WebSocket: connect with "Upgrade: websocket".'),
              },
            }),
            ...COMMON,
          },
        },
      },
      {
        method: 'GET',
        path: '/v2/hrs/:hrs_id/status',
        operation: {
          tags: ['Status'],
          operationId: 'getStationStatus',
          summary: 'Real-time status of one station',
          description:
            'Four sections (availability, usage, hydrogen storage, pricing), each the last live reading of its type or ' +
            'null. Only entities of the station\'s current confirmed layout are listed. Not conditional.',
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
      },
      {
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
      },
      {
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
      },
      {
        method: 'GET',
        path: '/v2/fuel-type',
        operation: {
          tags: ['Reference'],
          operationId: 'listFuelTypes',
          summary: 'Fuelling options',
          description: 'The fuelling options (`700ld`, `350ld`, `700hd`, `350hd`) that `nozzles[].fuelling_options` use.',
          responses: {
            '200': {
              description: 'Every fuelling option, in a fixed order.',
              content: { 'application/json': { schema: schemaRef('FuelTypeList'), examples: { all: { value: fuelTypes } } } },
            },
            ...COMMON,
          },
        },
      },
      {
        method: 'GET',
        path: '/v2/vehicle-type',
        operation: {
          tags: ['Reference'],
          operationId: 'listVehicleTypes',
          summary: 'EU vehicle categories',
          description: 'The EU vehicle categories that resolve the `vehicle_types` codes of the station details.',
          responses: {
            '200': {
              description: 'Every vehicle category, in a fixed order.',
              content: { 'application/json': { schema: schemaRef('VehicleTypeList'), examples: { all: { value: vehicleTypes } } } },
            },
            ...COMMON,
          },
        },
      },
    ],
  };
}
