/**
 * Geo queries of export v2 (`bbox`, `near` with `radius_km`): reading the parameters, the great-circle
 * distance, and which stations a box holds. Pure: the spatial index that answers them fast is
 * ./geo-index.ts, the HTTP side src/api/export-v2/geo.ts.
 *
 * Coordinates are WGS 84 degrees. A box is `minLon,minLat,maxLon,maxLat` (RFC 7946 §5's order); a
 * point to search around is `lat,lon` (the order people write them in, and the one `near` is named for).
 * Numbers are plain decimals (`-12.5`, `13`, `0.25`): no exponent, no `+`, no spaces, no `NaN`, so a
 * typo is a 400 rather than a number nobody meant.
 */

/** The mean Earth radius (IUGG), in kilometres: what every distance here is measured with. */
export const EARTH_RADIUS_KM = 6371.0088;

/** The largest `radius_km` taken: a near query covers a region, not a continent. */
export const MAX_RADIUS_KM = 1000;

/** A point, WGS 84 degrees. */
export interface GeoPoint {
  lat: number;
  lon: number;
}

/**
 * A box as given: `minLon > maxLon` is a box across the antimeridian (RFC 7946 §5.2: from minLon
 * eastwards over ±180 to maxLon), never an inverted box; `minLat > maxLat` is refused.
 */
export interface GeoBox {
  minLon: number;
  minLat: number;
  maxLon: number;
  maxLat: number;
}

/** `near` without `radiusKm`: every station with coordinates, nearest first (a list's `limit` bounds it). */
export type GeoFilter = ({ kind: 'bbox' } & GeoBox) | { kind: 'near'; lat: number; lon: number; radiusKm?: number };

/** The query values of the geo parameters, each as often as given. */
export interface GeoQueryValues {
  bbox: readonly string[];
  near: readonly string[];
  radius_km: readonly string[];
}

/** The filter the parameters ask for (undefined: none), or why they are refused (the 400's detail). */
export type GeoQueryResult = { filter: GeoFilter | undefined } | { error: string };

/** A plain decimal number; long enough for any coordinate anyone writes, short enough to read at once. */
const DECIMAL = /^-?\d{1,20}(\.\d{1,20})?$/;

/**
 * Reads `bbox`, `near` and `radius_km`. At most one filter: `bbox` with `near` is refused (a box and a
 * circle at once say two different things), as is `radius_km` without `near` (a radius around nothing).
 * `near` without `radius_km` orders every station with coordinates by distance: the lists bound it with
 * their `limit` (the nearest N). Each at most once.
 */
export function parseGeoQuery(values: GeoQueryValues): GeoQueryResult {
  for (const name of ['bbox', 'near', 'radius_km'] as const) {
    if (values[name].length > 1) return { error: `${name}: give it once (got ${values[name].length} values).` };
  }
  const [bbox] = values.bbox;
  const [near] = values.near;
  const [radius] = values.radius_km;
  if (bbox !== undefined && near !== undefined) return { error: 'bbox, near: give one of them, not both.' };
  if (bbox !== undefined) {
    if (radius !== undefined) return { error: 'radius_km: only with near (a bbox has no radius).' };
    return parseBox(bbox);
  }
  if (near === undefined) {
    return radius === undefined ? { filter: undefined } : { error: 'radius_km: only with near=lat,lon.' };
  }
  const point = numbers(near, 2);
  if (point === undefined) return { error: 'near: must be lat,lon, two decimal numbers (e.g. near=52.52,13.405).' };
  const [lat, lon] = point as [number, number];
  const range = outOfRange('near', lat, lon);
  if (range) return { error: range };
  if (radius === undefined) return { filter: { kind: 'near', lat, lon } };
  const radiusKm = DECIMAL.test(radius) ? Number(radius) : Number.NaN;
  if (!(radiusKm > 0 && radiusKm <= MAX_RADIUS_KM)) {
    return { error: `radius_km: must be a decimal number of kilometres, more than 0 and at most ${MAX_RADIUS_KM}.` };
  }
  return { filter: { kind: 'near', lat, lon, radiusKm } };
}

function parseBox(text: string): GeoQueryResult {
  const box = numbers(text, 4);
  if (box === undefined) return { error: 'bbox: must be minLon,minLat,maxLon,maxLat, four decimal numbers (e.g. bbox=5.9,47.3,15.0,55.1).' };
  const [minLon, minLat, maxLon, maxLat] = box as [number, number, number, number];
  const range = outOfRange('bbox', minLat, minLon) ?? outOfRange('bbox', maxLat, maxLon);
  if (range) return { error: range };
  if (minLat > maxLat) return { error: `bbox: inverted box: minLat (${minLat}) is north of maxLat (${maxLat}).` };
  return { filter: { kind: 'bbox', minLon, minLat, maxLon, maxLat } };
}

/** `count` comma-separated plain decimals, else undefined. */
function numbers(text: string, count: number): number[] | undefined {
  const parts = text.split(',');
  if (parts.length !== count || !parts.every((part) => DECIMAL.test(part))) return undefined;
  return parts.map(Number);
}

function outOfRange(name: string, lat: number, lon: number): string | undefined {
  if (Math.abs(lat) > 90) return `${name}: latitude ${lat} is out of range (from -90 to 90).`;
  if (Math.abs(lon) > 180) return `${name}: longitude ${lon} is out of range (from -180 to 180).`;
  return undefined;
}

/* ---- Distances and boxes ----------------------------------------------------------------------------- */

const RAD = Math.PI / 180;

/** The great-circle distance in kilometres (haversine, on the mean Earth radius). */
export function haversineKm(a: GeoPoint, b: GeoPoint): number {
  return haversineKmCos(a.lat, a.lon, cosLat(a.lat), b.lat, b.lon, cosLat(b.lat));
}

