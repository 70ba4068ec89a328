import { PbfWriter } from 'pbf';
import { z } from 'zod';
import { boundedString } from '../../domain/text.js';
import { badRequest, json, notFound, type Reply } from '../../http/errors.js';
import type { Family } from '../../http/family.js';
import { pathParameter } from '../../http/parameters.js';
import type { HttpServer } from '../../http/server.js';
import { MAX_PLACE_ZOOM, type Places } from '../../domain/places.js';
import type { PlacesLoader } from '../places.js';
import { precompressed, servePrecompressed, type Precompressed } from './basemap.js';

/**
 * The map's places: the nearest town to a point (`GET /map/v1/places/nearest`, what the portal's pin
 * shows beside it) and the place names as Mapbox vector tiles, `GET /map/v1/places/{z}/{x}/{y}` (z up to 12; MapLibre
 * scales zoom 12's up beyond): one layer `places`, a point per place the tile shows
 * (src/domain/places.ts chooses them) with its `name`, `kind` (capital, city, town, village,
 * district) and `rank` (0 the most important: the order labels give way in). A tile is a few hundred
 * bytes to a few kilobytes; each is made once, kept (the last TILE_CACHE), compressed and sent with an
 * ETag, cached a day: the data changes only with the package.
 */

export const PLACE_LAYER = 'places';
const EXTENT = 4096;
const TILE_CACHE = 4096;
const TYPE = 'application/vnd.mapbox-vector-tile';

const coordinate = (description: string) => pathParameter({ description, values: z.string().regex(/^\d{1,5}$/), example: '0' });
const TILE_PATH = z.object({
  z: coordinate(`Zoom, 0 to ${MAX_PLACE_ZOOM}.`),
  x: coordinate('Column, 0 to 2^z − 1.'),
  y: coordinate('Row, 0 to 2^z − 1, from the north.'),
});

/** The tile's bytes: MVT version 2, one layer of points. */
export function encodePlaceTile(places: Places, z: number, x: number, y: number): Uint8Array {
  const found = places.tile(z, x, y, EXTENT);
  const keys = ['name', 'kind', 'rank'];
  const values: (string | number)[] = [];
  const valueAt = new Map<string | number, number>();
  const value = (v: string | number) => {
    let at = valueAt.get(v);
    if (at === undefined) {
      at = values.push(v) - 1;
      valueAt.set(v, at);
    }
    return at;
  };
  const features = found.map(({ place, x: px, y: py }) => ({
    id: place.rank + 1,
    tags: [0, value(place.name), 1, value(place.kind), 2, value(place.rank)],
    geometry: [(1 << 3) | 1, zigzag(px), zigzag(py)], // MoveTo, one point
  }));
  const pbf = new PbfWriter();
  pbf.writeMessage(3, (_: unknown, layer) => {
    layer.writeVarintField(15, 2);
    layer.writeStringField(1, PLACE_LAYER);
    for (const f of features) {
      layer.writeMessage(2, (_f: unknown, out) => {
        out.writeVarintField(1, f.id);
        out.writePackedVarint(2, f.tags);
        out.writeVarintField(3, 1); // POINT
        out.writePackedVarint(4, f.geometry);
      }, undefined);
    }
    for (const k of keys) layer.writeStringField(3, k);
    for (const v of values) {
      layer.writeMessage(4, (_v: unknown, out) => {
        if (typeof v === 'string') out.writeStringField(1, v);
        else out.writeVarintField(5, v);
      }, undefined);
    }
    layer.writeVarintField(5, EXTENT);
  }, undefined);
  return pbf.finish();
}

const zigzag = (n: number) => (n << 1) ^ (n >> 31);

/** The route, on the map page's family (public, no per-address limit: a view loads a dozen tiles). */
export function placeTileRoute(server: HttpServer, family: Family, places: PlacesLoader): void {
  const cache = new Map<string, Promise<Precompressed>>();
  server.route({
    family,
    public: true,
    method: 'GET',
    path: '/map/v1/places/:z/:x/:y',
    params: TILE_PATH,
    handler: async (req): Promise<Reply> => {
      const [z, x, y] = [Number(req.params.z), Number(req.params.x), Number(req.params.y)];
      if (![req.params.z, req.params.x, req.params.y].every((v) => /^\d{1,5}$/.test(v!))) throw notFound(`No places tile ${req.params.z}/${req.params.x}/${req.params.y}: z, x and y are whole numbers.`);
      if (z > MAX_PLACE_ZOOM || x >= 2 ** z || y >= 2 ** z) throw notFound(`No places tile ${z}/${x}/${y}: zoom goes to ${MAX_PLACE_ZOOM}, x and y to 2^z − 1.`);
      const key = `${z}/${x}/${y}`;
      let tile = cache.get(key);
      if (tile === undefined) {
        tile = places().then((p) => precompressed(Buffer.from(encodePlaceTile(p, z, x, y)), TYPE));
        cache.set(key, tile);
        tile.catch(() => cache.delete(key));
        if (cache.size > TILE_CACHE) cache.delete(cache.keys().next().value!);
      } else {
        // Most recently used last: the oldest is the one dropped.
        cache.delete(key);
        cache.set(key, tile);
      }
      return servePrecompressed(req, await tile, 'public, max-age=86400');
    },
  });
}

const NEAREST_QUERY = z.object({ lat: boundedString(40), lon: boundedString(40) });

/**
 * `GET /map/v1/places/nearest?lat=…&lon=…`: the town nearest to the point (src/domain/places.ts's
 * choice: a town of 10,000 or more within 15 km before a closer village), as
 * `{"name", "country", "kind", "population", "distance_km"}`; 404 when no place is within 50 km. On the
 * map's limited family: a data route, not a file.
 */
export function nearestPlaceRoute(server: HttpServer, family: Family, places: PlacesLoader): void {
  server.route({
    family,
    public: true,
    method: 'GET',
    path: '/map/v1/places/nearest',
    query: NEAREST_QUERY,
    handler: async (req): Promise<Reply> => {
      const coordinate = (name: 'lat' | 'lon', limit: number) => {
        const text = (req.query.get(name) ?? '').trim();
        const value = /^[+-]?\d+(\.\d+)?$/.test(text) ? Number(text) : NaN;
        if (!(Math.abs(value) <= limit)) throw badRequest('invalid_query', `${name} must be decimal degrees from -${limit} to ${limit}, e.g. ${name === 'lat' ? '52.3667' : '13.5033'}; got "${text}".`);
        return value;
      };
      const lat = coordinate('lat', 90);
      const lon = coordinate('lon', 180);
      const found = (await places()).nearest(lon, lat);
      if (found === undefined) throw notFound(`No town or village within 50 km of ${lat}, ${lon}.`);
      const { distanceKm, ...place } = found;
      return json(200, { ...place, distance_km: distanceKm }, { 'Cache-Control': 'public, max-age=86400' });
    },
  });
}
