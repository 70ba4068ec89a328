import type { Logger } from 'pino';
import type { Sql } from '../../../db/connect.js';
import { mapStationRows } from '../../../db/queries/map.js';
import type { Family } from '../../http/family.js';
import type { HttpServer } from '../../http/server.js';
import type { RateLimiter } from '../../infra/rate-limit.js';
import type { Redis } from '../../infra/redis.js';
import type { Config } from '../../config/config.js';
import { mapFamily } from './family.js';
import { MapFeed, type MapFeedDeps } from './feed.js';
import { feedRoute } from './feed-routes.js';
import { detailRoutes } from './detail.js';
import { StationRecords } from '../export/records.js';
import { mapStream } from './stream.js';
import { detailDoc, feedDoc, forecastDoc, mapStreamDoc, photoDoc } from './docs.js';
import { mapForecastRoute } from './forecast.js';
import type { Forecasts } from '../forecast.js';
import { StreamSlots } from '../../infra/stream-slots.js';
import { mapPageReply, mapPageRoutes } from './page.js';
import { nearestPlaceRoute } from './place-tiles.js';
import type { Reply } from '../../http/errors.js';
import type { Request } from '../../http/request.js';
import type { PlacesLoader } from '../places.js';
import { alertRoutes, type AlertDeps } from '../alerts/index.js';

/**
 * The public map and its feed (`/map/…`, and the map page at `/`): served unless PUBLIC_MAP=false,
 * without a credential, limited per client address. The feed (`/map/v1/stations.geojson`), a
 * station's detail, photo and forecast (./forecast.ts), and the stream of changes are this module's; the page's own routes
 * (its files, the basemap, the config; the page itself is `/`'s) are ./page.ts's, on the same family.
 */
export interface MapDeps extends Omit<MapFeedDeps, 'readStatics'> {
  /**
   * PUBLIC_MAP (`publicMap`), MAP_STYLE_URL (`mapStyleUrl`), MAP_RATE_LIMIT (`mapRateLimit`), MAP_RATE_LIMIT_DAY (`mapRateLimitDay`),
   * MAP_STREAMS_PER_ADDRESS (`mapStreamsPerAddress`), PUSH_IDLE_TIMEOUT (`pushIdleTimeoutSeconds`: the stream's, as every WebSocket's).
   */
  config: Pick<Config, 'publicMap' | 'mapStyleUrl' | 'mapRateLimit' | 'mapRateLimitDay' | 'mapStreamsPerAddress' | 'pushIdleTimeoutSeconds' | 'redisPrefix'> &
    AlertDeps['config'];
  sql: Sql;
  redis: Redis;
  /** The base of the links export v2's records carry (BASE_URL). */
  baseUrl: () => string;
  status: MapFeedDeps['status'] & { station(hrsId: string): Record<string, unknown> | undefined };
  limiter: RateLimiter;
  log: Logger;
  /** The place names' data, shared with the portal's pin (../places.ts). */
  places: PlacesLoader;
  /** Driver alerts' mail and what a confirmation tells (../alerts/index.ts). */
  alerts: Pick<AlertDeps, 'sendLink' | 'mailReady' | 'confirmed'>;
  /** The availability forecasts, export v2's (../forecast.ts): the station panel shows a station's. */
  forecasts: Pick<Forecasts, 'station'>;
}

/** What the composition root keeps of the map: told of registry reloads, closed at shutdown. */
export interface MapApi {
  family: Family;
  feed: MapFeed;
  /**
   * Starts listening to the live status, registers the stream (once every other socket route is) and
   * reads the stations' static fields (the promise settles when they are read; it never rejects). A
   * stream's `hello` waits for that read, so it names the feed's ETag (null while a large registry's
   * first settling is under way: the `changed` that ends it names the ETag).
   */
  start(): Promise<void>;
  /** Streams open on this process (metrics). */
  readonly openStreams: number;
  /** The map page, the answer of `/` to a browser (the index page's route asks for it). */
  page: (req: Request) => Reply;
  /** The registry reloaded: the static fields are read again (settles when read or failed, never rejects). */
  stationsChanged(): Promise<void>;
  close(): void;
}

export function mapApi(server: HttpServer, deps: MapDeps): MapApi | undefined {
  if (!deps.config.publicMap) return undefined;
  const limits = { perMinute: deps.config.mapRateLimit, perDay: deps.config.mapRateLimitDay };
  const family = mapFamily({ limiter: deps.limiter, log: deps.log, ...limits });
  server.family(family);
  const feed = new MapFeed({ ...deps, readStatics: () => mapStationRows(deps.sql) });
  feedRoute(server, family, feed, feedDoc(limits));
  detailRoutes(server, family, { sql: deps.sql, feed, records: new StationRecords(deps.sql, deps.baseUrl), stations: deps.stations, status: deps.status, docs: { detail: detailDoc(limits), photo: photoDoc(limits) } });
  mapForecastRoute(server, family, { stations: deps.stations, forecasts: deps.forecasts, doc: forecastDoc(limits) });
  const slots = new StreamSlots(deps.redis, `${deps.config.redisPrefix}:map`, deps.config.mapStreamsPerAddress, deps.log.child({ component: 'map' }));
  let stream: ReturnType<typeof mapStream> | undefined;
  mapPageRoutes(server, family, { styleUrl: deps.config.mapStyleUrl, places: deps.places });
  nearestPlaceRoute(server, family, deps.places);
  alertRoutes(server, family, { sql: deps.sql, feed, stations: deps.stations, limiter: deps.limiter, log: deps.log, config: deps.config, baseUrl: deps.baseUrl, ...deps.alerts });
  return {
    start: () => {
      stream = mapStream({
        server, family, feed, slots, perAddress: deps.config.mapStreamsPerAddress, idleTimeoutSeconds: deps.config.pushIdleTimeoutSeconds,
        log: deps.log, doc: mapStreamDoc(deps.config.mapStreamsPerAddress, limits),
      });
      // Never rejects: a failed read is logged, and the next reload reads again.
      return feed.start();
    },
    family,
    feed,
    get openStreams() {
      return stream?.open ?? 0;
    },
    page: (req) => {
      // The built-in style names places: their data starts loading with the page (the first place tile
      // would wait for it), while the browser still reads the page's scripts, the feed and the basemap.
      if (deps.config.mapStyleUrl === undefined) void deps.places().catch(() => {});
      return mapPageReply(req, { styleUrl: deps.config.mapStyleUrl });
    },
    stationsChanged: () => feed.refreshStatics(),
    close: () => {
      stream?.close();
      feed.close();
    },
  };
}
