import { activeStationsResponseSchema } from '../../../domain/import-v2/schemas.js';
import type { RouteDoc } from '../../../http/contract.js';
import { examplesOf, responseRef } from '../../../http/openapi.js';

/** The operation of `GET /import/v2/active-stations/`: the stations the token's originator is assigned to. */
export function activeStationsDoc(): RouteDoc {
  return {
    tags: ['Stations'],
    operationId: 'getActiveStations',
    summary: 'List the stations the token covers',
    description:
      'The stations the token\'s signal originator is assigned to, per signal type, with `live` (published) and ' +
      '`testing` (validated, not published) station ids. The trailing slash of the path is required.',
    responses: {
      '200': {
        description: 'The originator\'s stations per signal type and assignment state.',
        // The schema: the route's `response`.
        content: { 'application/json': { examples: examplesOf(activeStationsResponseSchema) } },
      },
      '401': responseRef('Unauthorized'),
      '429': responseRef('TooManyRequests'),
      '500': responseRef('InternalError'),
    },
  };
}