/** A latitude's cosine, as haversineKmCos takes it (kept per point by what measures many distances). */
export const cosLat = (lat: number): number => Math.cos(lat * RAD);

/**
 * haversineKm with both latitudes' cosines given (cosLat): the same operations, so the same result to
 * the last bit, for an index that keeps its points' cosines.
 */
export function haversineKmCos(aLat: number, aLon: number, aCos: number, bLat: number, bLon: number, bCos: number): number {
  const dLat = (bLat - aLat) * RAD;
  const dLon = (bLon - aLon) * RAD;
  const h = Math.sin(dLat / 2) ** 2 + aCos * bCos * Math.sin(dLon / 2) ** 2;
  return 2 * EARTH_RADIUS_KM * Math.asin(Math.min(1, Math.sqrt(h)));
}

/** A distance as answers give it (`distance_km`): kilometres to the metre, 3 decimals. */
export const roundKm = (km: number): number => Math.round(km * 1000) / 1000;

/**
 * A distance as roundKm gives it, written as JSON writes that number (`String(km)`: `12.34`, `7`,
 * `0.005`), from its whole metres: integers, which V8 writes from a cache, where writing an arbitrary
 * double costs a shortest-digits search (three times as long, a quarter of a `near` page's CPU).
 */
export function kmText(km: number): string {
  const metres = Math.round(km * 1000);
  const whole = Math.floor(metres / 1000);
  const frac = metres - whole * 1000;
  if (frac === 0) return `${whole}`;
  if (frac % 100 === 0) return `${whole}.${frac / 100}`;
  if (frac % 10 === 0) return `${whole}.${frac < 100 ? '0' : ''}${frac / 10}`;
  return `${whole}.${frac < 10 ? '00' : frac < 100 ? '0' : ''}${frac}`;
}

/**
 * kmText's characters (all ASCII) written as bytes into `out` at `at`, with no string made; returns how
 * many. `out` must have room: kmTextLength says how much. For a page that copies records behind their
 * distances (src/api/export-v2/geo.ts `assemble`), where a string per distance, its length asked of
 * the encoder and its write were most of the page's own work.
 */
export function writeKmText(out: Uint8Array, at: number, km: number): number {
  const metres = Math.round(km * 1000);
  if (!(metres >= 0 && metres <= MAX_WRITTEN_METRES)) return asciiInto(out, at, kmText(km));
  const whole = Math.floor(metres / 1000);
  const { frac, decimals } = decimalsOf(metres - whole * 1000);
  const point = at + digitCount(whole);
  writeDigits(out, at, point, whole);
  if (decimals === 0) return point - at;
  out[point] = POINT_BYTE;
  writeDigits(out, point + 1, point + 1 + decimals, frac);
  return point + 1 + decimals - at;
}

/** How many bytes kmText(km) has (what writeKmText writes). */
export function kmTextLength(km: number): number {
  const metres = Math.round(km * 1000);
  if (!(metres >= 0 && metres <= MAX_WRITTEN_METRES)) return kmText(km).length;
  const whole = Math.floor(metres / 1000);
  const { decimals } = decimalsOf(metres - whole * 1000);
  return digitCount(whole) + (decimals === 0 ? 0 : 1 + decimals);
}

/** Three decimals of whole metres with their trailing zeros left off (kmText's 12.3, 12.34, 12.305, 12). */
function decimalsOf(metres: number): { frac: number; decimals: number } {
  let frac = metres;
  let decimals = frac === 0 ? 0 : 3;
  while (decimals > 0 && frac % 10 === 0) {
    frac /= 10;
    decimals--;
  }
  return { frac, decimals };
}

/** `value`'s digits into out[from, to), right-aligned, zeros before them (0.005's fraction: 005). */
function writeDigits(out: Uint8Array, from: number, to: number, value: number): void {
  for (let i = to - 1, v = value; i >= from; i--, v = Math.floor(v / 10)) out[i] = ZERO_BYTE + (v % 10);
}

/** Beyond this (no distance on Earth comes near it) writeKmText writes kmText's string. */
const MAX_WRITTEN_METRES = 2 ** 31 - 1;
const ZERO_BYTE = 0x30;
const POINT_BYTE = 0x2e;

const digitCount = (n: number): number => (n < 10 ? 1 : n < 100 ? 2 : n < 1000 ? 3 : n < 10_000 ? 4 : n < 100_000 ? 5 : String(n).length);

/** An ASCII string's characters as bytes (kmText writes only digits, a point, a minus and letters). */
function asciiInto(out: Uint8Array, at: number, text: string): number {
  for (let i = 0; i < text.length; i++) out[at + i] = text.charCodeAt(i);
  return text.length;
}

/**
 * The longitude ranges a box covers, each `[west, east]` with west ≤ east: one, or two for a box
 * across the antimeridian (`[minLon, 180]` and `[-180, maxLon]`).
 */
export function lonRanges(box: GeoBox): [number, number][] {
  return box.minLon <= box.maxLon ? [[box.minLon, box.maxLon]] : [[box.minLon, 180], [-180, box.maxLon]];
}

/**
 * Whether a box holds a point, edges included. Longitudes 180 and -180 are one meridian: a point on it
 * is in a box that reaches it from either side.
 */
export function boxHolds(box: GeoBox, point: GeoPoint): boolean {
  if (point.lat < box.minLat || point.lat > box.maxLat) return false;
  const lons = Math.abs(point.lon) === 180 ? [180, -180] : [point.lon];
  return lonRanges(box).some(([west, east]) => lons.some((lon) => lon >= west && lon <= east));
}
