import { buildGeoIndex, type GeoIndex, type IndexedPoint, type NearHit } from '../../domain/geo-index.js';
import { kmTextLength, parseGeoQuery, writeKmText, type GeoFilter, type GeoPoint } from '../../domain/geo.js';
import type { StationDirectory } from '../../domain/stations.js';
import { MAX_LIMIT } from '../../domain/export-v2/stations.js';
import { prefersMedia } from '../../http/accept.js';
import { answerBodies } from '../../http/body-pool.js';
import { HttpError } from '../../http/errors.js';
import type { Request } from '../../http/request.js';

/**
 * The geo queries of export v2, an extension beyond the specification: `bbox` or `near` with
 * `radius_km` on `GET /v2/hrs` and `GET /v2/hrs/status` (../../domain/geo.ts reads them), answered
 * from a spatial index in memory (../../domain/geo-index.ts) over the production stations whose
 * registry entry has coordinates, and GeoJSON (RFC 7946) on `Accept: application/geo+json`.
 */

/** The geo parameters both lists take, beside their own. */
export const GEO_PARAMETERS = ['bbox', 'near', 'radius_km'] as const;

/** GeoJSON's media type (RFC 7946 §12), as sent. */
export const GEOJSON_TYPE = 'application/geo+json';

/** Both lists answer by `Accept`, so every answer of theirs says so to caches. */
export const VARY_ACCEPT = 'Accept';

/** The stations a filter finds: ids in answer order and, for `near`, each one's distance. */
export interface GeoMatches {
  /** In answer order; for `near` without a radius only the nearest asked for. */
  ids: string[];
  /** How many the filter finds in all (for `near` without a radius: every station with coordinates). */
  count: number;
  /** Each id's distance (at its index), kilometres to 3 decimals; only for `near`. */
  distancesKm?: number[];
}

/**
 * The spatial index of the production stations with coordinates, over the registry as last given (at
 * start and after every reload: a reload replaces the registry whole; coordinates may have moved).
 * Built by the first geo query after it was given, not when given: the start does not wait for it
 * (100,000 stations take about 0.2 s, which blocked every request just the same when it was built at
 * once), an instance no geo query reaches never builds it, and reloads that come faster than geo
 * queries build it once.
 */
export class StationPoints {
  private built: GeoIndex | undefined;
  private builds = 0;

  constructor(private stations: StationDirectory) {}

  rebuild(stations: StationDirectory): void {
    this.stations = stations;
    this.built = undefined;
    this.builds++;
  }

  /** Moves with every rebuild (what is made of the index can be kept until it moves). */
  get version(): number {
    return this.builds;
  }

  private get index(): GeoIndex {
    return (this.built ??= StationPoints.indexOf(this.stations));
  }

  private static indexOf(stations: StationDirectory): GeoIndex {
    const points: IndexedPoint[] = [];
    for (const id of stations.stationIds()) {
      const entry = stations.station(id);
      // The export v1.1 sandbox's sample stations are not export v2's.
      if (!entry?.point || entry.sandbox === true) continue;
      points.push({ id, lat: entry.point.lat, lon: entry.point.lon });
    }
    return buildGeoIndex(points);
  }

  /** Where an indexed station stands; undefined for one without coordinates (or not exported). */
  pointOf(hrsId: string): GeoPoint | undefined {
    return this.index.pointOf(hrsId);
  }

  /** Every indexed station, by hrs_id. */
  ids(): string[] {
    return this.index.within({ minLon: -180, minLat: -90, maxLon: 180, maxLat: 90 });
  }

  /**
   * The stations the filter finds, in answer order. `want` bounds a `near` (the nearest that many, within
   * its radius if it has one); the other filters, and `near` with a radius, find all (their `count`).
   */
  match(filter: GeoFilter, want = Number.POSITIVE_INFINITY): GeoMatches {
    if (filter.kind === 'bbox') {
      const ids = this.index.within(filter);
      return { ids, count: ids.length };
    }
    const center = { lat: filter.lat, lon: filter.lon };
    let hits: NearHit[];
    let count: number;
    if (filter.radiusKm === undefined) {
      hits = this.index.nearest(center, Math.min(want, this.index.size));
      count = this.index.size;
    } else {
      ({ hits, count } = this.index.nearCounted(center, filter.radiusKm, want));
    }
    const ids: string[] = new Array(hits.length);
    const distancesKm: number[] = new Array(hits.length);
    for (let i = 0; i < hits.length; i++) {
      ids[i] = hits[i]!.id;
      distancesKm[i] = hits[i]!.distanceKm;
    }
    return { ids, count, distancesKm };
  }

  /** How many stations the index holds (those with coordinates that export v2 shows). */
  get size(): number {
    return this.index.size;
  }
}

/** The request's geo filter (undefined: none); a bad one is a 400 `invalid_parameter`. */
export function geoFilterOf(req: Request): GeoFilter | undefined {
  const result = parseGeoQuery({ bbox: req.query.getAll('bbox'), near: req.query.getAll('near'), radius_km: req.query.getAll('radius_km') });
  if ('error' in result) throw new HttpError(400, 'invalid_parameter', result.error);
  return result.filter;
}

/** The status list's `limit` (only with `near`: the nearest that many); undefined when not given. A bad one is a 400. */
export function nearLimitOf(req: Request, filter: GeoFilter | undefined): number | undefined {
  const values = req.query.getAll('limit');
  if (values.length === 0) return undefined;
  if (values.length > 1) throw new HttpError(400, 'invalid_parameter', `limit: give it once (got ${values.length} values).`);
  if (filter?.kind !== 'near') throw new HttpError(400, 'invalid_parameter', 'limit: only with near=lat,lon (the nearest N; the status list has no pages).');
  const text = values[0]!;
  const limit = /^\d{1,15}$/.test(text) ? Number(text) : Number.NaN;
  if (!(limit >= 1 && limit <= MAX_LIMIT)) throw new HttpError(400, 'invalid_parameter', `limit: must be a whole number from 1 to ${MAX_LIMIT}.`);
  return limit;
}

