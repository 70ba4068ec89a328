import KDBush from 'kdbush';
import { around } from 'geokdbush';
import { EARTH_RADIUS_KM, haversineKm, lonRanges, roundKm, type GeoBox, type GeoPoint } from './geo.js';

/**
 * A spatial index of station points in memory, for the geo queries of export v2 (./geo.ts): a static
 * k-d tree (kdbush) over longitude and latitude, searched by `range` for a box and by geokdbush's
 * `around` (great-circle, nearest first, correct across the antimeridian and near the poles) for a
 * circle. Built once from every point (milliseconds for ten thousand), never updated: the registry is
 * replaced whole on each reload, and so is the index. Answers never scan all points.
 */

/** A point of the index: the station's hrs_id and where it stands. */
export interface IndexedPoint extends GeoPoint {
  id: string;
}

/** A station a near query finds, with its distance in kilometres (3 decimals, as answers give it). */
export interface NearHit {
  id: string;
  distanceKm: number;
}

/** geokdbush measures on a 6371 km sphere; ours is the mean radius: its radii are scaled to ours. */
const GEOKDBUSH_RADIUS_KM = 6371;

/** Points per leaf: small leaves suit queries that find few points among many. */
const NODE_SIZE = 16;

export class GeoIndex {
  private readonly tree: KDBush;
  /** By position in the tree (positions follow hrs_id order, so sorting positions sorts by hrs_id). */
  private readonly ids: string[];
  private readonly points: GeoPoint[];
  private readonly positions: Map<string, number>;

  private constructor(points: readonly IndexedPoint[]) {
    const sorted = [...points].sort((a, b) => compareIds(a.id, b.id));
    this.ids = sorted.map((p) => p.id);
    this.points = sorted.map((p) => ({ lat: p.lat, lon: p.lon }));
    this.positions = new Map(this.ids.map((id, at) => [id, at]));
    this.tree = new KDBush(sorted.length, NODE_SIZE, Float64Array);
    // 180 and -180 are one meridian: kept as -180, so each point sits at one place of the tree.
    for (const p of sorted) this.tree.add(p.lon === 180 ? -180 : p.lon, p.lat);
    this.tree.finish();
  }

  /** The index over these points (each id once; their order does not matter). */
  static build(points: readonly IndexedPoint[]): GeoIndex {
    return new GeoIndex(points);
  }

  /** How many points it holds. */
  get size(): number {
    return this.ids.length;
  }

  /** The point of an indexed id (undefined when not indexed). */
  pointOf(id: string): GeoPoint | undefined {
    const at = this.positions.get(id);
    return at === undefined ? undefined : this.points[at];
  }

  /**
   * The ids of the points in a box (edges included; see ./geo.ts `boxHolds`), sorted by hrs_id. A box
   * across the antimeridian (minLon > maxLon) is searched as its two halves.
   */
  within(box: GeoBox): string[] {
    const found = new Set<number>();
    const ranges = lonRanges(box);
    // Points on the antimeridian are kept at -180: a box reaching 180 from the west holds them too.
    if (ranges.some(([, east]) => east === 180) && !ranges.some(([west]) => west === -180)) ranges.push([-180, -180]);
    for (const [west, east] of ranges) for (const at of this.tree.range(west, box.minLat, east, box.maxLat)) found.add(at);
    return [...found].sort((a, b) => a - b).map((at) => this.ids[at]!);
  }

  /**
   * The points within `radiusKm` of a point (great circle, edge included), nearest first; equal
   * distances (to the metre, as answered) by hrs_id.
   */
  near(center: GeoPoint, radiusKm: number): NearHit[] {
    return this.inRadius(center, radiusKm, Number.POSITIVE_INFINITY).hits;
  }

  /**
   * As `near`, but only the first `want` hits are made (every one within the radius is still measured
   * and ordered: `count` is how many there are).
   */
  nearCounted(center: GeoPoint, radiusKm: number, want: number): { hits: NearHit[]; count: number } {
    return this.inRadius(center, radiusKm, want);
  }

  private inRadius(center: GeoPoint, radiusKm: number, want: number): { hits: NearHit[]; count: number } {
    // A hair wider than asked (a millimetre), then measured exactly as the answer measures.
    const searchKm = (radiusKm * GEOKDBUSH_RADIUS_KM) / EARTH_RADIUS_KM + 1e-6;
    const found = around(this.tree, center.lon, center.lat, Infinity, searchKm);
    const at: number[] = [];
    const km: number[] = [];
    for (const position of found) {
      const distance = haversineKm(center, this.points[position]!);
      if (distance > radiusKm) continue;
      at.push(position);
      km.push(roundKm(distance));
    }
    return { hits: this.sorted(at, km, want), count: at.length };
  }

  /**
   * The `count` points nearest to a point (great circle), nearest first, equal distances (to the metre)
   * by hrs_id, as `near` orders them: the k-d tree is walked nearest first until `count` are found and
   * the next one is farther (to the metre) than the last taken, so a tie at the cut is cut by hrs_id.
   */
  nearest(center: GeoPoint, count: number): NearHit[] {
    const want = Math.min(count, this.ids.length);
    if (want <= 0) return [];
    // One more than wanted: the one after the cut tells whether a tie could reach past it.
    for (let asked = Math.min(want + 1, this.ids.length); ; asked = Math.min(this.ids.length, asked * 2)) {
      const found = around(this.tree, center.lon, center.lat, asked);
      const enough = found.length >= this.ids.length || this.tieSettled(center, found, want);
      if (enough) return this.ordered(center, found).slice(0, want);
    }
  }

  /** Whether the points found reach past the `want`th one's distance (to the metre): none left out could tie it. */
  private tieSettled(center: GeoPoint, found: readonly number[], want: number): boolean {
    if (found.length <= want) return false;
    const last = roundKm(haversineKm(center, this.points[found[found.length - 1]!]!));
    // `around` orders by its own measure, the same order as ours bar rounding: compare with the largest taken.
    let cut = 0;
    for (let i = 0; i < want; i++) cut = Math.max(cut, roundKm(haversineKm(center, this.points[found[i]!]!)));
    return last > cut;
  }

  /** These positions, nearest first, equal distances (to the metre) by hrs_id. */
  private ordered(center: GeoPoint, at: readonly number[]): NearHit[] {
    return this.sorted(at, at.map((position) => roundKm(haversineKm(center, this.points[position]!))), Number.POSITIVE_INFINITY);
  }

  /** The first `want` of these positions (their distances in `km`), nearest first, equal distances by hrs_id. */
  private sorted(at: readonly number[], km: readonly number[], want: number): NearHit[] {
    // `around` gives them nearest first already, so the sort (V8's TimSort, which finds that order in
    // one pass) mostly orders equal distances by hrs_id (positions follow hrs_id). Not an insertion
    // sort: stations at one place (a placeholder point shared by thousands) would make that quadratic.
    const order = at.map((_, i) => i);
    order.sort((a, b) => km[a]! - km[b]! || at[a]! - at[b]!);
    const hits: NearHit[] = new Array(Math.min(want, order.length));
    for (let i = 0; i < hits.length; i++) hits[i] = { id: this.ids[at[order[i]!]!]!, distanceKm: km[order[i]!]! };
    return hits;
  }
}

/** Builds the index over these points (what src/api/export-v2/geo.ts rebuilds after each registry reload). */
export const buildGeoIndex = (points: readonly IndexedPoint[]): GeoIndex => GeoIndex.build(points);

/** hrs_id order: by UTF-16 code units, as the station list sorts them. */
const compareIds = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);
