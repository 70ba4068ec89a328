import type { RouteDoc } from '../../http/contract.js';
import { responseRef } from '../../http/openapi.js';

/**
 * What the import documents (v1, v1.1, v2) say alike, because their routes answer alike: the
 * error responses of a token's request and of a signal batch, the active stations' operation (status codes order themselves, as
 * integer keys do). Each is made afresh per document, so no two documents share an object.
 */

/** The errors of any request made with a token: refused, over its limit, or the service failing. */
export const tokenErrorResponses = () => ({
  '401': responseRef('Unauthorized'),
  '429': responseRef('TooManyRequests'),
  '500': responseRef('InternalError'),
});

/** The errors of a signal batch: invalid, too large or not JSON, besides those of any token's request. */
export const signalErrorResponses = () => ({
  '400': responseRef('ValidationFailed'),
  '413': responseRef('PayloadTooLarge'),
  '415': responseRef('UnsupportedMediaType'),
  ...tokenErrorResponses(),
});

/** The active stations' operation, the same in every generation but for what `description` and the 200 (`ok`) say of its lists. */
export const activeStationsOperation = (description: string, ok: Record<string, unknown>): RouteDoc => ({
  tags: ['Stations'],
  operationId: 'getActiveStations',
  summary: 'List the stations the token covers',
  description,
  responses: { '200': ok, ...tokenErrorResponses() },
});
