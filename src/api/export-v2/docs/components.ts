import { z } from 'zod';
import { MESSAGES } from '../../auth.js';
import { queryParameter } from '../../../http/parameters.js';
import { DEFINITIONS } from '../../../domain/categories/index.js';
import { mapEntrySchema, mapFeatureCollectionSchema, mapFeatureSchema, mapStationDetailSchema, mapStationOptionSchema } from '../../../domain/map/schemas.js';
import {
  dispenserSchema,
  eventListSchema,
  eventSchema,
  fuelTypeListSchema,
  fuelTypeSchema,
  nozzleSchema,
  problemSchema,
  productSchema,
  stationPageSchema,
  stationRecordSchema,
  stationStatusListSchema,
  stationStatusSchema,
  storageSchema,
  vehicleTypeListSchema,
  vehicleTypeSchema,
} from '../../../domain/export-v2/schemas.js';
import { bearerScheme, requestIdHeader, retryAfterHeader, wwwAuthenticateHeader } from '../../docs/headers.js';
import { headerRef, type DocContext, type DocDefinition } from '../../../http/openapi.js';
import { geoProblemExamples } from './geo.js';
import { deltaProblemExamples } from './delta.js';
import { internalErrorResponse, lastModifiedHeader, notModifiedResponse, problem, problemBody, stationNotFoundResponse, stationParameters, unauthorizedExamples } from '../../export/docs.js';

/** The export v2 document's components: the security scheme, schemas, parameters, headers and shared responses. */

export const SECURITY = 'exportV2Token';

/** The per-user rate limits as configured: the burst per minute and the sustained one in words. */
export function rateLimits(config: DocContext['config']): { perMinute: number; sustained: string } {
  const { exportV2RateLimitMinute: perMinute, exportV2RateLimitDay: perDay, exportV2RateLimitDayWindowSeconds: dayWindow } = config;
  return { perMinute, sustained: `${perDay} requests per ${windowText(dayWindow)}` };
}

function windowText(seconds: number): string {
  if (seconds === 86_400) return 'day';
  if (seconds % 3600 === 0) return `${seconds / 3600} hours`;
  return `${seconds} seconds`;
}

export const securitySchemes = (): DocDefinition['securitySchemes'] => ({
  [SECURITY]: bearerScheme(
    'A personal export v2 token of a portal account. Export v1/v1.1 tokens and the shared sandbox token are refused. ' +
    'The value is shown once when created; a lost token is replaced, not recovered.',
  ),
});

/** Every response body, under the name the operations refer to it by. */
export const responseSchemas = (): DocDefinition['responseSchemas'] => ({
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
  ...Object.fromEntries(DEFINITIONS.map((d) => [d.section.component, d.section.schema])),
  FuelTypeList: fuelTypeListSchema,
  FuelType: fuelTypeSchema,
  VehicleTypeList: vehicleTypeListSchema,
  VehicleType: vehicleTypeSchema,
  Problem: problemSchema,
  MapStations: mapFeatureCollectionSchema,
  MapStation: mapFeatureSchema,
  MapEntry: mapEntrySchema,
  MapStationDetail: mapStationDetailSchema,
  MapStationOption: mapStationOptionSchema,
});

/** The request headers operations refer to: `If-Modified-Since` (the path and query parameters are the routes' schemas'). */
export const parameters = (): NonNullable<DocDefinition['parameters']> => stationParameters();

/** The page of a list: `limit` and `offset`, which the handlers check (`pageParameters` of ../stations.ts). */
export const pageQueryFields = () => ({
  limit: queryParameter({ component: 'limit', description: 'Stations per page: 1 to 500, default 100.', values: z.int().min(1).max(500).default(100) }),
  offset: queryParameter({
    component: 'offset',
    description: 'How many stations (sorted by `hrs_id`) to skip; default 0. Follow `next` rather than computing it.',
    values: z.int().min(0).max(999_999_999_999_999).default(0),
  }),
});

export function headers(config: DocContext['config']): DocDefinition['headers'] {
  return {
    'X-Request-Id': requestIdHeader(),
    Link: {
      required: true,
      description:
        'The licence of the data: `<https://creativecommons.org/licenses/by/4.0/>; rel="license"` (CC BY 4.0), on every ' +
        'response; further links follow it, comma-separated.',
      schema: { type: 'string', examples: ['<https://creativecommons.org/licenses/by/4.0/>; rel="license"'] },
    },
    ...rateLimitHeaders(config),
    'Retry-After': retryAfterHeader(),
    'Last-Modified': lastModifiedHeader(),
    'WWW-Authenticate': wwwAuthenticateHeader(),
  };
}

/** `RateLimit-Limit`, `-Remaining` and `-Reset`, stating the tightest of the user's limits. */
function rateLimitHeaders(config: DocContext['config']): DocDefinition['headers'] {
  const { perMinute, sustained } = rateLimits(config);
  return {
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
  };
}

/** The shared responses: those of the operations (304, 400, 404) and those any authenticated request can get. */
export function responses(config: DocContext['config']): DocDefinition['responses'] {
  return {
    NotModified: notModifiedResponse(),
    BadRequest: problem('A query parameter is malformed, out of range or given twice (never clamped), or the geo filter or delta (extensions) refuse the combination.', {
      bad_limit: { value: problemBody(400, 'Bad Request', 'invalid_parameter', 'limit: must be a whole number from 1 to 500.') },
      bad_offset: { value: problemBody(400, 'Bad Request', 'invalid_parameter', 'offset: must be a whole number, 0 or more.') },
      twice: { value: problemBody(400, 'Bad Request', 'invalid_parameter', 'limit: give it once (got 2 values).') },
      ...geoProblemExamples(),
      ...deltaProblemExamples(),
    }),
    BadGeoParameter: problem('Extension: the geo filter is malformed, out of range, given twice or incomplete, or both filters are given.', geoProblemExamples()),
    StationNotFound: stationNotFoundResponse(),
    ...commonResponses(config),
  };
}

/** 401, 429 and 500: what any authenticated export v2 request can get (`COMMON`). */
function commonResponses(config: DocContext['config']): DocDefinition['responses'] {
  const { perMinute } = rateLimits(config);
  return {
    Unauthorized: problem(
      'Authentication failed; nothing was processed. The `detail` says why.',
      {
        ...unauthorizedExamples(),
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
    InternalError: internalErrorResponse(),
  };
}
