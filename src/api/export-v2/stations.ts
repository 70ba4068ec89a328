import { stationHeadsOf, stationPageHeads, stationPageVersion, type StationHead } from '../../../db/queries/stations.js';
import type { Sql } from '../../../db/connect.js';
import type { ExportListVersion, StationLookup } from '../../domain/stations.js';
import { ifModifiedSince } from '../../http/dates.js';
import { HttpError, type Reply } from '../../http/errors.js';
import type { Family } from '../../http/family.js';
import type { Request } from '../../http/request.js';
import type { HttpServer } from '../../http/server.js';
import { StationRecords } from '../export/records.js';
import { conditionalHeaders, eventsReply, notModified, notModifiedSince, photoReply, stationRecordReply } from '../export/replies.js';
import { z } from 'zod';
import { pageQueryFields } from './docs/components.js';
import { deltaQueryFields } from './docs/delta.js';
import { geoQueryFields } from './docs/geo.js';
import { eventDeltaSchema, eventListSchema, stationListAnswerSchema, stationRecordSchema } from '../../domain/export-v2/schemas.js';
import { DEFAULT_LIMIT, MAX_LIMIT } from '../../domain/export-v2/stations.js';
import { deltaStart, eventDeltaReply, stationDeltaReply } from './delta.js';
import { changeLogHead } from '../../../db/queries/change-log.js';
import { syncToken } from '../../domain/export-v2/delta.js';
import { eventsDoc, photoDoc, STATION_PATH } from '../export/docs.js';
import { listStationsDoc, stationDoc } from './docs/stations.js';
import { eventDeltaDoc } from './docs/delta.js';
import { assemble, featureItem, filterQuery, GEO_PARAMETERS, GEOJSON_TYPE, geoFilterOf, pageItem, VARY_ACCEPT, wantsGeoJson, type PageItem, type StationPoints } from './geo.js';
import type { GeoFilter } from '../../domain/geo.js';

/**
 * Export v2 stations: `GET /v2/hrs` (the paginated list), `GET /v2/hrs/{hrs_id}` (one record), both
 * conditional (`Last-Modified`, `If-Modified-Since`); `GET /v2/hrs/{hrs_id}/events` (ongoing and
 * upcoming events) and `GET /v2/hrs/{hrs_id}/photo` (the image bytes).
 *
 * Station records are kept serialised per station, keyed by the station's `static_modified_at`: every
 * request reads the current versions from PostgreSQL (one statement for a whole page) and serialises
 * only stations whose version it has not seen, so a record is never stale, on any instance, whoever
 * changed the registry. A 304 needs the versions only.
 *
 * The geo extension (./geo.ts): with `bbox` or `near` the list's stations are those the spatial index
 * in memory finds, in its order; their records are the same kept ones, read by id.
 *
 * The delta extension (./delta.ts): with `since` or `updated_since` the list answers the stations
 * changed after that point (same kept records, tombstones for removed ones), and `GET /v2/hrs/events`
 * the events changed; every list answer carries the change log's `sync_token`.
 */
export interface StationRouteDeps {
  sql: Sql;
  /** The absolute base of links (`BASE_URL`, or the address actually listened on). */
  baseUrl: () => string;
  /** The spatial index of the stations with coordinates (the geo extension, ./geo.ts). */
  points: StationPoints;
  /** The registry the index is built from: the version it loaded, and a reload when PostgreSQL is past it. */
  registry: LoadedRegistry;
  /** DELETED_RETENTION_DAYS (the delta, ./delta.ts). */
  deletedRetentionDays: number;
  /** The platform's clock: the server's time `If-Modified-Since` is held to. */
  now: () => Date;
}

/** What a geo answer needs to know of the registry in memory (src/registry/registry.ts). */
export interface LoadedRegistry extends StationLookup {
  /** The version in PostgreSQL its rows reflect at least (microseconds). */
  readonly loadedVersionUs: number;
  /** The list's version and sync position as the loaded rows state them; undefined for rows without versions. */
  readonly exportListVersion: ExportListVersion | undefined;
  /** Reads it again; the spatial index is rebuilt before this settles (a reload listener). */
  reload(): Promise<void>;
}

