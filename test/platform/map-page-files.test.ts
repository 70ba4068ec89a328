/**
 * The map page's files as the service serves them: the built-in basemap (valid GeoJSON of Natural
 * Earth's land, coastline and borders; brotli, gzip, ETag and 304), MapLibre's files from the installed
 * package, the settings (MAP_STYLE_URL, and its origin in the page's policy), and the language
 * catalogues: the same keys in every language, and every key the page's files name is in them.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { brotliDecompressSync, gunzipSync } from 'node:zlib';
import t from 'tap';
import { raw } from '../helpers/map.js';
import { getIssues } from '@placemarkio/check-geojson';
import { startTestPlatform } from '../helpers/platform.js';
import { SUMMARY_REASONS, SUMMARY_STATES } from '../../src/domain/status/summary.js';
import { EVENT_KINDS, FUELLING_OPTIONS } from '../../src/domain/vocabulary.js';

const PAGE = new URL('../../src/browser/map/', import.meta.url);


t.test('the basemap: Natural Earth as valid GeoJSON, brotli or gzip, revalidated by its ETag', async (t) => {
  const p = await startTestPlatform(t);
  const url = `${p.url}/map/v1/basemap.geojson`;
  const plain = await raw(url);
  t.equal(plain.status, 200);
  t.equal(plain.headers['content-type'], 'application/geo+json');
  t.equal(plain.headers['content-encoding'], undefined, 'identity when no encoding is accepted');
  const text = plain.body.toString('utf8');
  t.same(getIssues(text), [], 'valid GeoJSON (RFC 7946)');
  const body = JSON.parse(text) as { features: { properties: { kind: string }; geometry: { type: string; coordinates: unknown[] } }[] };
  t.same([...new Set(body.features.map((f) => f.properties.kind))].sort(), ['border', 'coast', 'land'], 'land, coastline and borders');
  const land = body.features.filter((f) => f.properties.kind === 'land').flatMap((f) => (f.geometry.type === 'MultiPolygon' ? f.geometry.coordinates : [f.geometry.coordinates]));
  t.ok(land.length > 1000, `the land as ${land.length} polygons (1:50m: islands too)`);
  const br = await raw(url, { 'Accept-Encoding': 'gzip, deflate, br' });
  t.equal(br.headers['content-encoding'], 'br', 'brotli when accepted');
  t.ok(br.body.length < plain.body.length / 4, `brotli: ${br.body.length} bytes of ${plain.body.length}`);
  t.same(brotliDecompressSync(br.body), plain.body, 'the same bytes');
  const gz = await raw(url, { 'Accept-Encoding': 'gzip' });
  t.equal(gz.headers['content-encoding'], 'gzip');
  t.same(gunzipSync(gz.body), plain.body, 'the same bytes');
  t.equal(br.headers.vary, 'Accept-Encoding');
  const again = await raw(url, { 'If-None-Match': plain.headers.etag as string });
  t.equal(again.status, 304, 'revalidated');
  t.equal(again.body.length, 0);
});

t.test('MapLibre from the installed package; the worker\'s version query and no other', async (t) => {
  const p = await startTestPlatform(t);
  const pkg = new URL('../../node_modules/maplibre-gl/dist/', import.meta.url);
  for (const name of ['maplibre-gl.mjs', 'maplibre-gl-worker.mjs', 'maplibre-gl.css']) {
    const res = await fetch(`${p.url}/map/vendor/${name}`);
    t.equal(res.status, 200, name);
    t.match(res.headers.get('content-type'), name.endsWith('.css') ? /^text\/css/ : /^text\/javascript/);
    t.equal(await res.text(), readFileSync(new URL(name, pkg), 'utf8'), `${name}: the package's file`);
  }
  t.equal((await fetch(`${p.url}/map/vendor/maplibre-gl-worker.mjs?v=6.17.0`)).status, 200, 'the worker with MapLibre\'s cache-buster');
  t.equal((await fetch(`${p.url}/map/vendor/maplibre-gl.mjs?x=1`)).status, 400, 'another query refused');
  t.equal((await fetch(`${p.url}/map/vendor/maplibre-gl.mjs.map`)).status, 404, 'only the files the page uses');
});

t.test('the settings: the built-in basemap, or MAP_STYLE_URL with its origin admitted by the page\'s policy', async (t) => {
  const p = await startTestPlatform(t);
  t.same(await (await fetch(`${p.url}/map/v1/config`)).json(), { style_url: null, language_default: 'en' });
  const csp = (await fetch(`${p.url}/`, { headers: { Accept: 'text/html' } })).headers.get('content-security-policy')!;
  t.match(csp, "connect-src 'self';", 'same origin only');
  t.match(csp, "worker-src 'self'");
  t.match(csp, "script-src 'self';", 'no eval, no inline script');

  const style = 'https://tiles.example.org/styles/osm-bright/style.json';
  const q = await startTestPlatform(t, { env: { MAP_STYLE_URL: style } });
  t.same(await (await fetch(`${q.url}/map/v1/config`)).json(), { style_url: style, language_default: 'en' });
  const styled = (await fetch(`${q.url}/`, { headers: { Accept: 'text/html' } })).headers.get('content-security-policy')!;
  t.match(styled, "connect-src 'self' https://tiles.example.org;", 'the style\'s origin may be fetched');
  t.match(styled, "img-src 'self' data: blob: https://tiles.example.org;");
});

t.test('every page file is served; the catalogues have the same keys and every key the page names', async (t) => {
  const p = await startTestPlatform(t);
  const files = readdirSync(PAGE).filter((f) => f !== 'index.html' && f !== 'i18n');
  for (const file of [...files, 'i18n/en.json', 'i18n/de.json', 'vocabulary.js']) t.equal((await fetch(`${p.url}/map/${file}`)).status, 200, `/map/${file}`);

  const en = JSON.parse(readFileSync(new URL('i18n/en.json', PAGE), 'utf8')) as Record<string, string>;
  const de = JSON.parse(readFileSync(new URL('i18n/de.json', PAGE), 'utf8')) as Record<string, string>;
  t.same(Object.keys(de).sort(), Object.keys(en).sort(), 'German has every English key, and no other');
  for (const [key, text] of Object.entries(en)) {
    t.same([...de[key]!.matchAll(/\{(\w+)\}/g)].map((m) => m[1]).sort(), [...text.matchAll(/\{(\w+)\}/g)].map((m) => m[1]).sort(), `${key}: the same placeholders`);
  }
  const html = readFileSync(new URL('index.html', PAGE), 'utf8');
  const named = [...html.matchAll(/data-i18n(?:-aria-label|-placeholder)?="([^"]+)"/g)].map((m) => m[1]!);
  for (const file of files.filter((f) => f.endsWith('.js'))) {
    const source = readFileSync(new URL(file, PAGE), 'utf8');
    named.push(...[...source.matchAll(/\bt\('([a-z0-9_]+)'/g)].map((m) => m[1]!));
    named.push(...[...source.matchAll(/\btCount\('([a-z0-9_]+)'/g)].flatMap((m) => [`${m[1]}_one`, `${m[1]}_other`]));
  }
  t.ok(named.length > 60, `${named.length} keys named`);
  t.same([...new Set(named.filter((key) => !(key in en)))], [], 'every key named is in the catalogue');
  // Keys built from a value: every state, reason, option and event kind of the domain's vocabulary has its words.
  for (const state of SUMMARY_STATES) for (const prefix of ['status_', 'letter_']) t.ok(`${prefix}${state}` in en, `${prefix}${state}`);
  for (const reason of SUMMARY_REASONS) t.ok(`reason_${reason}` in en, reason);
  for (const option of FUELLING_OPTIONS) t.ok(`option_${option}` in en, option);
  for (const kind of EVENT_KINDS) t.ok(`event_${kind}` in en, kind);
});
