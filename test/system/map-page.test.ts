/**
 * The public map at `/` in Debian's Chromium against a real platform: it draws offline with the built-in
 * basemap (no request leaves the service), its markers are the feed's stations with their best values
 * (clustered when zoomed out, counting the available ones), MAP_STYLE_URL's style replaces the basemap,
 * the filters and the search narrow the markers and the list, the address restores the view after a
 * reload and Back, a keyboard alone reaches a station's panel, the phone layout never scrolls sideways,
 * axe finds no serious or critical violation, marker letters pass WCAG AA, and no console error.
 * Screenshots (desktop and phone, English and German) to test/output/ and, with
 * UPDATE_DOCS_SCREENSHOT=1, docs/.
 */
import t from 'tap';
import { AxeBuilder } from '@axe-core/playwright';
import type { Page } from 'playwright-core';
import { mapFixture } from '../helpers/map.js';
import { closeBrowser, screenshot as save, skipWithoutChromium, watchedPage } from '../helpers/portal-browser.js';
import { postSignals, publishHistory, startTestPlatform, type TestPlatform } from '../helpers/platform.js';

const skip = skipWithoutChromium;
t.teardown(closeBrowser);
const ENV = { MAP_RATE_LIMIT: '100000' };
const ago = (seconds: number) => new Date(Date.now() - seconds * 1000).toISOString();

interface Entry { fuelling_option: string; status: string }
interface Feature { properties: { hrs_id: string; name: string; fuelling_options: Entry[] } }

const RANK = ['AVAILABLE', 'LIMITEDLY_AVAILABLE', 'UNAVAILABLE', 'UNKNOWN', 'CLOSED'];
/** The best value as the issue defines it (computed here independently of the page's status.js). */
const best = (f: Feature, option = '') =>
  option
    ? f.properties.fuelling_options.find((e) => e.fuelling_option === option)?.status ?? null
    : f.properties.fuelling_options.map((e) => e.status).sort((a, b) => RANK.indexOf(a) - RANK.indexOf(b))[0] ?? ((f.properties as { open_now?: boolean }).open_now === false ? 'CLOSED' : 'UNKNOWN');

async function feed(p: TestPlatform): Promise<Feature[]> {
  return ((await (await fetch(`${p.url}/map/v1/stations.geojson`)).json()) as { features: Feature[] }).features;
}

/** A platform with the map's fixture and BERLA available (and its 700 bar priced), TRUCK unavailable (CLOSD is closed now). */
async function mapPlatform(t: { teardown(fn: () => unknown): void }): Promise<TestPlatform> {
  const fixture = mapFixture();
  fixture.assignments = fixture.assignments.map((a) => (a.hrs_id === 'BERLA' && a.signal_type === 'pricing' ? { ...a, state: 'live' } : a));
  const p = await startTestPlatform(t, { env: ENV, fixture });
  await postSignals(p, 'availability', [
    { hrs: 'BERLA', datetime: ago(5), station: { maintenance: false, limitedly_available: false }, nozzles: [{ id: 'N1', available: true }, { id: 'N2', available: false }] },
    { hrs: 'TRUCK', datetime: ago(4), station: { maintenance: false, limitedly_available: false }, nozzles: [{ id: 'T1', available: false }, { id: 'T3', available: false }] },
  ]);
  await postSignals(p, 'pricing', [{ hrs: 'BERLA', datetime: ago(5), products: [{ id: 'P700', gross_price: '13.850', net_price: '11.639', currency: 'EUR' }] }]);
  for (let i = 0; i < 50 && best((await feed(p)).find((f) => f.properties.hrs_id === 'BERLA')!) !== 'AVAILABLE'; i++) await new Promise((r) => setTimeout(r, 100));
  // The panel's forecast reads it (503 before the history worker's first run: test/system/map-forecast.test.ts).
  await publishHistory(p);
  return p;
}

