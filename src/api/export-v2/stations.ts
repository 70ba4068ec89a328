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
import { HttpError, JSON_TYPE, json, notFound, type Reply } from '../../http/errors.js';
import type { Request } from '../../http/request.js';
import type { HttpServer } from '../../http/server.js';
import type { Services } from '../../services.js';

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
export function stationRoutes(server: HttpServer, services: Services): void {
  const { sql, config } = services;
  const records = new StationRecords(sql, () => config.baseUrl);
  // Memory only: a removed station's record goes (correctness never depends on this, see above).
  services.registry.onReload((changed) => {
    for (const hrsId of changed) if (services.registry.station(hrsId) === undefined) records.forget(hrsId);
  });

  // The station count, for the station set's version it was counted at (the set moves with every
  // addition and removal): a page then needs no count over the whole table.
  let known = { setModifiedUs: -1, count: 0 };

  server.route({
    method: 'GET',
    path: '/v2/hrs',
    auth: 'export_v2',
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
      const base = `${config.baseUrl}/v2/hrs`;
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
    method: 'GET',
    path: '/v2/hrs/:hrs_id',
    auth: 'export_v2',
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
    method: 'GET',
    path: '/v2/hrs/:hrs_id/events',
    auth: 'export_v2',
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
    method: 'GET',
    path: '/v2/hrs/:hrs_id/photo',
    auth: 'export_v2',
    handler: async (req) => {
      const hrsId = req.params.hrs_id!;
      const photo = await stationPhoto(sql, hrsId);
      if (photo === undefined) throw unknownStation(hrsId);
      if (photo === null) throw notFound(`Station "${hrsId}" has no photo.`);
      // uWS writes Content-Length from the body (HEAD: from its byte length).
      return { status: 200, headers: { 'Content-Type': photo.mediaType, 'X-Content-Type-Options': 'nosniff' }, body: photo.bytes };
    },
  });
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

/** An HTTP-date (IMF-fixdate) for whole seconds since the epoch. */
export function httpDate(seconds: number): string {
  return new Date(seconds * 1000).toUTCString();
}

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

/**
 * The request's `If-Modified-Since` in seconds since the epoch, or undefined when it is to be ignored
 * (RFC 9110 13.1.3): absent, not one valid HTTP-date, beside an `If-None-Match`, or later than the
 * server's current time (a date from the future would keep answering 304 past later changes).
 */
export function ifModifiedSince(req: Pick<Request, 'headers'>, nowMs = Date.now()): number | undefined {
  const value = req.headers['if-modified-since'];
  if (value === undefined || req.headers['if-none-match'] !== undefined) return undefined;
  const seconds = parseHttpDate(value);
  if (seconds === undefined || seconds > Math.floor(nowMs / 1000)) return undefined;
  return seconds;
}

const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];
const MONTH = MONTHS.join('|');
const IMF_FIXDATE = new RegExp(`^(?:Mon|Tue|Wed|Thu|Fri|Sat|Sun), (\\d\\d) (${MONTH}) (\\d{4}) (\\d\\d):(\\d\\d):(\\d\\d) GMT$`);
const RFC850_DATE = new RegExp(
  `^(?:Monday|Tuesday|Wednesday|Thursday|Friday|Saturday|Sunday), (\\d\\d)-(${MONTH})-(\\d\\d) (\\d\\d):(\\d\\d):(\\d\\d) GMT$`,
);
const ASCTIME_DATE = new RegExp(`^(?:Mon|Tue|Wed|Thu|Fri|Sat|Sun) (${MONTH}) ([ \\d]\\d) (\\d\\d):(\\d\\d):(\\d\\d) (\\d{4})$`);

/**
 * An HTTP-date (RFC 9110 5.6.7: IMF-fixdate, or the obsolete RFC 850 and asctime forms; case-sensitive)
 * in seconds since the epoch; undefined for anything else, impossible dates (30 Feb) included.
 */
export function parseHttpDate(text: string, nowMs = Date.now()): number | undefined {
  const value = text.trim();
  let parts: { day: string; month: string; year: number; time: [string, string, string] };
  let m: RegExpExecArray | null;
  if ((m = IMF_FIXDATE.exec(value))) {
    parts = { day: m[1]!, month: m[2]!, year: Number(m[3]), time: [m[4]!, m[5]!, m[6]!] };
  } else if ((m = RFC850_DATE.exec(value))) {
    // A two-digit year more than 50 years ahead is the most recent past year with those digits.
    const thisYear = new Date(nowMs).getUTCFullYear();
    let year = Math.floor(thisYear / 100) * 100 + Number(m[3]);
    if (year > thisYear + 50) year -= 100;
    parts = { day: m[1]!, month: m[2]!, year, time: [m[4]!, m[5]!, m[6]!] };
  } else if ((m = ASCTIME_DATE.exec(value))) {
    parts = { day: m[2]!, month: m[1]!, year: Number(m[6]), time: [m[3]!, m[4]!, m[5]!] };
  } else {
    return undefined;
  }
  const month = MONTHS.indexOf(parts.month);
  const day = Number(parts.day.trim());
  const [hour, minute, second] = parts.time.map(Number) as [number, number, number];
  if (hour > 23 || minute > 59 || second > 60) return undefined;
  // A leap second (60) counts as the second before it.
  const ms = Date.UTC(parts.year, month, day, hour, minute, Math.min(second, 59));
  const date = new Date(ms);
  if (date.getUTCFullYear() !== parts.year || date.getUTCMonth() !== month || date.getUTCDate() !== day) return undefined;
  return ms / 1000;
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