/** Registers the routes; returns what to call after a registry reload. */
export function stationRoutes(server: HttpServer, family: Family, deps: StationRouteDeps): { stationsChanged: (changed: ReadonlySet<string>, stations: StationLookup) => void } {
  const { sql } = deps;
  const records = new StationRecords(sql, deps.baseUrl);
  const list = new StationList(deps, records);
  server.route({
    family,
    method: 'GET',
    path: '/v2/hrs',
    query: z.object({ ...pageQueryFields(), ...deltaQueryFields(), ...geoQueryFields() }),
    response: { 200: stationListAnswerSchema },
    doc: listStationsDoc(),
    handler: (req) => list.page(req),
  });
  // The events' delta (./delta.ts); a static segment, so never taken for a station's hrs_id (five capitals).
  server.route({
    family,
    method: 'GET',
    path: '/v2/hrs/events',
    query: z.object({ limit: pageQueryFields().limit, ...deltaQueryFields() }),
    response: { 200: eventDeltaSchema },
    doc: eventDeltaDoc(),
    handler: (req) => eventDeltaReply(sql, deps.baseUrl(), deps.deletedRetentionDays, req),
  });
  server.route({ family, method: 'GET', path: '/v2/hrs/:hrs_id', params: STATION_PATH, response: { 200: stationRecordSchema }, doc: stationDoc(), handler: (req) => stationRecordReply(sql, records, req, deps.now) });
  server.route({ family, method: 'GET', path: '/v2/hrs/:hrs_id/events', params: STATION_PATH, response: { 200: eventListSchema }, doc: eventsDoc(), handler: (req) => eventsReply(sql, req) });
  server.route({ family, method: 'GET', path: '/v2/hrs/:hrs_id/photo', params: STATION_PATH, doc: photoDoc(), handler: (req) => photoReply(sql, req) });
  return {
    // Memory only: a removed station's record goes (correctness never depends on this, see above).
    stationsChanged(changed, stations) {
      for (const hrsId of changed) if (stations.station(hrsId) === undefined) records.forget(hrsId);
    },
  };
}

/** One page as read: its stations' records (undefined: removed meanwhile) and what the body's links need. */
interface ReadPage {
  /** For `near`: each head's distance in kilometres, at its index. */
  distancesKm?: readonly number[];
  heads: readonly StationHead[];
  bodies: readonly (Buffer | undefined)[];
  count: number;
  newestUs: number;
  /** The change log's position the page reflects at least (its `sync_token`). */
  syncPosition: number;
}

