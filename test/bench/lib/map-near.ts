/**
 * The `near` query of export v2 measured in this process against the spatial index itself
 * (src/domain/geo-index.ts, the pure module src/api/export-v2/geo.ts answers from): no HTTP, no JSON,
 * no rate limit, only the k-d tree search, the exact great-circle check and the ordering. Each query
 * is timed on its own (performance.now(), sub-microsecond here), after an unmeasured warm-up that lets
 * V8 optimise the search; before that, a sample of queries is compared with a scan of every point, so
 * what is timed is also right.
 */
import { buildGeoIndex, type GeoIndex, type IndexedPoint } from '../../../src/domain/geo-index.js';
import { haversineKm, roundKm, type GeoPoint } from '../../../src/domain/geo.js';
import { seededRandom } from '../../../src/domain/random.js';

/** A deterministic pseudo-random sequence in [0, 1): the same points on every run. */
export const random = seededRandom;

/** Europe as the stations spread over it (./seed.ts `EUROPEAN_CITIES` with their spread). */
const EUROPE = { minLat: 36, maxLat: 62, minLon: -10, maxLon: 28 };

/**
 * `count` points to search around: half where people look for a station (within about 30 km of a
 * station picked at random), half anywhere over Europe (sea and empty land included), 4 decimals as
 * a page would send them.
 */
export function queryPoints(points: readonly IndexedPoint[], count: number, seed = 31): GeoPoint[] {
  const next = random(seed);
  const round = (x: number) => Math.round(x * 1e4) / 1e4;
  return Array.from({ length: count }, (_, i) => {
    if (i % 2 === 0) {
      const at = points[Math.floor(next() * points.length)]!;
      return { lat: round(at.lat + (next() - 0.5) * 0.5), lon: round(at.lon + (next() - 0.5) * 0.8) };
    }
    return {
      lat: round(EUROPE.minLat + next() * (EUROPE.maxLat - EUROPE.minLat)),
      lon: round(EUROPE.minLon + next() * (EUROPE.maxLon - EUROPE.minLon)),
    };
  });
}

/** The answer a scan of every point gives: within the radius, nearest first, equal distances by id. */
export function scanNear(points: readonly IndexedPoint[], center: GeoPoint, radiusKm: number): string[] {
  return points
    .map((p) => ({ id: p.id, km: haversineKm(center, p) }))
    .filter((p) => p.km <= radiusKm)
    .map((p) => ({ id: p.id, km: roundKm(p.km) }))
    .sort((a, b) => a.km - b.km || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0))
    .map((p) => p.id);
}

export interface NearFigures {
  queries: number;
  buildMs: number;
  p50Ms: number;
  p99Ms: number;
  maxMs: number;
  meanMs: number;
  /** Stations found per query, on average, and the share of queries that found none. */
  meanHits: number;
  emptyShare: number;
  checked: number;
}

const percentile = (sorted: Float64Array, p: number) => sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;

/**
 * Builds the index over `points`, checks `check` queries against a scan, runs `warmup` unmeasured
 * queries, then times `queries` more (radius `radiusKm`). Throws when an answer differs from the scan.
 */
export function measureNear(points: readonly IndexedPoint[], radiusKm: number, { queries, warmup, check }: { queries: number; warmup: number; check: number }): NearFigures {
  const buildStarted = performance.now();
  const index: GeoIndex = buildGeoIndex(points);
  const buildMs = performance.now() - buildStarted;
  const centers = queryPoints(points, check + warmup + queries);
  for (const center of centers.slice(0, check)) {
    const got = index.near(center, radiusKm).map((hit) => hit.id);
    const want = scanNear(points, center, radiusKm);
    if (got.join() !== want.join()) {
      throw new Error(`near ${center.lat},${center.lon} r=${radiusKm}: the index found ${got.length} stations, a scan of every point ${want.length} (or another order)`);
    }
  }
  let sink = 0;
  for (const center of centers.slice(check, check + warmup)) sink += index.near(center, radiusKm).length;
  const times = new Float64Array(queries);
  let hits = 0;
  let empty = 0;
  centers.slice(check + warmup).forEach((center, i) => {
    const started = performance.now();
    const found = index.near(center, radiusKm);
    times[i] = performance.now() - started;
    hits += found.length;
    if (found.length === 0) empty++;
  });
  if (sink < 0) throw new Error('unreachable');
  const total = times.reduce((a, b) => a + b, 0);
  times.sort();
  return {
    queries,
    buildMs,
    p50Ms: percentile(times, 50),
    p99Ms: percentile(times, 99),
    maxMs: times[times.length - 1]!,
    meanMs: total / queries,
    meanHits: hits / queries,
    emptyShare: empty / queries,
    checked: check,
  };
}
