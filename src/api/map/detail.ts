import type { Sql } from '../../../db/connect.js';
import { currentEvents, stationHead, stationPhoto } from '../../../db/queries/stations.js';
import { JSON_TYPE, notFound, type Reply } from '../../http/errors.js';
import type { Family } from '../../http/family.js';
import type { HttpServer } from '../../http/server.js';
import type { RouteDoc } from '../../http/contract.js';
import type { StationRecords } from '../export/records.js';
import { STATION_PATH } from '../export/docs.js';
import { isMapped, type MapFeed } from './feed.js';
import type { SummaryDeps } from '../../domain/status/station-summary.js';
import { weekHours } from './week.js';
import { mapStationDetailSchema } from '../../domain/map/schemas.js';
import { driverOptions, nozzleCertification, type DriverLayout, type DriverPricing } from '../../domain/map/driver.js';
import type { StationEntry } from '../../domain/stations.js';
import type { LivePart } from './feature.js';

/**
 * The station panel's detail, `GET /map/v1/stations/{hrs_id}`, and the photo, `GET
 * /map/v1/stations/{hrs_id}/photo`: for a station the map shows (a production station with
 * coordinates; any other is a 404, as an unknown one). The detail is a driver's view, joined in one
 * answer: the station's Feature exactly as the feed lists it (name, position, operator, address), its
 * opening hours and the next seven days' intervals (./week.ts), per fuelling option the feed's
 * five-state value with the gross price and green share of what its nozzles dispense
 * (src/domain/map/driver.ts), how many nozzles are certified, its ongoing and upcoming events (what and
 * when, as `GET /v2/hrs/{hrs_id}/events` lists them, without their ids), and the map's own link to the
 * photo. The record behind it (export v2's, read from the same kept bytes: ../export/records.ts) is not
 * passed on: its dispenser, nozzle, storage and product ids, and the net prices, stay with export v2's
 * personal tokens and their limits.
 */

export interface DetailDeps {
  sql: Sql;
  feed: MapFeed;
  records: StationRecords;
  stations: SummaryDeps['stations'];
  /** The live status's station object (machines/live-status.ts): its `pricing` section. */
  status: { station(hrsId: string): Record<string, unknown> | undefined };
  now?: () => Date;
  docs?: { detail: RouteDoc; photo: RouteDoc };
}

const unknownStation = (hrsId: string) => notFound(`No station with hrs_id "${hrsId}" on the map.`);

export function detailRoutes(server: HttpServer, family: Family, deps: DetailDeps): void {
  const now = deps.now ?? (() => new Date());
  const mapped = (hrsId: string) => {
    const station = deps.stations.station(hrsId);
    if (!isMapped(station)) throw unknownStation(hrsId);
    return station;
  };
  server.route({
    family,
    public: true,
    method: 'GET',
    path: '/map/v1/stations/:hrs_id',
    params: STATION_PATH,
    response: { 200: mapStationDetailSchema },
    ...(deps.docs ? { doc: deps.docs.detail } : {}),
    handler: async (req): Promise<Reply> => {
      const hrsId = req.params.hrs_id!;
      const station = mapped(hrsId);
      const at = now();
      const [held, head, events] = await Promise.all([deps.feed.station(hrsId), stationHead(deps.sql, hrsId), currentEvents(deps.sql, hrsId, at)]);
      const record = head ? (await deps.records.get([head])).bodies[0] : undefined;
      // Removed between the registry's view and the reads.
      if (held === undefined || record === undefined || events === undefined) throw unknownStation(hrsId);
      const pricing = deps.status.station(hrsId)?.pricing as (DriverPricing & { freshness?: string }) | null | undefined;
      const body = detailBody(station, held, JSON.parse(record.toString('utf8')) as DriverLayout & { photo_url?: unknown }, {
        at,
        events,
        pricing: pricing != null && pricing.freshness !== 'unknown' ? pricing : null,
      });
      return { status: 200, headers: { 'Content-Type': JSON_TYPE, 'Cache-Control': 'no-cache' }, body };
    },
  });
  server.route({
    family,
    public: true,
    method: 'GET',
    path: '/map/v1/stations/:hrs_id/photo',
    params: STATION_PATH,
    ...(deps.docs ? { doc: deps.docs.photo } : {}),
    handler: async (req): Promise<Reply> => {
      const hrsId = req.params.hrs_id!;
      mapped(hrsId);
      const photo = await stationPhoto(deps.sql, hrsId);
      if (photo === undefined) throw unknownStation(hrsId);
      if (photo === null) throw notFound(`Station "${hrsId}" has no photo.`);
      return { status: 200, headers: { 'Content-Type': photo.mediaType, 'X-Content-Type-Options': 'nosniff', 'Cache-Control': 'no-cache' }, body: photo.bytes };
    },
  });
}

interface Live {
  at: Date;
  events: NonNullable<Awaited<ReturnType<typeof currentEvents>>>;
  /** The published pricing section; null when none is (or it is unknown). */
  pricing: DriverPricing | null;
}

/** The detail's body: the feed's Feature as its own bytes (exactly what the feed gives), then the driver's view. */
function detailBody(station: StationEntry, held: { feature: string; live: LivePart }, record: DriverLayout & { photo_url?: unknown }, live: Live): string {
  const rest = {
    opening_hours: station.openingHours ?? null,
    week: weekHours(station.openingHours, station.timeZone, live.at, station.holidayCountry),
    fuelling_options: driverOptions(held.live.fuelling_options, record, live.pricing),
    certification: nozzleCertification(record),
    events: live.events.map((e) => ({ kind: e.kind, starts_at: e.starts_at.toISOString(), ends_at: e.ends_at?.toISOString() ?? null, description: e.description })),
    photo: record.photo_url != null ? `/map/v1/stations/${station.hrsId}/photo` : null,
  };
  return `{"hrs_id":${JSON.stringify(station.hrsId)},"feature":${held.feature},${JSON.stringify(rest).slice(1)}`;
}
