import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, extname, join } from 'node:path';
import { z } from 'zod';
import { boundedString } from '../../domain/text.js';
import { json, type Reply } from '../../http/errors.js';
import type { Family } from '../../http/family.js';
import { browserDir, constantsModule, SAME_ORIGIN_PAGE } from '../../http/page-files.js';
import { PAGE_WORDS } from '../../domain/page-words.js';
import type { Request } from '../../http/request.js';
import type { HttpServer } from '../../http/server.js';
import { serve, staticBody, type Static } from '../../http/static.js';
import { basemapCollection, precompressed, servePrecompressed, type Precompressed } from './basemap.js';
import { placeTileRoute } from './place-tiles.js';
import type { PlacesLoader } from '../places.js';

/**
 * The public map's page (served at `/` for browsers, see src/api/index-page/routes.ts): its plain ES
 * modules, style sheet and language catalogues from src/browser/map/ under `/map/`, MapLibre GL JS's own files
 * from the installed package under `/map/vendor/` (no CDN: the page works with no internet), the
 * built-in basemap (`/map/v1/basemap.geojson`, ./basemap.ts), its place names (`/map/v1/places/…`,
 * ./place-tiles.ts) in Noto Sans from the installed `@fontsource/noto-sans` under `/map/fonts/` (MapLibre
 * draws the labels' glyphs from these files in the browser: the style's `font-faces`, so no glyph
 * server), and the page's settings (`/map/v1/config`). No build step: the files are served as they
 * are, read once at start.
 */

export interface MapPageDeps {
  /** MAP_STYLE_URL: a MapLibre style document replacing the built-in basemap. */
  styleUrl: string | undefined;
}

export interface MapPageRouteDeps extends MapPageDeps {
  /** The place names' data (../places.ts). */
  places: PlacesLoader;
}

/** The labels' font: Noto Sans Regular, by the scripts of Europe's place names (and Vietnamese). */
const FONT_NAME = 'Noto Sans Regular';
const FONT_SUBSETS = ['latin', 'latin-ext', 'greek', 'greek-ext', 'cyrillic', 'cyrillic-ext', 'vietnamese'] as const;
const fontFile = (subset: string) => `noto-sans-${subset}-400-normal.woff2`;

/** The page's files in src/browser/map/, as served under `/map/`. */
const FILES = [
  'app.js', 'map.js', 'style.js', 'state.js', 'status.js', 'list.js', 'panel.js', 'panel-parts.js', 'alert-form.js', 'live.js', 'i18n.js', 'map.css', 'panel.css',
  'i18n/en.json', 'i18n/de.json',
];

/** MapLibre's ES modules and style sheet; the main module loads the others relative to its own URL. */
const VENDOR = ['maplibre-gl.mjs', 'maplibre-gl-shared.mjs', 'maplibre-gl-worker.mjs', 'maplibre-gl.css'];

const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.mjs': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.json': 'application/json; charset=utf-8',
  '.woff2': 'font/woff2',
};

const PAGE_DIR = browserDir('map');

/** The map page itself (`index.html`), for `GET /`. */
const PAGE = staticBody(readFileSync(new URL('index.html', PAGE_DIR)), TYPES['.html']!);

/**
 * The portal's strict same-origin policy, widened for MapLibre only, on the map's page and files:
 * - `worker-src 'self'`: MapLibre parses GeoJSON and tiles in a module worker it starts from
 *   `/map/vendor/maplibre-gl-worker.mjs` (same origin, so no `blob:` is needed);
 * - `img-src blob:`: MapLibre decodes sprite and raster images through blob URLs;
 * - with MAP_STYLE_URL, that style's origin in `connect-src` and `img-src`: MapLibre fetches the style,
 *   its tiles, glyphs and sprite from there (a deployment hosts them together, see docs/map.md);
 * - `font-src 'self'`: the labels' font files (MapLibre hands them to the browser's font loading).
 */
