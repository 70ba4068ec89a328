import { isSandboxId } from '../../domain/sandbox.js';
import type { StationLookup } from '../../domain/stations.js';
import { JSON_TYPE, type Reply } from '../../http/errors.js';
import type { Family } from '../../http/family.js';
import type { Request } from '../../http/request.js';
import type { HttpServer } from '../../http/server.js';
import { forecastSchema } from '../../domain/export-v2/forecast.js';
import { STATION_PATH } from '../export/docs.js';
import { unknownStation } from '../export/replies.js';
import { notPublished } from '../history.js';
import type { Forecasts } from '../forecast.js';
import { forecastDoc } from './docs/forecast.js';

/**
 * The export v2 extension beyond the specification: `GET /v2/hrs/{hrs_id}/forecast`, each fuelling
 * option's availability forecast for the next hours (src/api/forecast.ts). It moves with the live
 * status and the clock, so it is not conditional: `Cache-Control: max-age=60` lets a client keep it a
 * minute. Before the first hour of history is published: a 503 with `Retry-After`, as the history's.
 */
export function forecastRoutes(server: HttpServer, family: Family, deps: { stations: StationLookup; forecasts: Forecasts }): void {
  server.route({
    family,
    method: 'GET',
    path: '/v2/hrs/:hrs_id/forecast',
    params: STATION_PATH,
    response: { 200: forecastSchema },
    doc: forecastDoc(),
    handler: (req) => forecastReply(deps, req),
  });
}

async function forecastReply(deps: { stations: StationLookup; forecasts: Forecasts }, req: Request): Promise<Reply> {
  const hrsId = req.params.hrs_id!;
  const station = isSandboxId(hrsId) ? undefined : deps.stations.station(hrsId);
  if (station === undefined) throw unknownStation(hrsId);
  const forecast = await deps.forecasts.station(station);
  if (forecast === null) throw notPublished();
  return { status: 200, headers: { 'Content-Type': JSON_TYPE, 'Cache-Control': 'max-age=60' }, body: JSON.stringify(forecast) };
}