/** Opens the map (`hash`: its address) in a watched page, which notes every request it makes. */
async function openMap(t: { teardown(fn: () => unknown): void }, p: TestPlatform, hash = '', screen: { phone?: boolean; locale?: string } = {}) {
  const { page, problems } = await watchedPage(t, p, { phone: screen.phone ?? false });
  // Every request the page makes, its worker's too (the map must draw with no internet: none may leave).
  const requested: string[] = [];
  page.on('request', (req) => requested.push(req.url()));
  const outside = () => requested.filter((url) => !url.startsWith(p.url) && !url.startsWith(p.url.replace('http:', 'ws:')) && !url.startsWith('data:') && !url.startsWith('blob:'));
  if (screen.locale) await page.addInitScript(`Object.defineProperty(navigator, 'languages', { get: () => ['${screen.locale}'] });`);
  page.on('response', (res) => {
    if (res.status() >= 400) problems.push(`${res.status()} ${res.url()}`);
  });
  await page.goto(`${p.url}/${hash}`);
  await page.waitForSelector('body[data-ready="true"]');
  return { page, problems, outside, requested };
}

/** The markers on the map: hrs_id → value. */
const markers = (page: Page): Promise<Record<string, string>> =>
  page.evaluate(`Object.fromEntries([...document.querySelectorAll('.maplibregl-marker [data-hrs-id]')].map((m) => [m.dataset.hrsId, m.dataset.status]))`);
const listed = (page: Page): Promise<string[]> => page.evaluate(`[...document.querySelectorAll('#station-list button')].map((b) => b.dataset.hrsId)`);

/** Waits until the markers are `expected` (they are placed after MapLibre renders). */
async function markersAre(page: Page, expected: Record<string, string>): Promise<Record<string, string>> {
  let seen: Record<string, string> = {};
  for (let i = 0; i < 100; i++) {
    seen = await markers(page);
    if (JSON.stringify(Object.entries(seen).sort()) === JSON.stringify(Object.entries(expected).sort())) return seen;
    await page.waitForTimeout(100);
  }
  return seen;
}

/**
 * A screenshot once the map has settled (tiles drawn, markers placed) and no notice shows (a stream
 * that dropped has reconnected: its notices are the live test's, test/system/map-live.test.ts).
 */
async function screenshot(page: Page, name: string): Promise<void> {
  await page.waitForSelector('#map[data-idle="true"]');
  await page.waitForSelector('#connection[hidden]', { state: 'attached', timeout: 15_000 });
  await save(page, name);
}

const overflow = (page: Page): Promise<number> => page.evaluate('Math.max(0, document.documentElement.scrollWidth - document.documentElement.clientWidth)');

async function seriousViolations(page: Page): Promise<string[]> {
  const result = await new AxeBuilder({ page }).analyze();
  return result.violations.filter((v) => v.impact === 'serious' || v.impact === 'critical').map((v) => `${v.id}: ${v.nodes.map((n) => n.target.join(' ')).slice(0, 3).join(', ')}`);
}

t.test('offline, the built-in basemap draws and the markers are the feed\'s stations with their best values', { skip }, async (t) => {
  const p = await mapPlatform(t);
  const features = await feed(p);
  const { page, problems, outside, requested } = await openMap(t, p);
  await page.locator('.maplibregl-canvas').waitFor();
  const expected = Object.fromEntries(features.map((f) => [f.properties.hrs_id, best(f)!]));
  t.same(Object.keys(expected).sort(), ['BERLA', 'CLOSD', 'TRUCK'], 'the feed has the three stations with coordinates');
  t.same(await markersAre(page, expected), expected, 'one marker per station, with its best value');
  t.same(expected, { BERLA: 'AVAILABLE', TRUCK: 'UNAVAILABLE', CLOSD: 'CLOSED' }, 'the values as posted');
  t.same((await listed(page)).sort(), Object.keys(expected).sort(), 'the list has the same stations');
  for (let i = 0; i < 50 && !requested.includes(`${p.url}/map/v1/basemap.geojson`); i++) await page.waitForTimeout(100);
  t.ok(requested.includes(`${p.url}/map/v1/basemap.geojson`), 'the basemap was read from the service');
  // Place names: vector tiles and the labels' font from the service, and the view names some places.
  await page.waitForSelector('#map[data-idle="true"]');
  const drawn = Number(await page.locator('#map').getAttribute('data-places-drawn'));
  t.ok(drawn >= 5, `${drawn} place names drawn`);
  t.ok(requested.some((url) => url.startsWith(`${p.url}/map/v1/places/`)), 'place tiles from the service');
  t.ok(requested.some((url) => url.startsWith(`${p.url}/map/fonts/noto-sans-latin-400-normal.woff2`)), 'the labels\' font from the service');
  t.match(await page.locator('.maplibregl-ctrl-attrib').textContent(), /GeoNames/, 'GeoNames credited');
  t.same(outside(), [], 'no request left the service');

  // Zoomed out the three cluster into one, which counts its available stations.
  for (let i = 0; i < 4; i++) await page.getByRole('button', { name: 'Zoom out' }).click();
  const cluster = page.locator('.maplibregl-marker .cluster');
  await cluster.waitFor();
  t.same(
    await cluster.evaluate((el: any) => [el.dataset.count, el.dataset.available, el.textContent, el.getAttribute('aria-label')]),
    ['3', '1', '1/3', '1/3 stations available: zoom in'],
    'one cluster: 1 of 3 available, said in its name',
  );
  t.same(await markers(page), {}, 'no single markers then');
  await cluster.click();
  await page.locator('.maplibregl-marker .cluster[data-count="3"]').waitFor({ state: 'detached' });
  const split = await markers(page);
  t.ok(Object.keys(split).length > 0, `choosing the cluster zooms in until it splits (${JSON.stringify(split)})`);
  t.same(problems, [], 'no console error, CSP violation or failed request');
});

