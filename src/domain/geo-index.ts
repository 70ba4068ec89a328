import KDBush from 'kdbush';
import { ChordTree } from './chord-tree.js';
import { cosLat, EARTH_RADIUS_KM, haversineKmCos, lonRanges, roundKm, type GeoBox, type GeoPoint } from './geo.js';

/**
 * A spatial index of station points in memory, for the geo queries of export v2 (./geo.ts): a static
 * k-d tree (kdbush) over longitude and latitude, searched by `range` for a box, for a circle by
 * `range` over the boxes that hold it (`circleBoxes`: across the antimeridian and over a pole) with
 * each candidate measured exactly, and for the nearest N by a k-d tree over the points' unit vectors
 * (./chord-tree.ts: the nearest by chord are the nearest by great circle), made when first asked for.
 * Built once from every point (milliseconds for ten thousand), never updated: the registry is replaced
 * whole on each reload, and so is the index. Answers never scan all points.
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

/** Points per leaf: small leaves suit queries that find few points among many. */
const NODE_SIZE = 16;

export class GeoIndex {
  private readonly tree: KDBush;
  /** By position in the tree (positions follow hrs_id order, so sorting positions sorts by hrs_id). */
  private readonly ids: string[];
  private readonly points: GeoPoint[];
  /** By position: latitude, longitude and the latitude's cosine (what a distance needs, at hand). */
  private readonly lats: Float64Array;
  private readonly lons: Float64Array;
  private readonly cosines: Float64Array;
  private readonly positions: Map<string, number>;
  /** For the nearest N, made at the first such question. */
  private chords: ChordTree | undefined;

  private constructor(points: readonly IndexedPoint[]) {
    const sorted = [...points].sort((a, b) => compareIds(a.id, b.id));
    this.ids = sorted.map((p) => p.id);
    this.points = sorted.map((p) => ({ lat: p.lat, lon: p.lon }));
    this.positions = new Map(this.ids.map((id, at) => [id, at]));
    this.lats = Float64Array.from(sorted, (p) => p.lat);
    this.lons = Float64Array.from(sorted, (p) => p.lon);
    this.cosines = Float64Array.from(sorted, (p) => cosLat(p.lat));
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
    // The boxes that hold the circle (a hair wider), searched as boxes, then measured exactly as the
    // answer measures: a box search finds the few candidates without geokdbush's queue of nodes (a
    // sixth of its time at 10,000 stations), and the exact check decides.
    const at: number[] = [];
    const km: number[] = [];
    const { lat, lon } = center;
    const cos = cosLat(lat);
    for (const [west, south, east, north] of circleBoxes(center, radiusKm)) {
      for (const position of this.tree.range(west, south, east, north)) {
        const distance = haversineKmCos(lat, lon, cos, this.lats[position]!, this.lons[position]!, this.cosines[position]!);
        if (distance > radiusKm) continue;
        at.push(position);
        km.push(roundKm(distance));
      }
    }
    return { hits: this.sorted(at, km, want), count: at.length };
  }

  /**
   * The `count` points nearest to a point (great circle), nearest first, equal distances (to the metre)
   * by hrs_id, as `near` orders them: the nearest by chord are found until `count` are and the next one
   * is farther (to the metre) than the last taken, so a tie at the cut is cut by hrs_id.
   */
  nearest(center: GeoPoint, count: number): NearHit[] {
    const want = Math.min(count, this.ids.length);
    if (want <= 0) return [];
    const chords = (this.chords ??= new ChordTree(this.lats, this.lons));
    const { lat, lon } = center;
    const cos = cosLat(lat);
    // One more than wanted: the one after the cut tells whether a tie could reach past it.
    for (let asked = Math.min(want + 1, this.ids.length); ; asked = Math.min(this.ids.length, asked * 2)) {
      const found = chords.nearest(lat, lon, asked);
      // Each found point measured once, as the answer measures it.
      const km = found.map((at) => roundKm(haversineKmCos(lat, lon, cos, this.lats[at]!, this.lons[at]!, this.cosines[at]!)));
      if (found.length >= this.ids.length || tieSettled(km, want)) return this.sorted(found, km, want);
    }
  }

