import {
  currentEvents,
  stationHead,
  stationPageHeads,
  stationPageVersion,
  stationPhoto,
  stationRows,
  type StationHead,
  type StationRow,
} from '../../../db/queries/stations.js';
import type { Sql } from '../../../db/connect.js';
import type { StationLookup } from '../../domain/stations.js';
import { httpDate, ifModifiedSince } from '../../http/dates.js';
import { HttpError, JSON_TYPE, json, notFound, type Reply } from '../../http/errors.js';
import type { Family } from '../../http/family.js';
import type { HttpServer } from '../../http/server.js';

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

  // The station count, for the station set's version it was counted at (the set moves with every
  // addition and removal): a page then needs no count over the whole table.
  let known = { setModifiedUs: -1, count: 0 };

  server.route({
    family,
    method: 'GET',
    path: '/v2/hrs',
    handler: async (req) => {
      const { limit, offset } = pageParameters(req.query);
      const since = ifModifiedSince(req);
      if (since !== undefined) {
        // Revalidation: the page's version alone, without reading the page.
        const version = await stationPageVersion(sql, limit, offset);
        const newest = Math.max(version.setModifiedUs, version.newestUs ?? 0);
        if (notModifiedSince(newest, since)) return notModified(newest);
      }
      const counted = known;
      const page = await stationPageHeads(sql, limit, offset, counted);
      const count = page.count ?? counted.count;
      if (page.count !== null) known = { setModifiedUs: page.setModifiedUs, count: page.count };
      const found = await records.get(page.stations);
      const newest = Math.max(page.setModifiedUs, found.newestUs, ...page.stations.map((s) => s.modifiedUs));
      const base = `${deps.baseUrl()}/v2/hrs`;
      const link = (at: number) => JSON.stringify(`${base}?limit=${limit}&offset=${at}`);
      const next = offset + limit < count ? link(offset + limit) : 'null';
      const previous = offset > 0 ? link(Math.max(0, offset - limit)) : 'null';
      // Records are kept encoded: the page is a copy of bytes, not a 500 kB string to encode again.
      const parts: Buffer[] = [Buffer.from(`{"count":${count},"next":${next},"previous":${previous},"results":[`)];
      found.bodies.forEach((record, index) => {
        if (index > 0) parts.push(COMMA);
        parts.push(record);
      });
      parts.push(CLOSE);
      return { status: 200, headers: conditionalHeaders(newest), body: Buffer.concat(parts) };
    },
  });

  server.route({
    family,
    method: 'GET',
    path: '/v2/hrs/:hrs_id',
    handler: async (req) => {
      const hrsId = req.params.hrs_id!;
      const since = ifModifiedSince(req);
      const head = await stationHead(sql, hrsId);
      if (!head) throw unknownStation(hrsId);
      if (since !== undefined && notModifiedSince(head.modifiedUs, since)) return notModified(head.modifiedUs);
      const found = await records.get([head]);
      // Removed between the two reads.
      if (found.bodies.length === 0) throw unknownStation(hrsId);
      return { status: 200, headers: conditionalHeaders(found.newestUs), body: found.bodies[0] };
    },
  });

  server.route({
    family,
    method: 'GET',
    path: '/v2/hrs/:hrs_id/events',
    handler: async (req) => {
      const hrsId = req.params.hrs_id!;
      const events = await currentEvents(sql, hrsId, new Date());
      if (!events) throw unknownStation(hrsId);
      return json(
        200,
        events.map((e) => ({
          id: e.id,
          kind: e.kind,
          starts_at: e.starts_at.toISOString(),
          ends_at: e.ends_at?.toISOString() ?? null,
          description: e.description,
        })),
      );
    },
  });

  server.route({
    family,
    method: 'GET',
    path: '/v2/hrs/:hrs_id/photo',
    handler: async (req) => {
      const hrsId = req.params.hrs_id!;
      const photo = await stationPhoto(sql, hrsId);
      if (photo === undefined) throw unknownStation(hrsId);
      if (photo === null) throw notFound(`Station "${hrsId}" has no photo.`);
      // uWS writes Content-Length from the body (HEAD: from its byte length).
      return { status: 200, headers: { 'Content-Type': photo.mediaType, 'X-Content-Type-Options': 'nosniff' }, body: photo.bytes };
    },
  });
  return {
    // Memory only: a removed station's record goes (correctness never depends on this, see above).
    stationsChanged(changed, stations) {
      for (const hrsId of changed) if (stations.station(hrsId) === undefined) records.forget(hrsId);
    },
  };
}


const COMMA = Buffer.from(',');
const CLOSE = Buffer.from(']}');

const unknownStation = (hrsId: string) => notFound(`No station with hrs_id "${hrsId}".`);

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

/* ---- Conditional requests ------------------------------------------------------------------------- */

const secondsOf = (us: number) => Math.floor(us / 1_000_000);

