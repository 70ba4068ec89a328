import { forecastSchema } from '../../domain/export-v2/forecast.js';
import type { StationLookup } from '../../domain/stations.js';
import type { RouteDoc } from '../../http/contract.js';
import { JSON_TYPE, notFound, type Reply } from '../../http/errors.js';
import type { Family } from '../../http/family.js';
import type { HttpServer } from '../../http/server.js';
import { STATION_PATH } from '../export/docs.js';
import type { Forecasts } from '../forecast.js';
import { notPublished } from '../history.js';
import { isMapped } from './feed.js';

/**
 * The station panel's forecast, `GET /map/v1/stations/{hrs_id}/forecast`: the body of export v2's
 * `GET /v2/hrs/{hrs_id}/forecast` (one `Forecasts`, src/api/forecast.ts, so both give the same figures),
 * public and limited per client address as the map's other routes, for a station the map shows only
 * (any other is the detail's 404). It moves with the live status and the clock, so it is not
 * conditional: `Cache-Control: max-age=60`, as export v2's. Before the first hour of history is
 * published: the history's 503 with `Retry-After`.
 */
export interface MapForecastDeps {
  stations: StationLookup;
  forecasts: Pick<Forecasts, 'station'>;
  doc?: RouteDoc;
}

export function mapForecastRoute(server: HttpServer, family: Family, deps: MapForecastDeps): void {
  server.route({
    family,
    public: true,
    method: 'GET',
    path: '/map/v1/stations/:hrs_id/forecast',
    params: STATION_PATH,
    response: { 200: forecastSchema },
    ...(deps.doc ? { doc: deps.doc } : {}),
    handler: async (req): Promise<Reply> => {
      const hrsId = req.params.hrs_id!;
      const station = deps.stations.station(hrsId);
      if (!isMapped(station)) throw notFound(`No station with hrs_id "${hrsId}" on the map.`);
      const forecast = await deps.forecasts.station(station);
      if (forecast === null) throw notPublished();
      return { status: 200, headers: { 'Content-Type': JSON_TYPE, 'Cache-Control': 'max-age=60' }, body: JSON.stringify(forecast) };
    },
  });
}
