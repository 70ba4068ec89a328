import { z } from 'zod';
import { eventListSchema } from '../../domain/export-v2/schemas.js';
import type { RouteDoc } from '../../http/contract.js';
import { examplesOf, headerRef, responseRef, schemaRef } from '../../http/openapi.js';
import { pathParameter } from '../../http/parameters.js';
import { MESSAGES } from '../auth.js';

/**
 * What the export documents (v2, and the legacy v1 and v1.1 in ../../export-legacy/docs/) say in the
 * same words: problem responses, the station id and `If-Modified-Since` parameters, `Last-Modified`,
 * the shared responses, and the events and photo operations, whose routes share their handlers too
 * (../stations.ts). Each part is made afresh per document, so no two documents share an object.
 */

const PROBLEM = 'application/problem+json';

type Examples = Record<string, { summary?: string; value: unknown }>;

/** A response with a problem details body (RFC 9457) and its examples. */
export const problem = (description: string, examples: Examples, headers?: Record<string, unknown>) => ({
  description,
  ...(headers ? { headers } : {}),
  content: { [PROBLEM]: { schema: schemaRef('Problem'), examples } },
});

export const problemBody = (status: number, title: string, code: string, detail: string) => ({ type: 'about:blank', title, status, detail, code });

/** A JSON body's examples; its schema is the route's `response` for the status (a component schema, filled in by reference). */
export const jsonExamples = (examples: Record<string, unknown>) => ({ 'application/json': { examples } });

/** The 200 and 304 of a conditional operation: the body (its examples) with `Last-Modified`, or nothing changed since. */
export const conditionalResponses = (description: string, examples: Record<string, unknown>) => ({
  '200': { description, headers: { 'Last-Modified': headerRef('Last-Modified') }, content: jsonExamples(examples) },
  '304': responseRef('NotModified'),
});

/** The responses every authenticated export operation can give besides its own. */
export const COMMON = {
  '401': responseRef('Unauthorized'),
  '429': responseRef('TooManyRequests'),
  '500': responseRef('InternalError'),
};

export const unknownStation = (hrsId = 'OSLO1') => problemBody(404, 'Not Found', 'not_found', `No station with hrs_id "${hrsId}".`);

/**
 * The path of a station's export routes (`:hrs_id`), in every export document (and the public map's
 * routes in export v2's): the handler answers 404 to an id no station has.
 */
export const STATION_PATH = z.object({
  hrs_id: pathParameter({ component: 'hrs_id', description: 'Station id: five uppercase letters (BERAP is one of the demo\'s).', values: z.string().regex(/^[A-Z]{5}$/), example: 'BERAP' }),
});

/** `If-Modified-Since`, the request header every export document declares. */
export const stationParameters = () => ({
  // No `example` (nor a default): Swagger UI's "Try it out" would fill it in, and the request would get an
  // empty 304 instead of the data. The description shows the form.
  'If-Modified-Since': {
    name: 'If-Modified-Since',
    in: 'header',
    required: false,
    description:
      'The `Last-Modified` of an earlier response (an HTTP date such as `Sun, 22 Nov 2026 10:00:00 GMT`): 304 with an ' +
      'empty body when nothing changed since. Leave it empty to get the data.',
    schema: { type: 'string' },
  },
});

export const lastModifiedHeader = () => ({
  required: true,
  description: 'When the exported static content last changed (HTTP date). Send it back as `If-Modified-Since`.',
  schema: { type: 'string', examples: ['Sun, 22 Nov 2026 10:00:00 GMT'] },
});

export const notModifiedResponse = () => ({
  description: 'Nothing exported changed since `If-Modified-Since`: empty body.',
  headers: { 'Last-Modified': headerRef('Last-Modified') },
});

export const stationNotFoundResponse = () => problem('No station with this `hrs_id` is registered.', { unknown_station: { value: unknownStation() } });

export const internalErrorResponse = () =>
  problem('Unexpected platform error; please report it with the `X-Request-Id`.', {
    internal: { value: problemBody(500, 'Internal Server Error', 'internal_error', 'Unexpected platform error; please report it.') },
  });

/** The 401 examples of a credential that is no token of any kind, or no longer valid. */
export function unauthorizedExamples(): Examples {
  const unauthorized = (detail: string) => ({ value: problemBody(401, 'Unauthorized', 'not_authenticated', detail) });
  return {
    missing: unauthorized(MESSAGES.missing),
    malformed: unauthorized(MESSAGES.malformed),
    unknown: unauthorized(MESSAGES.unknown),
    revoked: unauthorized(MESSAGES.revoked),
    expired: unauthorized(MESSAGES.expired),
  };
}

/** `GET {prefix}hrs/:hrs_id/events`: a station's ongoing and upcoming events. */
export function eventsDoc(): RouteDoc {
  return {
    tags: ['Stations'],
    operationId: 'listStationEvents',
    summary: 'Ongoing and upcoming events of one station',
    description:
      'The station\'s events not over yet (maintenance, closures, limited service, openings, other announcements), ' +
      'by start time: a JSON array, empty when there are none. An event without `ends_at` is ongoing.',
    responses: {
      '200': {
        description: 'The station\'s ongoing and upcoming events.',
        content: jsonExamples(examplesOf(eventListSchema)),
      },
      '404': responseRef('StationNotFound'),
      ...COMMON,
    },
  };
}

/** `GET {prefix}hrs/:hrs_id/photo`: a station's photo, as a binary image. */
export function photoDoc(): RouteDoc {
  return {
    tags: ['Stations'],
    operationId: 'getStationPhoto',
    summary: 'The photo of one station',
    description:
      'The station photo as a binary image: JPEG, PNG or WebP (at most 5 MiB), the `Content-Type` saying which. ' +
      'The station record\'s `photo_url` links here when there is a photo.',
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
  };
}
