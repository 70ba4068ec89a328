import type { Sql } from '../../../db/connect.js';
import { stationPageHeads, stationPageVersion, type StationRow } from '../../../db/queries/stations.js';
import { fuelTypeCounts, v1FuelTypeCounts } from '../../domain/fuel-types.js';
import type { Dialect } from '../../domain/import-v1/options.js';
import { ifModifiedSince } from '../../http/dates.js';
import type { Family } from '../../http/family.js';
import type { HttpServer } from '../../http/server.js';
import { audienceOf } from '../auth.js';
import { recordHead, spreadDetails, StationRecords } from '../export/records.js';
import {
  COMMA,
  conditionalHeaders,
  eventsReply,
  notModified,
  notModifiedSince,
  photoReply,
  stationRecordReply,
} from '../export/replies.js';
import { eventListSchema } from '../../domain/export-v1/schemas.js';
import { STATION_PATH } from '../export/docs.js';
import { EXPORT_DIALECT_DOCS } from './docs/dialects.js';
import { eventsDoc, listStationsDoc, photoDoc, stationDoc } from './docs/stations.js';

/**
 * The legacy export's stations: `GET {prefix}hrs` (every station, not paginated, sorted by hrs_id) and
 * `GET {prefix}hrs/{hrs_id}`, both conditional (`Last-Modified`, `If-Modified-Since`) as on v2, and
 * the station's `events` and `photo`. Records are kept serialised per station version, as v2's.
 *
 * - v1.1: the registry's fields, the station's static (AFIR) details at the top level as given,
 *   `fuel_types` with their dispenser count (v1.1 codes) and `photo_url`.
 * - v1: its frozen contract: the registry's fields, `fuel_types` in v1 codes (`700hd` has none),
 *   `photo_url`; no AFIR details.
 * Export v2's record carries every field of the v1.1 record (a test compares them key by key).
 *
 * The sandbox token sees the sandbox's sample stations only, every other token production stations only.
 */

/** More than any registry holds: the whole list in one read. */
const ALL = 1_000_000;

export function legacyRecord(dialect: Dialect, prefix: string) {
  return (row: StationRow, baseUrl: string): Record<string, unknown> => {
    const record = recordHead(row);
    if (dialect === 'v1.1') spreadDetails(record, row.details);
    const counts = fuelTypeCounts(row.dispensers, row.v1_fuel_types);
    record.fuel_types = dialect === 'v1' ? v1FuelTypeCounts(counts) : counts;
    record.photo_url = row.has_photo ? `${baseUrl}${prefix}hrs/${row.hrs_id}/photo` : null;
    return record;
  };
}

export function legacyStationRoutes(server: HttpServer, family: Family, dialect: Dialect, deps: { sql: Sql; baseUrl: () => string; now: () => Date }): void {
  const { sql } = deps;
  const prefix = family.prefix;
  const records = new StationRecords(sql, deps.baseUrl, legacyRecord(dialect, prefix));
  const d = EXPORT_DIALECT_DOCS[dialect];
  server.route({
    family,
    method: 'GET',
    path: `${prefix}hrs`,
    response: { 200: d.bodies.StationList },
    doc: listStationsDoc(d),
    handler: async (req) => {
      const sandbox = audienceOf(req) === 'sandbox';
      const since = ifModifiedSince(req, deps.now().getTime());
      if (since !== undefined) {
        const version = await stationPageVersion(sql, ALL, 0, sandbox);
        const newest = Math.max(version.setModifiedUs, version.newestUs ?? 0);
        if (notModifiedSince(newest, since)) return notModified(newest);
      }
      const page = await stationPageHeads(sql, ALL, 0, undefined, sandbox);
      const found = await records.get(page.stations);
      const newest = page.stations.reduce((most, s) => Math.max(most, s.modifiedUs), Math.max(page.setModifiedUs, found.newestUs));
      const parts: Buffer[] = [OPEN];
      found.bodies.forEach((body, index) => {
        if (index > 0) parts.push(COMMA);
        parts.push(body);
      });
      parts.push(CLOSE);
      return { status: 200, headers: conditionalHeaders(newest), body: Buffer.concat(parts) };
    },
  });
  server.route({ family, method: 'GET', path: `${prefix}hrs/:hrs_id`, params: STATION_PATH, response: { 200: d.bodies.Station }, doc: stationDoc(d), handler: (req) => stationRecordReply(sql, records, req, deps.now) });
  server.route({ family, method: 'GET', path: `${prefix}hrs/:hrs_id/events`, params: STATION_PATH, response: { 200: eventListSchema }, doc: eventsDoc(d), handler: (req) => eventsReply(sql, req) });
  server.route({ family, method: 'GET', path: `${prefix}hrs/:hrs_id/photo`, params: STATION_PATH, doc: photoDoc(d), handler: (req) => photoReply(sql, req) });
}

const OPEN = Buffer.from('[');
const CLOSE = Buffer.from(']');
