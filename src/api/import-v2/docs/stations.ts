import { activeStationsResponseSchema } from '../../../domain/import-v2/schemas.js';
import type { RouteDoc } from '../../../http/contract.js';
import { examplesOf } from '../../../http/openapi.js';
import { activeStationsOperation } from '../../docs/import.js';

/** The operation of `GET /import/v2/active-stations/`: the stations the token's originator is assigned to. */
export function activeStationsDoc(): RouteDoc {
  return activeStationsOperation(
    'The stations the token\'s signal originator is assigned to, per signal type, with `live` (published) and ' +
      '`testing` (validated, not published) station ids. The trailing slash of the path is required.',
    {
      description: 'The originator\'s stations per signal type and assignment state.',
      // The schema: the route's `response`.
      content: { 'application/json': { examples: examplesOf(activeStationsResponseSchema) } },
    },
  );
}