/** The filters as the issue words them, applied here independently of the page's state.js. */
function expectedFor(features: Feature[], f: { option?: string; available?: boolean; open?: boolean; heavy?: boolean; q?: string }): Record<string, string> {
  const out: Record<string, string> = {};
  for (const feature of features) {
    const p = feature.properties as Feature['properties'] & { open_now: boolean; heavy_duty: boolean; city: string | null };
    const value = best(feature, f.option);
    if (value === null) continue;
    if (f.available && value !== 'AVAILABLE' && value !== 'LIMITEDLY_AVAILABLE') continue;
    if (f.open && !p.open_now) continue;
    if (f.heavy && !p.heavy_duty) continue;
    if (f.q && ![p.name, p.city, p.hrs_id].some((s) => s && s.normalize('NFD').replace(/\p{M}/gu, '').toLowerCase().includes(f.q!))) continue;
    out[p.hrs_id] = value;
  }
  return out;
}

t.test('the filters and the search narrow the markers and the list; the address keeps them through a reload and Back', { skip }, async (t) => {
  const p = await mapPlatform(t);
  const features = await feed(p);
  const { page, problems } = await openMap(t, p);
  await markersAre(page, expectedFor(features, {}));
  const check = async (what: string, filters: Parameters<typeof expectedFor>[1]) => {
    const expected = expectedFor(features, filters);
    t.ok(Object.keys(expected).length < features.length, `${what}: leaves some out`);
    t.same(await markersAre(page, expected), expected, `${what}: the markers`);
    t.same((await listed(page)).sort(), Object.keys(expected).sort(), `${what}: the list`);
  };

  await page.getByLabel('Available now').check();
  await check('available now', { available: true });
  t.match(new URL(page.url()).hash, /available=1/, 'in the address');
  await page.getByLabel('Available now').uncheck();
  await page.getByLabel('Open now').check();
  await check('open now', { open: true });
  await page.getByLabel('Open now').uncheck();
  await page.getByLabel('Heavy-duty access').check();
  await check('heavy-duty access', { heavy: true });
  await page.getByLabel('Heavy-duty access').uncheck();
  await page.getByLabel('Fuelling option').selectOption('700hd');
  await check('700 bar heavy-duty', { option: '700hd' });
  await page.getByLabel('Fuelling option').selectOption('');
  await page.getByLabel('Search').fill('schonefeld');
  await check('search by city, without its accent', { q: 'schonefeld' });
  await page.getByLabel('Search').fill('CLOSD');
  await check('search by hrs_id', { q: 'closd' });
  await page.getByLabel('Search').fill('truck');
  await check('search by name', { q: 'truck' });
  await page.getByLabel('Search').fill('');
  t.same(await markersAre(page, expectedFor(features, {})), expectedFor(features, {}), 'all again');

  // An address with a station and filters: restored as it is, after a reload too.
  await page.goto(`${p.url}/#/station/BERLA?option=700ld&open=1`);
  const restored = async (what: string) => {
    await page.locator('#panel:not([hidden])').waitFor();
    t.equal(await page.locator('#panel-title').textContent(), 'Berlin Airport', `${what}: the station's panel is open`);
    t.equal(await page.getByLabel('Fuelling option').inputValue(), '700ld', `${what}: the option`);
    t.ok(await page.getByLabel('Open now').isChecked(), `${what}: open now`);
    const expected = expectedFor(features, { option: '700ld', open: true });
    t.same((await listed(page)).sort(), Object.keys(expected).sort(), `${what}: the list`);
    // Zoomed to the station: the markers are those in view (MapLibre places what its tiles hold).
    await markersAre(page, { BERLA: 'AVAILABLE' });
    const shown = await markers(page);
    t.same(shown, Object.fromEntries(Object.keys(shown).map((id) => [id, expected[id]])), `${what}: the markers in view, with their values for 700ld`);
    t.equal(shown.BERLA, 'AVAILABLE', `${what}: the station's marker`);
    t.equal(await page.locator('.maplibregl-marker [data-hrs-id="BERLA"]').getAttribute('class'), 'marker state-available selected', `${what}: its marker is marked`);
  };
  await restored('opened from the address');
  await page.reload();
  await page.waitForSelector('body[data-ready="true"]');
  await restored('after a reload');

  await page.getByRole('button', { name: 'Close' }).click();
  await page.locator('#panel').waitFor({ state: 'hidden' });
  t.equal(new URL(page.url()).hash, '#/?option=700ld&open=1', 'closing the panel keeps the filters');
  await page.getByLabel('Heavy-duty access').check();
  await page.waitForURL(/heavy=1/);
  await page.goBack();
  await page.waitForURL((url) => !url.hash.includes('heavy'));
  t.notOk(await page.getByLabel('Heavy-duty access').isChecked(), 'Back: the filter unset');
  await page.goBack();
  await restored('Back to the open station');
  t.same(problems, [], 'no console error, CSP violation or failed request');
});

