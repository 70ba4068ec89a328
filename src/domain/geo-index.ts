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

  private constructor(points: readonly IndexedPoint[]) {
    const sorted = [...points].sort((a, b) => compareIds(a.id, b.id));
    this.ids = sorted.map((p) => p.id);
    this.points = sorted.map((p) => ({ lat: p.lat, lon: p.lon }));
    this.tree = new KDBush(Math.max(sorted.length, 1), NODE_SIZE, Float64Array);
    // 180 and -180 are one meridian: kept as -180, so each point sits at one place of the tree.
    for (const p of sorted) this.tree.add(p.lon === 180 ? -180 : p.lon, p.lat);
    // kdbush needs at least one point; an empty index holds one far outside any query, never returned.
    if (sorted.length === 0) this.tree.add(Number.NaN, Number.NaN);
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
    const at = this.position.get(id);
    return at === undefined ? undefined : this.points[at];
  }

  private positions: Map<string, number> | undefined;
  private get position(): Map<string, number> {
    return (this.positions ??= new Map(this.ids.map((id, at) => [id, at])));
  }

  /**
   * The ids of the points in a box (edges included; see ./geo.ts `boxHolds`), sorted by hrs_id. A box
   * across the antimeridian (minLon > maxLon) is searched as its two halves.
   */
  within(box: GeoBox): string[] {
    if (this.ids.length === 0) return [];
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
    if (this.ids.length === 0) return [];
    // A hair wider than asked (a millimetre), then measured exactly as the answer measures.
    const searchKm = (radiusKm * GEOKDBUSH_RADIUS_KM) / EARTH_RADIUS_KM + 1e-6;
    const hits: { at: number; km: number }[] = [];
    for (const at of around(this.tree, center.lon, center.lat, Infinity, searchKm)) {
      const km = haversineKm(center, this.points[at]!);
      if (km <= radiusKm) hits.push({ at, km: roundKm(km) });
    }
    hits.sort((a, b) => a.km - b.km || a.at - b.at);
    return hits.map((hit) => ({ id: this.ids[hit.at]!, distanceKm: hit.km }));
  }
}

/** Builds the index over these points: what the geo queries and their benchmark use. */
export const buildGeoIndex = (points: readonly IndexedPoint[]): GeoIndex => GeoIndex.build(points);

/** hrs_id order: by UTF-16 code units, as the station list sorts them. */
const compareIds = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);
