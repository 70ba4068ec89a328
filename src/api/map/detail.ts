import type { Sql } from '../../../db/connect.js';
import { currentEvents, stationHead, stationPhoto } from '../../../db/queries/stations.js';
import { JSON_TYPE, notFound, type Reply } from '../../http/errors.js';
import type { Family } from '../../http/family.js';
import type { HttpServer } from '../../http/server.js';
import type { RouteDoc } from '../../http/contract.js';
import type { StationRecords } from '../export/records.js';
import { isMapped, type MapFeed } from './feed.js';
import type { SummaryDeps } from '../../domain/status/station-summary.js';
import { weekHours } from './week.js';
import { mapStationDetailSchema } from '../../domain/map/schemas.js';

/**
 * The station panel's detail, `GET /map/v1/stations/{hrs_id}`, and the photo, `GET
 * /map/v1/stations/{hrs_id}/photo`: for a station the map shows (a production station with
 * coordinates; any other is a 404, as an unknown one). The detail joins what the panel needs in one
 * answer: the station's Feature exactly as the feed lists it, its export v2 record exactly as `GET
 * /v2/hrs/{hrs_id}` gives it (the same kept bytes: ../export/records.ts), its opening hours and the
 * next seven days' intervals (./week.ts), its ongoing and upcoming events as `GET
 * /v2/hrs/{hrs_id}/events` lists them, its live prices as `GET /v2/hrs/{hrs_id}/status` has them (null
 * when none are published), and the map's own link to the photo.
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
    response: { 200: mapStationDetailSchema },
    ...(deps.docs ? { doc: deps.docs.detail } : {}),
    handler: async (req): Promise<Reply> => {
      const hrsId = req.params.hrs_id!;
      const station = mapped(hrsId);
      const at = now();
      const [feature, head, events] = await Promise.all([deps.feed.feature(hrsId), stationHead(deps.sql, hrsId), currentEvents(deps.sql, hrsId, at)]);
      const record = head ? (await deps.records.get([head])).bodies[0] : undefined;
      // Removed between the registry's view and the reads.
      if (feature === undefined || record === undefined || events === undefined) throw unknownStation(hrsId);
      const pricing = deps.status.station(hrsId)?.pricing as { freshness?: string } | null | undefined;
      const hasPhoto = (JSON.parse(record.toString('utf8')) as { photo_url?: unknown }).photo_url != null;
      const rest = {
        opening_hours: station.openingHours ?? null,
        week: weekHours(station.openingHours, station.timeZone, at, station.holidayCountry),
        events: events.map((e) => ({ id: e.id, kind: e.kind, starts_at: e.starts_at.toISOString(), ends_at: e.ends_at?.toISOString() ?? null, description: e.description })),
        prices: pricing != null && pricing.freshness !== 'unknown' ? pricing : null,
        photo: hasPhoto ? `/map/v1/stations/${hrsId}/photo` : null,
      };
      // The feature and the record as their own bytes, so they are exactly what the feed and export v2 give.
      const rested = JSON.stringify(rest).slice(1);
      const body = `{"hrs_id":${JSON.stringify(hrsId)},"feature":${feature},"record":${record.toString('utf8')},${rested}`;
      return { status: 200, headers: { 'Content-Type': JSON_TYPE, 'Cache-Control': 'no-cache' }, body };
    },
  });
  server.route({
    family,
    public: true,
    method: 'GET',
    path: '/map/v1/stations/:hrs_id/photo',
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