/**
 * The request's geo parameters as a query string's start, for links that keep them (`bbox=…&`,
 * `near=…&radius_km=…&`, or nothing): as given, once the filter was read from them (so only digits,
 * `-`, `.` and `,`, nothing to escape).
 */
export function filterQuery(req: Request, filter: GeoFilter | undefined): string {
  if (!filter) return '';
  const names = filter.kind === 'bbox' ? ['bbox'] : filter.radiusKm === undefined ? ['near'] : ['near', 'radius_km'];
  return names.map((name) => `${name}=${req.query.get(name)}&`).join('');
}

/** Whether the client asked for GeoJSON: `application/geo+json` weighs more than `application/json`. */
export const wantsGeoJson = (req: Request): boolean => prefersMedia(req.headers.accept, GEOJSON_TYPE, 'application/json');

/**
 * One item of a list page: a kept record's bytes, with what goes before and after it. With a distance
 * (`near`) the record's object opens with it (`{"distance_km":1.234`): the record's own `{` becomes the
 * `,` after it, so the record is copied whole, never sliced.
 */
export interface PageItem {
  before: string;
  /** Kilometres (rounded to the metre as kmText writes them), first in the record; none without `near`. */
  distanceKm: number | undefined;
  record: Buffer;
  after: string;
}

/** The item of a record, with its distance first when it has one (`near`). */
export function pageItem(record: Buffer, distanceKm: number | undefined): PageItem {
  return { before: '', distanceKm, record, after: '' };
}

/** The item as a GeoJSON Feature (its point as `[lon, lat]`, RFC 7946 §3.1.1) whose properties are the record. */
export function featureItem(hrsId: string, point: GeoPoint, item: PageItem): PageItem {
  return { ...item, before: featureStart(hrsId, point) + item.before, after: `${item.after}}` };
}

/**
 * `head`, the items separated by commas, then `tail`, in one buffer of the exact size: one copy of
 * each record, nothing else copied twice. The distances are written as bytes (writeKmText), and the
 * short texts around records byte by byte while they are ASCII: a string per distance, and the
 * encoder asked for each text's length and then to write it, were half of a 100-record page's cost.
 */
export function assemble(head: string, items: readonly PageItem[], tail: string): Buffer {
  let length = Buffer.byteLength(head) + Buffer.byteLength(tail) + Math.max(0, items.length - 1);
  for (let k = 0; k < items.length; k++) {
    const item = items[k]!;
    length += textLength(item.before) + item.record.length + textLength(item.after);
    // The record's `{` becomes the comma after the distance.
    if (item.distanceKm !== undefined) length += DISTANCE_OPEN.length + kmTextLength(item.distanceKm);
  }
  // From the HTTP core's pool: given back once written (../../http/body-pool.ts).
  const out = answerBodies.take(length);
  let at = out.write(head, 0);
  for (let k = 0; k < items.length; k++) {
    const item = items[k]!;
    if (k > 0) out[at++] = COMMA_BYTE;
    at += writeText(out, item.before, at);
    if (item.distanceKm !== undefined) {
      out.set(DISTANCE_OPEN, at);
      at += DISTANCE_OPEN.length;
      at += writeKmText(out, at, item.distanceKm);
      out.set(item.record, at);
      out[at] = COMMA_BYTE;
    } else {
      out.set(item.record, at);
    }
    at += item.record.length;
    at += writeText(out, item.after, at);
  }
  at += out.write(tail, at);
  if (at !== length) throw new Error(`a list page of ${length} bytes was written as ${at}`);
  return out;
}

/** What opens a record with its distance, before the distance's digits. */
const DISTANCE_OPEN = Buffer.from('{"distance_km":');

/** Texts up to this long are measured and written here, byte by byte, while they are ASCII. */
const SHORT_TEXT = 256;

/** A text's UTF-8 length: its length when it is short and ASCII, else the encoder's count. */
function textLength(text: string): number {
  const n = text.length;
  if (n === 0) return 0;
  if (n > SHORT_TEXT) return Buffer.byteLength(text);
  for (let i = 0; i < n; i++) if (text.charCodeAt(i) >= 0x80) return Buffer.byteLength(text);
  return n;
}

/** Writes a text as UTF-8 at `at`; returns its bytes. A short ASCII one byte by byte, else by the encoder. */
function writeText(out: Buffer, text: string, at: number): number {
  const n = text.length;
  if (n === 0) return 0;
  if (n <= SHORT_TEXT) {
    let i = 0;
    for (; i < n; i++) {
      const c = text.charCodeAt(i);
      if (c >= 0x80) break;
      out[at + i] = c;
    }
    if (i === n) return n;
  }
  // Not ASCII (or long): the encoder writes it whole, over whatever was written above.
  return out.write(text, at);
}

const COMMA_BYTE = 0x2c;

/** A GeoJSON Feature (its point as `[lon, lat]`, RFC 7946 §3.1.1) whose properties are the object given as JSON. */
export function featureJson(hrsId: string, point: GeoPoint, properties: string): string {
  return `${featureStart(hrsId, point)}${properties}}`;
}

const featureStart = (hrsId: string, point: GeoPoint) =>
  `{"type":"Feature","id":${JSON.stringify(hrsId)},"geometry":{"type":"Point","coordinates":[${point.lon},${point.lat}]},"properties":`;

