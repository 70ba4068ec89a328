import { stationPageHeads, stationPageVersion } from '../../../db/queries/stations.js';
import type { Sql } from '../../../db/connect.js';
import type { StationLookup } from '../../domain/stations.js';
import { ifModifiedSince } from '../../http/dates.js';
import { HttpError, type Reply } from '../../http/errors.js';
import type { Family } from '../../http/family.js';
import type { Request } from '../../http/request.js';
import type { HttpServer } from '../../http/server.js';
import { StationRecords } from '../export/records.js';
import { COMMA, conditionalHeaders, eventsReply, notModified, notModifiedSince, photoReply, stationRecordReply } from '../export/replies.js';
import { textQuery } from '../../http/query.js';
import { eventListSchema, stationPageSchema, stationRecordSchema } from '../../domain/export-v2/schemas.js';
import { eventsDoc, photoDoc } from '../export/docs.js';
import { listStationsDoc, stationDoc } from './docs/stations.js';

/**
 * Export v2 stations: `GET /v2/hrs` (the paginated list), `GET /v2/hrs/{hrs_id}` (one record), both
 * conditional (`Last-Modified`, `If-Modified-Since`); `GET /v2/hrs/{hrs_id}/events` (ongoing and
 * upcoming events) and `GET /v2/hrs/{hrs_id}/photo` (the image bytes).
 *
 * Station records are kept serialised per station, keyed by the station's `static_modified_at`: every
 * request reads the current versions from PostgreSQL (one statement for a whole page) and serialises
 * only stations whose version it has not seen, so a record is never stale, on any instance, whoever
 * changed the registry. A 304 needs the versions only.
 */
export interface StationRouteDeps {
  sql: Sql;
  /** The absolute base of links (`BASE_URL`, or the address actually listened on). */
  baseUrl: () => string;
}

/** Registers the routes; returns what to call after a registry reload. */
export function stationRoutes(server: HttpServer, family: Family, deps: StationRouteDeps): { stationsChanged: (changed: ReadonlySet<string>, stations: StationLookup) => void } {
  const { sql } = deps;
  const records = new StationRecords(sql, deps.baseUrl);
  const list = new StationList(deps, records);
  server.route({ family, method: 'GET', path: '/v2/hrs', query: textQuery('limit', 'offset'), response: { 200: stationPageSchema }, doc: listStationsDoc(), handler: (req) => list.page(req) });
  server.route({ family, method: 'GET', path: '/v2/hrs/:hrs_id', response: { 200: stationRecordSchema }, doc: stationDoc(), handler: (req) => stationRecordReply(sql, records, req) });
  server.route({ family, method: 'GET', path: '/v2/hrs/:hrs_id/events', response: { 200: eventListSchema }, doc: eventsDoc(), handler: (req) => eventsReply(sql, req) });
  server.route({ family, method: 'GET', path: '/v2/hrs/:hrs_id/photo', doc: photoDoc(), handler: (req) => photoReply(sql, req) });
  return {
    // Memory only: a removed station's record goes (correctness never depends on this, see above).
    stationsChanged(changed, stations) {
      for (const hrsId of changed) if (stations.station(hrsId) === undefined) records.forget(hrsId);
    },
  };
}

/** `GET /v2/hrs`: a page of records with `count`, `next` and `previous`, conditional on the page's versions. */
class StationList {
  /**
   * The station count, for the station set's version it was counted at (the set moves with every
   * addition and removal): a page then needs no count over the whole table.
   */
  private known = { setModifiedUs: -1, count: 0 };

  constructor(
    private readonly deps: StationRouteDeps,
    private readonly records: StationRecords,
  ) {}

  async page(req: Request): Promise<Reply> {
    const { sql } = this.deps;
    const { limit, offset } = pageParameters(req.query);
    const since = ifModifiedSince(req);
    if (since !== undefined) {
      // Revalidation: the page's version alone, without reading the page.
      const version = await stationPageVersion(sql, limit, offset);
      const newest = Math.max(version.setModifiedUs, version.newestUs ?? 0);
      if (notModifiedSince(newest, since)) return notModified(newest);
    }
    const counted = this.known;
    const page = await stationPageHeads(sql, limit, offset, counted);
    const count = page.count ?? counted.count;
    if (page.count !== null) this.known = { setModifiedUs: page.setModifiedUs, count: page.count };
    const found = await this.records.get(page.stations);
    const newest = Math.max(page.setModifiedUs, found.newestUs, ...page.stations.map((s) => s.modifiedUs));
    return { status: 200, headers: conditionalHeaders(newest), body: this.body(found.bodies, count, limit, offset) };
  }

  /** Records are kept encoded: the page is a copy of bytes, not a 500 kB string to encode again. */
  private body(records: readonly Buffer[], count: number, limit: number, offset: number): Buffer {
    const base = `${this.deps.baseUrl()}/v2/hrs`;
    const link = (at: number) => JSON.stringify(`${base}?limit=${limit}&offset=${at}`);
    const next = offset + limit < count ? link(offset + limit) : 'null';
    const previous = offset > 0 ? link(Math.max(0, offset - limit)) : 'null';
    const parts: Buffer[] = [Buffer.from(`{"count":${count},"next":${next},"previous":${previous},"results":[`)];
    records.forEach((record, index) => {
      if (index > 0) parts.push(COMMA);
      parts.push(record);
    });
    parts.push(CLOSE);
    return Buffer.concat(parts);
  }
}


const CLOSE = Buffer.from(']}');

/* ---- Pagination ----------------------------------------------------------------------------------- */

export const DEFAULT_LIMIT = 100;
export const MAX_LIMIT = 500;

/** `limit` and `offset` of the list; anything malformed or out of range is a 400, never clamped. */
export function pageParameters(query: URLSearchParams): { limit: number; offset: number } {
  const limit = wholeNumber(query, 'limit', DEFAULT_LIMIT);
  if (limit === undefined || limit < 1 || limit > MAX_LIMIT) {
    throw invalidParameter(`limit: must be a whole number from 1 to ${MAX_LIMIT}.`);
  }
  const offset = wholeNumber(query, 'offset', 0);
  if (offset === undefined) throw invalidParameter('offset: must be a whole number, 0 or more.');
  return { limit, offset };
}

/** The parameter as a whole number (digits only), its default when absent, undefined when malformed. */
function wholeNumber(query: URLSearchParams, name: string, fallback: number): number | undefined {
  const values = query.getAll(name);
  if (values.length === 0) return fallback;
  if (values.length > 1) throw invalidParameter(`${name}: give it once (got ${values.length} values).`);
  const text = values[0]!;
  if (!/^\d{1,15}$/.test(text)) return undefined;
  return Number(text);
}

const invalidParameter = (detail: string) => new HttpError(400, 'invalid_parameter', detail);
