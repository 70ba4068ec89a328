import type { Logger } from 'pino';
import type { Sql } from '../../../db/connect.js';
import type { ReferenceData } from '../../../db/queries/reference.js';
import type { StationDirectory } from '../../domain/stations.js';
import type { Family } from '../../http/family.js';
import type { RateLimit, RateLimiter } from '../../infra/rate-limit.js';
import type { HttpServer } from '../../http/server.js';
import type { TokenFinder } from '../auth.js';
import { fuellingOptionsV2, vehicleTypes } from '../reference.js';
import { exportV2Family } from './family.js';
import { fuelTypesDoc, vehicleTypesDoc } from './docs/reference.js';
import { fuelTypeListSchema, vehicleTypeListSchema } from '../../domain/export-v2/schemas.js';
import { stationRoutes, type LoadedRegistry } from './stations.js';
import { statusRoutes, type StatusSource } from './status.js';
import { historyRoutes } from './history.js';
import { forecastRoutes } from './forecast.js';
import type { Forecasts } from '../forecast.js';
import { StationPoints } from './geo.js';

export interface ExportV2Deps {
  sql: Sql;
  tokens: TokenFinder;
  limiter: RateLimiter;
  limits: readonly RateLimit[];
  log: Logger;
  reference: ReferenceData;
  status: StatusSource;
  baseUrl: () => string;
  /** The registry (the history extension: which stations exist, their options and layouts; the geo extension: where they stand). */
  stations: StationDirectory & LoadedRegistry;
  /** STATUS_UNKNOWN_AFTER and HISTORY_RETENTION_DAYS, for the history extension. */
  unknownAfterMs: number;
  retentionDays: number;
  /** DELETED_RETENTION_DAYS: how far back the delta reaches (the events' `ended` sweep skips older ends). */
  deletedRetentionDays: number;
  /** The platform's clock: the server's time `If-Modified-Since` is held to. */
  now: () => Date;
  /** The availability forecasts (the composition root's: the map and the portal read the same). */
  forecasts: Forecasts;
}

export interface ExportV2Api {
  family: Family;
  /** The family's authentication, for credentials checked again later (open status streams). */
  authenticate: NonNullable<Family['auth']>;
  /** To call after every registry reload (frees the kept records of removed stations, rebuilds the spatial index). */
  stationsChanged(changed: ReadonlySet<string>, stations: StationDirectory): void;
}

/** Export v2: its family (./family.ts), the reference lists, live status, station records, the history, forecast and geo extensions. */
export function exportV2Api(server: HttpServer, deps: ExportV2Deps): ExportV2Api {
  const family = exportV2Family(deps);
  const authenticate = family.auth!;
  const options = fuellingOptionsV2(deps.reference);
  const vehicles = vehicleTypes(deps.reference);
  server.route({ family, method: 'GET', path: '/v2/fuel-type', response: { 200: fuelTypeListSchema }, doc: fuelTypesDoc(deps.reference), handler: () => options });
  server.route({ family, method: 'GET', path: '/v2/vehicle-type', response: { 200: vehicleTypeListSchema }, doc: vehicleTypesDoc(deps.reference), handler: () => vehicles });
  // The geo extension's spatial index, over the registry as loaded before the routes exist (built when first asked for).
  const points = new StationPoints(deps.stations);
  statusRoutes(server, family, deps.status, points);
  const stations = stationRoutes(server, family, { sql: deps.sql, baseUrl: deps.baseUrl, points, registry: deps.stations, deletedRetentionDays: deps.deletedRetentionDays, now: deps.now });
  historyRoutes(server, family, deps);
  forecastRoutes(server, family, { stations: deps.stations, forecasts: deps.forecasts });
  return {
    family,
    authenticate,
    stationsChanged(changed, directory) {
      points.rebuild(directory);
      stations.stationsChanged(changed, directory);
    },
  };
}