t.test('"locate me" goes to the user and lists the nearest stations first', { skip }, async (t) => {
  const p = await mapPlatform(t);
  const { page, problems } = await openMap(t, p);
  t.equal(await page.locator('#list-order').textContent(), 'By name', 'by name until a position is known');
  // The user stands in Hamburg: TRUCK is nearest.
  await page.context().grantPermissions(['geolocation'], { origin: p.url });
  await page.context().setGeolocation({ latitude: 53.56, longitude: 10.0 });
  await page.getByRole('button', { name: 'Find my location' }).click();
  await page.locator('#list-order', { hasText: 'Nearest first' }).waitFor();
  t.equal((await listed(page))[0], 'TRUCK', 'the nearest station heads the list');
  t.match(await page.locator('#station-list button[data-hrs-id="TRUCK"]').textContent(), /\d km/, 'with its distance');
  await page.locator('#map[data-idle="true"]').waitFor();
  t.same(problems, [], 'no console error, CSP violation or failed request');
});

t.test('the feed unreadable: the page says so and the map still names its places', { skip }, async (t) => {
  const p = await mapPlatform(t);
  const { page } = await watchedPage(t, p, { expected: /503|Failed to load resource/ });
  await page.route('**/map/v1/stations.geojson', (route) => route.fulfill({ status: 503, contentType: 'application/json', body: '{"detail":"down"}' }));
  await page.goto(`${p.url}/`);
  await page.locator('#connection', { hasText: 'The stations could not be loaded. Retrying…' }).waitFor();
  // The platform's first place tile reads the place data (in slices: seconds on a slow machine).
  await page.waitForSelector('#map[data-places-drawn]', { timeout: 30_000 });
  t.ok(Number(await page.locator('#map').getAttribute('data-places-drawn')) > 0, 'place names drawn without stations');
  t.equal(await page.locator('.maplibregl-marker [data-hrs-id]').count(), 0, 'and no marker');
});

t.test('a link to a station the map does not have says which, in the panel', { skip }, async (t) => {
  const p = await mapPlatform(t);
  const { page, problems } = await openMap(t, p, '#/station/NOPE1');
  await page.locator('#panel[data-state="error"]').waitFor();
  t.equal(await page.locator('#panel .message').textContent(), 'There is no station NOPE1 on this map.', 'no station NOPE1, not "could not be loaded"');
  // The detail's 404 is what the page asked for; nothing else failed.
  t.same(problems.filter((line) => !/NOPE1|404/.test(line)), [], 'no other error');
});

