import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { promisify } from 'node:util';
import { brotliCompress, constants as zlib, gzip } from 'node:zlib';
import { feature, mesh } from 'topojson-client';
import type { Feature, FeatureCollection, Geometry, Position } from 'geojson';
import type { Topology, GeometryCollection } from 'topojson-specification';
import type { Reply } from '../../http/errors.js';
import type { Request } from '../../http/request.js';
import { notModified } from '../../http/static.js';
import { acceptsGzip } from '../../http/encoding.js';
import { createHash } from 'node:crypto';

/**
 * The map's built-in basemap, so the map draws with no internet and no tile server: Natural Earth's
 * 1:50m shapes from the `world-atlas` package (TopoJSON), turned into GeoJSON once at start with
 * `topojson-client` — the land as polygons (`kind: "land"`), the coastline as its outline
 * (`kind: "coast"`) and the borders between countries (`kind: "border"`). Coordinates are rounded to
 * 0.001° (about 100 m, finer than the 1:50m source's own accuracy), which halves the body. Served with
 * an ETag and brotli or gzip (2.4 MB of JSON is 0.46 MB brotli-, 0.8 MB gzip-encoded), compressed once,
 * on the first request (not at start: half a second of work a platform that nobody asks for the map
 * need not do), in zlib's thread pool.
 */

const require = createRequire(import.meta.url);

/** A topology of world-atlas, read from the installed package. */
function topology(name: string): Topology {
  const dir = dirname(require.resolve('world-atlas/package.json'));
  return JSON.parse(readFileSync(join(dir, name), 'utf8')) as Topology;
}

/** A geometry's positions rounded to 0.001°, consecutive duplicates (the rounding's) dropped from lines and rings. */
function rounded(geometry: Geometry): Geometry {
  const point = (p: Position): Position => [Math.round(p[0]! * 1000) / 1000, Math.round(p[1]! * 1000) / 1000];
  const line = (ps: Position[]): Position[] => {
    const out: Position[] = [];
    for (const p of ps.map(point)) if (out.length === 0 || out.at(-1)![0] !== p[0] || out.at(-1)![1] !== p[1]) out.push(p);
    return out;
  };
  const ring = (ps: Position[]): Position[] | undefined => {
    const out = line(ps);
    return out.length >= 4 ? out : undefined; // a ring rounded down to a point is no ring
  };
  const rings = (rs: Position[][]) => rs.map(ring).filter((r): r is Position[] => r !== undefined);
  switch (geometry.type) {
    case 'Polygon':
      return { type: 'Polygon', coordinates: rings(geometry.coordinates) };
    case 'MultiPolygon':
      return { type: 'MultiPolygon', coordinates: geometry.coordinates.map(rings).filter((p) => p.length > 0) };
    case 'LineString':
      return { type: 'LineString', coordinates: line(geometry.coordinates) };
    case 'MultiLineString':
      return { type: 'MultiLineString', coordinates: geometry.coordinates.map(line).filter((l) => l.length >= 2) };
    default:
      return geometry;
  }
}

/** The basemap as one FeatureCollection: land, coastline, borders. */
export function basemapCollection(): FeatureCollection {
  const land = topology('land-50m.json');
  const countries = topology('countries-50m.json');
  const landObject = land.objects.land as GeometryCollection;
  const countryObject = countries.objects.countries as GeometryCollection;
  const tagged = (kind: string, geometry: Geometry): Feature => ({ type: 'Feature', properties: { kind }, geometry: rounded(geometry) });
  const landShapes = feature(land, landObject);
  const landFeatures = 'features' in landShapes ? landShapes.features : [landShapes];
  return {
    type: 'FeatureCollection',
    features: [
      ...landFeatures.map((f) => tagged('land', f.geometry)),
      tagged('coast', mesh(land, landObject)),
      // Each border once: arcs shared by two different countries.
      tagged('border', mesh(countries, countryObject, (a, b) => a !== b)),
    ],
  };
}

/** A body kept in the three encodings it is sent in, compressed once. */
export interface Precompressed {
  type: string;
  identity: Buffer;
  gzip: Buffer;
  brotli: Buffer;
  etag: string;
}

export async function precompressed(content: string | Buffer, type: string): Promise<Precompressed> {
  const identity = typeof content === 'string' ? Buffer.from(content, 'utf8') : content;
  const [gzipped, brotli] = await Promise.all([
    promisify(gzip)(identity, { level: 9 }),
    promisify(brotliCompress)(identity, { params: { [zlib.BROTLI_PARAM_QUALITY]: 9, [zlib.BROTLI_PARAM_SIZE_HINT]: identity.length } }),
  ]);
  return { type, identity, gzip: gzipped, brotli, etag: `"${createHash('sha256').update(identity).digest('base64url').slice(0, 27)}"` };
}

/** Whether `Accept-Encoding` accepts brotli (`br` with a non-zero weight; `*` is taken as gzip's). */
export function acceptsBrotli(header: string | undefined): boolean {
  if (!header) return false;
  return header.split(',').some((part) => {
    const [name, ...params] = part.trim().toLowerCase().split(';');
    if (name !== 'br') return false;
    const q = params.map((p) => p.trim()).find((p) => p.startsWith('q='));
    const weight = q === undefined ? 1 : Number(q.slice(2));
    return Number.isFinite(weight) && weight > 0;
  });
}

/** The kept body: 304 on a matching `If-None-Match`, else brotli, gzip or identity as the client accepts. */
export function servePrecompressed(req: Request, body: Precompressed, cacheControl: string): Reply {
  const headers: Record<string, string> = { 'Cache-Control': cacheControl, ETag: body.etag, Vary: 'Accept-Encoding' };
  if (notModified(req, body.etag)) return { status: 304, headers };
  const accept = req.headers['accept-encoding'];
  const [encoding, bytes] = acceptsBrotli(accept) ? ['br', body.brotli] : acceptsGzip(accept) ? ['gzip', body.gzip] : [undefined, body.identity];
  return {
    status: 200,
    headers: { 'Content-Type': body.type, 'X-Content-Type-Options': 'nosniff', ...headers, ...(encoding ? { 'Content-Encoding': encoding } : {}) },
    body: bytes,
  };
}