/**
 * `GET /v2/hrs`: a page of records with `count`, `next` and `previous`, conditional on the page's
 * versions; with a geo filter (./geo.ts) the page of the stations it finds; as JSON, or as a GeoJSON
 * FeatureCollection when the client prefers it.
 */
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
    const delta = deltaStart(req);
    if (delta) return stationDeltaReply(this.deps.sql, this.records, this.deps.baseUrl(), delta.start, delta.limit);
    const { limit, offset } = pageParameters(req.query);
    const filter = geoFilterOf(req);
    const since = ifModifiedSince(req, this.deps.now().getTime());
    const read = filter ? await this.filtered(filter, limit, offset, since) : await this.unfiltered(limit, offset, since);
    if (typeof read === 'number') return withVary(notModified(read));
    const links = { base: `${this.deps.baseUrl()}/v2/hrs?${filterQuery(req, filter)}`, count: read.count, limit, offset, token: syncToken(read.syncPosition) };
    const headers = { ...conditionalHeaders(read.newestUs), Vary: VARY_ACCEPT };
    // Each record whole behind its distance: the page is one copy of bytes.
    const items: PageItem[] = [];
    const geoJson = wantsGeoJson(req);
    for (let i = 0; i < read.bodies.length; i++) {
      const record = read.bodies[i];
      if (record === undefined) continue;
      const item = pageItem(record, read.distancesKm?.[i]);
      if (!geoJson) {
        items.push(item);
        continue;
      }
      const hrsId = read.heads[i]!.hrsId;
      const point = this.deps.points.pointOf(hrsId);
      if (point) items.push(featureItem(hrsId, point, item));
    }
    if (geoJson) return { status: 200, headers: { ...headers, 'Content-Type': GEOJSON_TYPE }, body: listBody('{"type":"FeatureCollection",', links, 'features', items) };
    return { status: 200, headers, body: listBody('{', links, 'results', items) };
  }

  /** The page of the whole list (by hrs_id, from PostgreSQL); its version alone (a number) when not modified since. */
  private async unfiltered(limit: number, offset: number, since: number | undefined): Promise<ReadPage | number> {
    const { sql } = this.deps;
    if (since !== undefined) {
      // Revalidation: the page's version alone, without reading the page.
      const version = await stationPageVersion(sql, limit, offset);
      const newest = Math.max(version.setModifiedUs, version.newestUs ?? 0);
      if (notModifiedSince(newest, since)) return newest;
    }
    // Before the page: a client that reads the whole list, then syncs from here, misses nothing.
    const syncPosition = await changeLogHead(sql);
    const counted = this.known;
    const page = await stationPageHeads(sql, limit, offset, counted);
    const count = page.count ?? counted.count;
    if (page.count !== null) this.known = { setModifiedUs: page.setModifiedUs, count: page.count };
    const found = await this.records.aligned(page.stations);
    const newestUs = Math.max(page.setModifiedUs, found.newestUs, ...page.stations.map((s) => s.modifiedUs));
    return { heads: page.stations, bodies: found.bodies, count, newestUs, syncPosition };
  }

  /**
   * The page of a geo query's matches, in their order. Its version is the newest of any station and the
   * set's: a station whose coordinates changed may have entered or left the matches, moving nothing on
   * this page.
   *
   * From memory when the registry carries its versions (it does when read from PostgreSQL): matches,
   * versions and sync position all of the loaded registry, so `Last-Modified` names the version the
   * matches are of, and nothing is asked of PostgreSQL but the records not kept yet. A record read from
   * PostgreSQL newer than the registry in memory (a change whose announcement has not arrived yet) has
   * the registry read again first, as would the version read from PostgreSQL without versions in
   * memory: else a later request, after the reload, would get a 304 for an answer whose matches were
   * older than its `Last-Modified`.
   */
  private async filtered(filter: GeoFilter, limit: number, offset: number, since: number | undefined): Promise<ReadPage | number> {
    const { registry, points } = this.deps;
    for (let caughtUp = false; ; caughtUp = true) {
      const listed = registry.exportListVersion;
      const matches = points.match(filter, offset + limit);
      const ids = matches.ids.slice(offset, offset + limit);
      const kms = matches.distancesKm?.slice(offset, offset + limit);
      let heads: StationHead[];
      let distancesKm: number[] | undefined;
      let version: number;
      let syncPosition: number;
      if (listed) {
        heads = [];
        distancesKm = kms && [];
        for (let i = 0; i < ids.length; i++) {
          const modifiedUs = registry.station(ids[i]!)?.modifiedUs;
          if (modifiedUs === undefined) continue;
          heads.push({ hrsId: ids[i]!, modifiedUs });
          distancesKm?.push(kms![i]!);
        }
        version = Math.max(listed.setModifiedUs, listed.newestUs);
        syncPosition = listed.changeLogHead;
      } else {
        syncPosition = await changeLogHead(this.deps.sql);
        const versions = await stationHeadsOf(this.deps.sql, ids);
        version = Math.max(versions.setModifiedUs, versions.newestUs);
        if (!caughtUp && version > registry.loadedVersionUs) {
          await registry.reload();
          continue;
        }
        const byId = new Map(versions.stations.map((head) => [head.hrsId, head]));
        // Stations removed since the index was built are left out.
        heads = [];
        distancesKm = kms && [];
        for (let i = 0; i < ids.length; i++) {
          const head = byId.get(ids[i]!);
          if (head === undefined) continue;
          heads.push(head);
          distancesKm?.push(kms![i]!);
        }
      }
      if (since !== undefined && notModifiedSince(version, since)) return version;
      const found = await this.records.aligned(heads);
      if (listed && !caughtUp && found.newestUs > version) {
        await registry.reload();
        continue;
      }
      return { distancesKm, heads, bodies: found.bodies, count: matches.count, newestUs: Math.max(version, found.newestUs), syncPosition };
    }
  }
}

/** The 304 of a list that answers by `Accept`. */
const withVary = (reply: Reply): Reply => ({ ...reply, headers: { ...reply.headers, Vary: VARY_ACCEPT } });

/**
 * The list's body: `open` (`{` or a FeatureCollection's start), `count`, `next`, `previous`, then
 * `items` under `name`. Records are kept encoded: the page is a copy of bytes, not a 500 kB string to
 * encode again.
 */
function listBody(open: string, links: { base: string; count: number; limit: number; offset: number; token: string }, name: string, items: readonly PageItem[]): Buffer {
  const { base, count, limit, offset, token } = links;
  const link = (at: number) => JSON.stringify(`${base}limit=${limit}&offset=${at}`);
  const next = offset + limit < count ? link(offset + limit) : 'null';
  const previous = offset > 0 ? link(Math.max(0, offset - limit)) : 'null';
  return assemble(`${open}"count":${count},"next":${next},"previous":${previous},"sync_token":"${token}","${name}":[`, items, ']}');
}


/* ---- Pagination ----------------------------------------------------------------------------------- */

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