t.test('a keyboard alone reaches a station\'s panel and back', { skip }, async (t) => {
  const p = await mapPlatform(t);
  const { page, problems } = await openMap(t, p);
  await page.keyboard.press('Tab');
  t.equal(await page.evaluate('document.activeElement.textContent'), 'Skip to the station list', 'the first stop: the skip link');
  await page.keyboard.press('Enter');
  // The list's heading, the "Sort by distance" button, then the stations.
  for (let i = 0; i < 3 && (await page.evaluate('document.activeElement.dataset.hrsId')) === undefined; i++) await page.keyboard.press('Tab');
  t.equal(await page.evaluate('document.activeElement.dataset.hrsId'), 'BERLA', 'then the first station of the list');
  await page.keyboard.press('ArrowDown');
  t.equal(await page.evaluate('document.activeElement.dataset.hrsId'), 'CLOSD', 'the arrow keys move through the list');
  await page.keyboard.press('ArrowUp');
  const outline = await page.evaluate(`getComputedStyle(document.activeElement).outlineStyle`);
  t.not(outline, 'none', 'the focus is visible');
  await page.keyboard.press('Enter');
  await page.locator('#panel:not([hidden])').waitFor();
  t.equal(await page.evaluate('document.activeElement.id'), 'panel', 'the panel takes the focus');
  t.match(new URL(page.url()).hash, /^#\/station\/BERLA/, 'the station is in the address');
  await page.keyboard.press('Escape');
  await page.locator('#panel').waitFor({ state: 'hidden' });
  t.equal(await page.evaluate('document.activeElement.dataset.hrsId'), 'BERLA', 'Escape closes it, the focus back on the station');
  // The markers are buttons too, with the station and its value as their name.
  const marker = page.getByRole('button', { name: /^Berlin Airport, Schönefeld: Available$/ });
  await marker.focus();
  await page.keyboard.press('Enter');
  await page.locator('#panel:not([hidden])').waitFor();
  t.match(new URL(page.url()).hash, /^#\/station\/BERLA/, 'a marker opens the panel from the keyboard, on its station');
  t.same(problems, [], 'no console error');
});

/** WCAG contrast ratio of two CSS colours `rgb(r, g, b)`. */
function contrast(a: string, b: string): number {
  const lum = (c: string) => {
    const [r, g, bl] = c.match(/\d+(\.\d+)?/g)!.slice(0, 3).map(Number).map((v) => {
      const s = v / 255;
      return s <= 0.03928 ? s / 12.92 : ((s + 0.055) / 1.055) ** 2.4;
    }) as [number, number, number];
    return 0.2126 * r + 0.7152 * g + 0.0722 * bl;
  };
  const [x, y] = [lum(a), lum(b)].sort((m, n) => n - m) as [number, number];
  return (x + 0.05) / (y + 0.05);
}

t.test('every value\'s letter passes WCAG AA on its marker; axe finds nothing serious; English and German', { skip }, async (t) => {
  const p = await mapPlatform(t);
  const { page, problems } = await openMap(t, p, '#/station/BERLA');
  await page.locator('#panel:not([hidden])').waitFor();
  await page.locator('#panel[data-state="ready"]').waitFor();
  // What the panel showed from the record and the pricing section, now from the driver's view.
  const sections = await page.locator('#panel .panel-section').evaluateAll((nodes) => Object.fromEntries(nodes.map((n) => [n.querySelector('h3')?.textContent, [...n.children].slice(1).map((c) => (c as unknown as { innerText: string }).innerText).join('\n')])));
  t.equal(sections['Prices'], '700 bar, cars: €13.85 per kg', 'the live price, per fuelling option, gross only');
  t.equal(sections['Green hydrogen share'], '350 bar, cars: 50 %', 'the declared green share, per fuelling option');
  t.equal(sections['Certification'], '700 bar, cars: 1 of 1 nozzles certified\n350 bar, cars: 0 of 1 nozzles certified\nAll nozzles: 1 of 2 certified', 'per fuelling option, then in all');
  const colours = await page.evaluate<{ status: string; color: string; background: string }[]>(
    `[...document.querySelectorAll('#legend .badge')].map((b) => ({ status: b.className, color: getComputedStyle(b).color, background: getComputedStyle(b).backgroundColor }))`,
  );
  t.equal(colours.length, 5, 'five values in the legend');
  for (const c of colours) t.ok(contrast(c.color, c.background) >= 4.5, `${c.status}: ${contrast(c.color, c.background).toFixed(2)} ≥ 4.5`);
  t.same(await seriousViolations(page), [], 'axe: no serious or critical violation, desktop');
  await screenshot(page, 'map-desktop-en');

  const de = await openMap(t, p, '#/station/BERLA', { locale: 'de-DE' });
  await de.page.locator('#panel:not([hidden])').waitFor();
  t.equal(await de.page.evaluate('document.documentElement.lang'), 'de', 'German from the browser\'s language');
  t.equal(await de.page.title(), 'Wasserstoff-Tankstellenkarte');
  t.equal(await de.page.locator('.maplibregl-marker [data-hrs-id="BERLA"]').textContent(), 'V', 'the letters are the language\'s');
  t.same(await seriousViolations(de.page), [], 'axe: no serious or critical violation in German');
  await screenshot(de.page, 'map-desktop-de');
  await de.page.locator('#language').selectOption('en');
  await de.page.getByRole('heading', { name: 'Hydrogen station map' }).waitFor();
  t.equal(await de.page.evaluate('document.documentElement.lang'), 'en', 'the switch changes the language');
  t.equal(await de.page.locator('.maplibregl-marker [data-hrs-id="BERLA"]').textContent(), 'A', 'and the markers');
  t.same([...problems, ...de.problems], [], 'no console error');
});

t.test('on a phone (390 px) nothing scrolls sideways: map, list and the bottom sheet', { skip }, async (t) => {
  const p = await mapPlatform(t);
  for (const locale of ['en', 'de']) {
    const { page, problems } = await openMap(t, p, '', { phone: true, locale });
    t.equal(await overflow(page), 0, `${locale}: the map, no horizontal scroll`);
    t.ok(await page.locator('#map').isVisible(), `${locale}: the map shows`);
    await page.locator('#show-list').click();
    await page.locator('#station-list').waitFor();
    t.notOk(await page.locator('#map').isVisible(), `${locale}: the list instead of the map`);
    t.equal(await overflow(page), 0, `${locale}: the list, no horizontal scroll`);
    t.same(await seriousViolations(page), [], `${locale}: axe on the list`);
    await page.locator('#station-list button[data-hrs-id="BERLA"]').click();
    await page.locator('#panel:not([hidden])').waitFor();
    t.equal(await overflow(page), 0, `${locale}: the station's sheet, no horizontal scroll`);
    await page.locator('#panel-close').click();
    await page.locator('#show-map').click();
    await page.locator('#station-list').waitFor({ state: 'hidden' });
    await page.locator('.maplibregl-marker [data-hrs-id="BERLA"]').click();
    await page.locator('#panel:not([hidden])').waitFor();
    t.equal(await overflow(page), 0, `${locale}: a marker's sheet over the map, no horizontal scroll`);
    t.same(await seriousViolations(page), [], `${locale}: axe with the sheet open`);
    await screenshot(page, `map-phone-${locale}`);
    t.same(problems, [], `${locale}: no console error`);
  }
});

t.test('MAP_STYLE_URL: the deployment\'s style replaces the built-in basemap, admitted by the page\'s policy', { skip }, async (t) => {
  // A style host of the deployment's own (another origin than the service's), serving one style.
  const { createServer } = await import('node:http');
  const served: string[] = [];
  const host = createServer((req, res) => {
    served.push(req.url ?? '');
    const style = { version: 8, sources: {}, layers: [{ id: 'paper', type: 'background', paint: { 'background-color': '#fafaf5' } }] };
    res.writeHead(200, { 'Content-Type': 'application/json', 'Access-Control-Allow-Origin': '*' }).end(JSON.stringify(style));
  });
  await new Promise<void>((resolve) => host.listen(0, '127.0.0.1', resolve));
  t.teardown(() => new Promise<void>((resolve) => host.close(() => resolve())));
  const styleUrl = `http://127.0.0.1:${(host.address() as { port: number }).port}/styles/site/style.json`;

  const p = await startTestPlatform(t, { env: { ...ENV, MAP_STYLE_URL: styleUrl }, fixture: mapFixture() });
  const { page, problems, requested } = await openMap(t, p);
  const expected = expectedFor(await feed(p), {});
  t.same(await markersAre(page, expected), expected, 'the markers over the deployment\'s style');
  await page.waitForSelector('#map[data-idle="true"]');
  t.same(served, ['/styles/site/style.json'], 'the style was read from its host');
  t.notOk(requested.some((url) => url.endsWith('/map/v1/basemap.geojson')), 'the built-in basemap was not');
  t.same(problems, [], 'no CSP violation, no console error');
});
