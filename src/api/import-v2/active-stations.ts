import { activeStations } from '../../../db/queries/assignments.js';
import { activeStationsResponseSchema } from '../../domain/import-v2/schemas.js';
import type { Sql } from '../../../db/connect.js';
import { json } from '../../http/errors.js';
import type { Family } from '../../http/family.js';
import type { HttpServer } from '../../http/server.js';
import { originatorOf } from '../auth.js';
import { activeStationsDoc } from './docs/stations.js';

/** `GET /import/v2/active-stations/`: the token's originator's stations per signal type and state. */
export function activeStationsRoute(server: HttpServer, family: Family, sql: Sql): void {
  server.route({
    family,
    method: 'GET',
    path: '/import/v2/active-stations/',
    response: { 200: activeStationsResponseSchema },
    doc: activeStationsDoc(),
    handler: async (req) => json(200, { stations: await activeStations(sql, originatorOf(req)) }),
  });
}