  /** The first `want` of these positions (their distances in `km`), nearest first, equal distances by hrs_id. */
  private sorted(at: readonly number[], km: readonly number[], want: number): NearHit[] {
    // One number per hit, its distance in whole metres then its position (positions follow hrs_id):
    // a typed array sorts those natively, n log n whatever the ties (stations at one placeholder
    // point shared by thousands), with no comparator called. Exact below 2^53: metres up to half the
    // Earth's circumference (2.0e7) times positions.
    const span = this.ids.length;
    const keys = new Float64Array(at.length);
    for (let i = 0; i < at.length; i++) keys[i] = Math.round(km[i]! * 1000) * span + at[i]!;
    keys.sort();
    const hits: NearHit[] = new Array(Math.min(want, keys.length));
    for (let i = 0; i < hits.length; i++) {
      const key = keys[i]!;
      const position = key % span;
      hits[i] = { id: this.ids[position]!, distanceKm: (key - position) / span / 1000 };
    }
    return hits;
  }
}

/**
 * Whether points found nearest first by chord (their distances `km`, to the metre) reach past the
 * `want`th one's distance: none left out could tie it. Chord order is ours bar rounding, so the
 * `want`th's distance is the largest of the first `want`.
 */
function tieSettled(km: readonly number[], want: number): boolean {
  if (km.length <= want) return false;
  let cut = 0;
  for (let i = 0; i < want; i++) cut = Math.max(cut, km[i]!);
  return km[km.length - 1]! > cut;
}

/** Builds the index over these points (what src/api/export-v2/geo.ts rebuilds after each registry reload). */
export const buildGeoIndex = (points: readonly IndexedPoint[]): GeoIndex => GeoIndex.build(points);

/** A hair of a degree (about a tenth of a metre): boxes are this much wider than the circle they hold. */
const HAIR_DEG = 1e-6;

/**
 * Boxes `[west, south, east, north]` (degrees, as the tree holds points: the meridian ±180 at -180)
 * that together hold every point within `radiusKm` of `center` on the sphere, and never one point
 * twice. A circle reaching a pole holds every longitude from its edge to the pole; otherwise its
 * longitudes are within asin(sin d / cos φ) of the centre's (the tangent meridians of a spherical
 * cap), cut at the antimeridian into two boxes.
 */
export function circleBoxes(center: GeoPoint, radiusKm: number): [number, number, number, number][] {
  const d = radiusKm / EARTH_RADIUS_KM;
  const dLatDeg = d * DEG + HAIR_DEG;
  const south = Math.max(-90, center.lat - dLatDeg);
  const north = Math.min(90, center.lat + dLatDeg);
  const cosLat = Math.cos(center.lat * RAD);
  if (north >= 90 || south <= -90 || Math.sin(d) >= cosLat) return [[-180, south, 180, north]];
  const dLonDeg = Math.asin(Math.sin(d) / cosLat) * DEG + HAIR_DEG;
  // The centre's longitude with the meridian ±180 as -180, as the tree holds it.
  const lon = center.lon === 180 ? -180 : center.lon;
  const west = lon - dLonDeg;
  const east = lon + dLonDeg;
  if (dLonDeg >= 180) return [[-180, south, 180, north]];
  if (west < -180) return [[-180, south, east, north], [west + 360, south, 180, north]];
  // Reaching 180 from the west also reaches the meridian, held at -180.
  if (east >= 180) return [[west, south, 180, north], [-180, south, Math.max(-180, east - 360), north]];
  return [[west, south, east, north]];
}

const RAD = Math.PI / 180;
const DEG = 180 / Math.PI;

/** hrs_id order: by UTF-16 code units, as the station list sorts them. */
const compareIds = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);
