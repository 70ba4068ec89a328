import { activeStations } from '../../../db/queries/assignments.js';
import { json } from '../../http/errors.js';
import type { HttpServer } from '../../http/server.js';
import type { Services } from '../../services.js';

/** `GET /import/v2/active-stations/`: the token's originator's stations per signal type and state. */
export function activeStationsRoute(server: HttpServer, { sql }: Services): void {
  server.route({
    method: 'GET',
    path: '/import/v2/active-stations/',
    auth: 'import_v2',
    handler: async (req) => {
      const principal = req.principal;
      if (principal?.kind !== 'originator') throw new Error('import v2 route reached without an originator');
      return json(200, { stations: await activeStations(sql, principal.id) });
    },
  });
}
