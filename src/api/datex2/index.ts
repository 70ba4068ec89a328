import { httpDate, ifModifiedSince } from '../../http/dates.js';
import { encodedBody } from '../../http/encoding.js';
import { HttpError } from '../../http/errors.js';
import type { Family } from '../../http/family.js';
import type { HttpServer } from '../../http/server.js';
import { exportV2Family, type ExportV2FamilyDeps } from '../export-v2/family.js';
import { statusDoc, tableDoc } from './docs.js';
import { Datex2Publications, type PublicationDeps } from './publications.js';

/**
 * DATEX II v3.7 publications for National Access Points (AFIR Art. 20): `GET /datex2/v3/table` (the
 * static data: `aegi:EnergyInfrastructureTablePublication`) and `GET /datex2/v3/status` (the dynamic
 * data: `aegi:EnergyInfrastructureStatusPublication`). Open data read with personal export v2 tokens:
 * the same family settings as export v2 (problem bodies, the CC BY 4.0 `Link`, CORS) and the same
 * per-user budget (a request here counts against the user's export v2 limits, on every instance).
 */

export const XML_TYPE = 'application/xml; charset=utf-8';

export type Datex2Deps = ExportV2FamilyDeps & PublicationDeps;

export interface Datex2Api {
  family: Family;
  publications: Datex2Publications;
}

export function datex2Api(server: HttpServer, deps: Datex2Deps): Datex2Api {
  // Export v2's document covers the publications (same tokens and limits): no document of its own.
  const family: Family = { ...exportV2Family(deps), name: 'datex2', prefix: '/datex2/', document: undefined };
  const publications = new Datex2Publications(deps);
  server.route({
    family,
    method: 'GET',
    path: '/datex2/v3/table',
    doc: tableDoc(),
    handler: async (req) => {
      const since = ifModifiedSince(req, publications.now().getTime());
      const table = await publications.tableDocument();
      if (table === undefined) {
        const { no_capacity: capacity, no_coordinates: coordinates } = publications.leftOutCounts();
        throw new HttpError(
          404,
          'no_publishable_station',
          'No station can be published in DATEX II yet: the AFIR profile requires a station\'s cumulative_daily_hydrogen_capacity ' +
            `and coordinates (${capacity} station(s) lack the capacity, ${coordinates} the coordinates).`,
        );
      }
      const seconds = Math.floor(table.lastModifiedUs / 1_000_000);
      const conditional = { 'Last-Modified': httpDate(seconds), 'Cache-Control': 'no-cache' };
      if (since !== undefined && seconds <= since) return { status: 304, headers: conditional };
      return encodedBody(req, table.body, XML_TYPE, conditional);
    },
  });
  server.route({
    family,
    method: 'GET',
    path: '/datex2/v3/status',
    doc: statusDoc(),
    handler: async (req) => encodedBody(req, await publications.statusDocument(), XML_TYPE, { 'Cache-Control': 'no-cache' }),
  });
  return { family, publications };
}