function conditionalHeaders(modifiedUs: number): Record<string, string> {
  // no-cache: a browser revalidates every time rather than guessing a freshness from Last-Modified.
  return { 'Content-Type': JSON_TYPE, 'Last-Modified': httpDate(secondsOf(modifiedUs)), 'Cache-Control': 'no-cache' };
}

function notModified(modifiedUs: number): Reply {
  return { status: 304, headers: { 'Last-Modified': httpDate(secondsOf(modifiedUs)), 'Cache-Control': 'no-cache' } };
}

/** HTTP-dates have whole seconds: unchanged when the newest change lies within the given second or before. */
function notModifiedSince(modifiedUs: number, sinceSeconds: number): boolean {
  return secondsOf(modifiedUs) <= sinceSeconds;
}

/* ---- Station records ------------------------------------------------------------------------------ */

/** Names of the record's own fields; a `details` key of the same name is left out (the registry's value wins). */
export const RECORD_FIELDS: ReadonlySet<string> = new Set([
  'hrs_id',
  'name',
  'operator',
  'heavy_duty',
  'opening_hours',
  'photo_url',
  'dispensers',
  'storages',
  'products',
]);

/**
 * The export v2 station record: `hrs_id`, `name`, `operator` {`id`, `name`}, `heavy_duty`,
 * `opening_hours`, the v1.1 static (AFIR) details spread at the top level as given, `photo_url`, and
 * the layout sections `dispensers`, `storages`, `products` (null until a layout is confirmed).
 */
export function stationRecord(row: StationRow, baseUrl: string): Record<string, unknown> {
  const record: Record<string, unknown> = {
    hrs_id: row.hrs_id,
    name: row.name,
    operator: { id: row.operator_id, name: row.operator_name },
    heavy_duty: row.heavy_duty,
    opening_hours: row.opening_hours,
  };
  for (const [key, value] of Object.entries(row.details)) {
    if (RECORD_FIELDS.has(key)) continue;
    // defineProperty: a key such as "__proto__" stays a plain field.
    Object.defineProperty(record, key, { value, enumerable: true, writable: true, configurable: true });
  }
  record.photo_url = row.has_photo ? `${baseUrl}/v2/hrs/${row.hrs_id}/photo` : null;
  record.dispensers = row.dispensers;
  record.storages = row.storages;
  record.products = row.products;
  return record;
}

/** At most this many serialised records are kept (about 1 kB each); the oldest entries go first. */
const MAX_CACHED_RECORDS = 50_000;

/** Serialised (UTF-8 encoded) station records, each under the version (`static_modified_at`) it was made from. */
export class StationRecords {
  private readonly cache = new Map<string, { modifiedUs: number; body: Buffer }>();
  private baseUrl: string | undefined;

  constructor(
    private readonly sql: Sql,
    private readonly currentBaseUrl: () => string,
  ) {}

  forget(hrsId: string): void {
    this.cache.delete(hrsId);
  }

  get size(): number {
    return this.cache.size;
  }

  /**
   * The records of these stations at (at least) these versions, in the given order, with the newest
   * version among them; stations removed meanwhile are left out. One statement for all the misses.
   */
  async get(heads: readonly StationHead[]): Promise<{ bodies: Buffer[]; newestUs: number }> {
    const baseUrl = this.currentBaseUrl();
    if (baseUrl !== this.baseUrl) {
      // Records embed absolute links; the base is fixed once the server listens.
      this.cache.clear();
      this.baseUrl = baseUrl;
    }
    const bodies: (Buffer | undefined)[] = new Array(heads.length);
    let newestUs = 0;
    const missing: string[] = [];
    const at = new Map<string, number>();
    heads.forEach((head, index) => {
      const cached = this.cache.get(head.hrsId);
      if (cached && cached.modifiedUs === head.modifiedUs) {
        bodies[index] = cached.body;
        newestUs = Math.max(newestUs, cached.modifiedUs);
      } else {
        missing.push(head.hrsId);
        at.set(head.hrsId, index);
      }
    });
    if (missing.length > 0) {
      for (const row of await stationRows(this.sql, missing)) {
        const body = Buffer.from(JSON.stringify(stationRecord(row, baseUrl)));
        bodies[at.get(row.hrs_id)!] = body;
        newestUs = Math.max(newestUs, row.modifiedUs);
        this.remember(row.hrs_id, row.modifiedUs, body);
      }
    }
    return { bodies: bodies.filter((body): body is Buffer => body !== undefined), newestUs };
  }

  private remember(hrsId: string, modifiedUs: number, body: Buffer): void {
    const held = this.cache.get(hrsId);
    // A slower request that read an older version must not replace a newer one.
    if (held && held.modifiedUs > modifiedUs) return;
    this.cache.delete(hrsId);
    this.cache.set(hrsId, { modifiedUs, body });
    if (this.cache.size > MAX_CACHED_RECORDS) this.cache.delete(this.cache.keys().next().value!);
  }
}