export function mapPageSecurity(styleUrl: string | undefined): Record<string, string> {
  const origin = styleUrl ? ` ${new URL(styleUrl).origin}` : '';
  return {
    ...SAME_ORIGIN_PAGE,
    'Content-Security-Policy':
      "default-src 'none'; script-src 'self'; style-src 'self'; " +
      `img-src 'self' data: blob:${origin}; connect-src 'self'${origin}; font-src 'self'${origin}; worker-src 'self'; ` +
      "base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
  };
}

/** The map page's reply to a browser at `/` (no-cache: a new release is seen at once). */
export function mapPageReply(req: Request, deps: MapPageDeps): Reply {
  const reply = serve(req, PAGE, 'no-cache', mapPageSecurity(deps.styleUrl));
  // `/` answers JSON or this page by `Accept`, and the page gzip-encoded or not by `Accept-Encoding`.
  reply.headers = { ...reply.headers, Vary: 'Accept, Accept-Encoding' };
  return reply;
}

const require = createRequire(import.meta.url);

/** The worker's URL carries MapLibre's version as `?v=` (its cache-buster); nothing else is taken. */
const VENDOR_QUERY = z.object({ v: boundedString(40).optional() });

/**
 * The page's files, MapLibre's, the basemap and the settings: public routes of the map family, with its
 * errors and policy but without its per-address limit. One page load asks for some twenty of these
 * files, and a browser revalidates them on every load: at MAP_RATE_LIMIT (120 a minute) a few reloads,
 * or a few people behind one NAT address, would lose the page itself. They are the same bytes for
 * everyone, answered from memory, mostly with a 304; the data (feed, detail, photo, forecast, stream) stays limited.
 */
export function mapPageRoutes(server: HttpServer, mapFamily: Family, deps: MapPageRouteDeps): void {
  const family: Family = { ...mapFamily, guards: [], guardsOnPublicRoutes: false };
  const security = mapPageSecurity(deps.styleUrl);
  const file = (path: string, body: Static, cacheControl: string, query?: typeof VENDOR_QUERY) =>
    server.route({ family, public: true, method: 'GET', path, ...(query ? { query } : {}), handler: (req) => serve(req, body, cacheControl, security) });

  for (const name of FILES) file(`/map/${name}`, staticBody(readFileSync(new URL(name, PAGE_DIR)), TYPES[extname(name)]!), 'no-cache');
  file('/map/vocabulary.js', staticBody(constantsModule(PAGE_WORDS), TYPES['.js']!), 'no-cache');
  const vendorDir = join(dirname(require.resolve('maplibre-gl/package.json')), 'dist');
  // The package's files change only with its version: revalidated after an hour.
  for (const name of VENDOR) file(`/map/vendor/${name}`, staticBody(readFileSync(join(vendorDir, name)), TYPES[extname(name)]!), 'public, max-age=3600', VENDOR_QUERY);

  let basemap: Promise<Precompressed> | undefined; // made on the first request (./basemap.ts)
  server.route({
    family,
    public: true,
    method: 'GET',
    path: '/map/v1/basemap.geojson',
    handler: async (req) => servePrecompressed(req, await (basemap ??= precompressed(JSON.stringify(basemapCollection()), 'application/geo+json')), 'public, max-age=86400'),
  });

  placeTileRoute(server, family, deps.places);

  // The labels' font files, and the style's `font-faces` naming them by the ranges each covers.
  const fontsDir = join(dirname(require.resolve('@fontsource/noto-sans/package.json')));
  const ranges = JSON.parse(readFileSync(join(fontsDir, 'unicode.json'), 'utf8')) as Record<string, string>;
  for (const subset of FONT_SUBSETS) file(`/map/fonts/${fontFile(subset)}`, staticBody(readFileSync(join(fontsDir, 'files', fontFile(subset))), TYPES['.woff2']!), 'public, max-age=86400');
  const fontFaces = { [FONT_NAME]: FONT_SUBSETS.map((subset) => ({ url: `/map/fonts/${fontFile(subset)}`, 'unicode-range': ranges[subset]!.split(',') })) };

  const settings = { style_url: deps.styleUrl ?? null, language_default: 'en', font_faces: fontFaces };
  server.route({ family, public: true, method: 'GET', path: '/map/v1/config', handler: () => json(200, settings, { 'Cache-Control': 'no-cache' }) });
}
