/**
 * The driver's walk-through of the public map, from the demo's banner: the map's address and its feed
 * taken from what `hrs demo` prints, the demo's stations seen as markers (a cluster counted by its size)
 * and list entries saying each station's value in words, as the feed has it; 700 bar for cars and
 * "Available now" chosen, the list and the markers narrowed to what the feed says; a city searched, a
 * station opened from the list with the keyboard and its panel read (operator, address, the value per
 * fuelling option with its reason, the week's opening hours, directions); the page switched to German.
 * At a desktop's and a phone's width, with no page error, console error or horizontal scroll, and axe-core
 * finding no serious or critical violation. The demo's signals keep coming while the driver looks: every
 * comparison with the feed reads both again until they agree (the page is live), within a bound.
 * Screenshots: docs/walkthrough-driver-{desktop,phone}.png (with UPDATE_DOCS_SCREENSHOT=1).
 */
import { isDeepStrictEqual } from 'node:util';
import t from 'tap';
import type { Page } from 'playwright-core';
import { skipWithoutChromium, screenshot } from '../helpers/portal-browser.js';
import { startDemo, type DemoProcess } from '../helpers/demo-process.js';
import { until } from '../helpers/wait.js';
import { closeWalkBrowser, control, openAt, overflow, seriousViolations, WIDTHS } from '../helpers/walkthrough.js';

t.teardown(closeWalkBrowser);

/** One demo for the file, started by its first test. */
let running: Promise<DemoProcess> | undefined;
const theDemo = () => (running ??= startDemo(t));

interface Entry { fuelling_option: string; status: string; reason: string; datetime: string | null }
interface Feature {
  geometry: { coordinates: [number, number] };
  properties: { hrs_id: string; name: string; operator: string | null; city: string | null; postcode: string | null; country: string | null; fuelling_options: Entry[] };
}

/** The words a driver reads, written here apart from the page's catalogues. */
const STATE_WORDS: Record<string, string> = { AVAILABLE: 'Available', LIMITEDLY_AVAILABLE: 'Limitedly available', UNAVAILABLE: 'Unavailable', UNKNOWN: 'Unknown', CLOSED: 'Closed' };
const GERMAN_STATE_WORDS: Record<string, string> = { AVAILABLE: 'Verfügbar', LIMITEDLY_AVAILABLE: 'Eingeschränkt verfügbar', UNAVAILABLE: 'Nicht verfügbar', UNKNOWN: 'Unbekannt', CLOSED: 'Geschlossen' };
const OPTION_WORDS: Record<string, string> = { '700ld': '700 bar, cars', '350ld': '350 bar, cars', '700hd': '700 bar, trucks and buses', '350hd': '350 bar, trucks and buses' };
const REASON_WORDS: Record<string, string> = {
  outside_opening_hours: 'outside opening hours',
  maintenance: 'maintenance',
  limited: 'limited service reported',
  not_reported: 'not reported by the station',
  reported_unavailable: 'reported unavailable',
  reported_available: 'reported available',
};
/** A reason in words, the no-signal time left out (it grows while the driver reads). */
const reasonExpected = (e: Entry) => (e.reason === 'no_signal' ? (e.datetime ? 'no signal for …' : 'no signal received') : REASON_WORDS[e.reason] ?? `(no words for ${e.reason})`);
const reasonSeen = (text: string) => text.replace(/^no signal for \d+ (minutes?|hours?|days?)$/, 'no signal for …');

const RANK = ['AVAILABLE', 'LIMITEDLY_AVAILABLE', 'UNAVAILABLE', 'UNKNOWN', 'CLOSED'];
/** A station's value for the option (null: it lacks the option); with none, its best option's. */
const valueFor = (f: Feature, option = ''): string | null =>
  option
    ? f.properties.fuelling_options.find((e) => e.fuelling_option === option)?.status ?? null
    : f.properties.fuelling_options.map((e) => e.status).sort((a, b) => RANK.indexOf(a) - RANK.indexOf(b))[0] ?? 'UNKNOWN';

/** The stations the driver should see: hrs_id → value, for an option and "available now". */
function expectedValues(features: Feature[], { option = '', availableNow = false } = {}): Record<string, string> {
  const out: Record<string, string> = {};
  for (const f of features) {
    const value = valueFor(f, option);
    if (value === null || (availableNow && value !== 'AVAILABLE' && value !== 'LIMITEDLY_AVAILABLE')) continue;
    out[f.properties.hrs_id] = value;
  }
  return out;
}

const readFeed = async (url: string): Promise<Feature[]> => ((await (await fetch(url)).json()) as { features: Feature[] }).features;

/**
 * Reads the feed and the page until what the page shows is what the feed says (a signal may land between
 * the two reads; the page follows within a second), for up to 20 s; the last pair read.
 */
async function agreeing<T>(feedUrl: string, read: (features: Feature[]) => Promise<{ seen: T; expected: T }>): Promise<{ seen: T; expected: T }> {
  let last = await read(await readFeed(feedUrl));
  for (let i = 0; i < 40 && !isDeepStrictEqual(last.seen, last.expected); i++) {
    await new Promise((resolve) => setTimeout(resolve, 500));
    last = await read(await readFeed(feedUrl));
  }
  return last;
}

/** What the map's markers show once it has settled: each station marker's value, and the clusters' sizes and available counts. */
async function markers(page: Page): Promise<{ stations: Record<string, string>; clustered: number; clusteredAvailable: number }> {
  // Settled: its basemap, fonts and place tiles read and drawn (up to 30 s: on a slow machine under the
  // suite's load the first settle, with the demo still filling its history, took longer than 15 s).
  await page.locator('#map[data-idle="true"]').waitFor({ timeout: 30_000 });
  return page.evaluate(`(() => {
    const stations = Object.fromEntries([...document.querySelectorAll('.maplibregl-marker [data-hrs-id]')].map((m) => [m.dataset.hrsId, m.dataset.status]));
    const clusters = [...document.querySelectorAll('.maplibregl-marker [data-cluster-id]')];
    return { stations, clustered: clusters.reduce((n, c) => n + Number(c.dataset.count), 0), clusteredAvailable: clusters.reduce((n, c) => n + Number(c.dataset.available), 0) };
  })()`);
}

/** The markers compared with the feed: as many stations as expected (clusters by their size), each marker's value, the available ones counted. */
async function markersAgree(page: Page, feedUrl: string, filters: Parameters<typeof expectedValues>[1] = {}) {
  return agreeing(feedUrl, async (features) => {
    const expected = expectedValues(features, filters);
    const seen = await markers(page);
    const available = Object.values(expected).filter((v) => v === 'AVAILABLE').length;
    return {
      seen: { stations: Object.keys(seen.stations).length + seen.clustered, values: seen.stations, available: Object.values(seen.stations).filter((v) => v === 'AVAILABLE').length + seen.clusteredAvailable },
      expected: { stations: Object.keys(expected).length, values: Object.fromEntries(Object.keys(seen.stations).map((id) => [id, expected[id] ?? 'not expected'])), available },
    };
  });
}

/** The list's entries: hrs_id → what it says under the name (city · value in words). */
const listEntries = (page: Page): Promise<Record<string, string>> =>
  page.evaluate(`Object.fromEntries([...document.querySelectorAll('#station-list button[data-hrs-id]')].map((b) => [b.dataset.hrsId, b.querySelector('.item-meta').textContent]))`);

async function listAgrees(page: Page, feedUrl: string, words: Record<string, string>, filters: Parameters<typeof expectedValues>[1] = {}) {
  await page.locator('#station-list').waitFor();
  return agreeing(feedUrl, async (features) => {
    const expected = expectedValues(features, filters);
    const city = (id: string) => features.find((f) => f.properties.hrs_id === id)?.properties.city;
    return { seen: await listEntries(page), expected: Object.fromEntries(Object.entries(expected).map(([id, value]) => [id, [city(id), words[value]].filter(Boolean).join(' · ')])) };
  });
}

/**
 * How many of the markers (`selector`: stations, clusters) a driver sees: drawn inside the window and
 * on top there, not under the station's panel, the legend or the zoom buttons.
 */
const inSight = (page: Page, selector: string): Promise<number> =>
  page.evaluate(`[...document.querySelectorAll(${JSON.stringify(selector)})].filter((b) => {
    const r = b.getBoundingClientRect();
    return document.elementFromPoint(r.left + r.width / 2, r.top + r.height / 2)?.closest('.maplibregl-marker button') === b;
  }).length`);
const markersInSight = (page: Page) => inSight(page, '.maplibregl-marker button');
/** Whether the open station is in sight: its marker, or (zoomed out) a cluster when it is in one. */
const stationInSight = async (page: Page) =>
  (await inSight(page, '.maplibregl-marker .marker.selected')) > 0 ||
  ((await page.locator('.maplibregl-marker .marker.selected').count()) === 0 && (await inSight(page, '.maplibregl-marker .cluster')) > 0);

for (const width of WIDTHS) {
  t.test(`driver at ${width.name} width: the demo's stations on the map, a fuelling option available now, a station found and read, in German`, { skip: skipWithoutChromium }, async (t) => {
    const d = await theDemo();
    const map = d.banner.map;
    if (!map) throw new Error(`the banner names no public map:\n${d.output()}`);
    t.equal(map.page, `${d.banner.base}/`, 'the banner names the public map at the service\'s root');
    const phone = width.name === 'phone';
    const { page, problems } = await openAt(t, width, `walkthrough-driver-${width.name}`);
    const basemap: number[] = [];
    page.on('response', (res) => {
      if (new URL(res.url()).pathname === '/map/v1/basemap.geojson') basemap.push(res.status());
      else if (res.status() >= 400) problems.push(`${res.status()} ${res.url()}`);
    });
    await page.goto(map.page);
    const features = await readFeed(map.feed);
    t.ok(features.length >= 3, `the feed has the demo's ${features.length} stations`);
    await page.locator('body[data-ready="true"]').waitFor({ state: 'attached' });
    /** On a phone the list is a view of its own, switched to. */
    const showList = () => control(page, 'List').click().then(() => page.locator('#station-list').waitFor());

    // Every station of the feed: on the map (clusters by their size), and in the list with its value in words.
    let markersSeen = await markersAgree(page, map.feed);
    t.same(markersSeen.seen, markersSeen.expected, 'the markers: one per station of the feed (clusters counted by their size), each with the feed\'s value');
    t.same(basemap, [200], 'the built-in basemap was read');
    if (phone) await showList();
    t.ok(await page.getByRole('heading', { name: `${features.length} stations`, exact: true }).isVisible(), `the list's heading counts them: ${features.length} stations`);
    let listSeen = await listAgrees(page, map.feed, STATE_WORDS);
    t.same(listSeen.seen, listSeen.expected, 'the list: every station, its city and its value in words');
    t.same(await seriousViolations(page), [], `the map and its list have no serious or critical accessibility violation (${width.name})`);

    // 700 bar for cars, available now: fewer stations, the value for that option.
    const filters = { option: '700ld', availableNow: true };
    await page.getByLabel('Fuelling option').selectOption('700ld');
    await page.getByLabel('Available now').check();
    await page.waitForURL(/option=700ld&available=1/);
    listSeen = await listAgrees(page, map.feed, STATE_WORDS, filters);
    t.same(listSeen.seen, listSeen.expected, '700 bar for cars, available now: the list as the feed says');
    t.ok(Object.keys(listSeen.expected).length < features.length, `${Object.keys(listSeen.expected).length} of ${features.length} stations`);
    if (phone) await control(page, 'Map').click();
    markersSeen = await markersAgree(page, map.feed, filters);
    t.same(markersSeen.seen, markersSeen.expected, '700 bar for cars, available now: the markers as the feed says');
    await page.getByLabel('Fuelling option').selectOption('');
    await page.getByLabel('Available now').uncheck();

    // A city searched; its station opened from the list with the keyboard.
    if (phone) await showList();
    await page.getByLabel('Search').fill('Hamburg');
    const station = features.find((f) => f.properties.city === 'Hamburg' || f.properties.name.includes('Hamburg'));
    if (!station) throw new Error('the demo has no station in Hamburg');
    const id = station.properties.hrs_id;
    const found = await agreeing(map.feed, async (now) => ({
      seen: Object.keys(await listEntries(page)).sort(),
      expected: now.filter((f) => `${f.properties.name} ${f.properties.city ?? ''}`.toLowerCase().includes('hamburg')).map((f) => f.properties.hrs_id).sort(),
    }));
    t.same(found.seen, found.expected, `"Hamburg" finds the stations named or in Hamburg (${found.expected.join(', ')})`);
    for (let i = 0; i < 15 && (await page.evaluate('document.activeElement?.dataset?.hrsId ?? null')) !== id; i++) await page.keyboard.press('Tab');
    t.equal(await page.evaluate('document.activeElement?.dataset?.hrsId ?? null'), id, 'Tab from the search box reaches the station in the list');
    await page.keyboard.press('Enter');
    const panel = page.getByRole('complementary', { name: station.properties.name });
    await panel.waitFor();
    t.equal(await page.evaluate('document.activeElement.id'), 'panel', 'Enter opens its panel, which takes the focus');
    await panel.getByRole('heading', { name: 'Status now' }).waitFor();

    // The panel, read as a driver: operator, address, the value per option with its reason, the week, directions.
    const detail = (await (await fetch(new URL(`stations/${id}`, map.feed))).json()) as { week: { date: string; intervals: { from: string; to: string }[] }[] };
    const facts = await panel.locator('dl.facts').evaluate((dl) => Object.fromEntries([...dl.querySelectorAll('dt')].map((dt) => [dt.textContent, dt.nextElementSibling?.textContent])));
    t.equal(facts.Operator, station.properties.operator, 'the operator');
    t.ok(station.properties.city && station.properties.country, 'the feed gives the station\'s city and country');
    t.ok(facts.Address?.includes(station.properties.city!) && facts.Address.endsWith(station.properties.country!), `the address, with its city and country: ${facts.Address}`);
    const status = await agreeing(map.feed, async (now) => {
      const options = now.find((f) => f.properties.hrs_id === id)?.properties.fuelling_options ?? [];
      const items = await panel.locator('.status-item').evaluateAll((lis) => lis.map((li) => [li.querySelector('strong')?.textContent, li.querySelector('.status-reason')?.textContent]));
      return {
        seen: items.map(([value, reason]) => [value, reasonSeen(reason ?? '')]).sort(),
        expected: options.map((e) => [`${OPTION_WORDS[e.fuelling_option]}: ${STATE_WORDS[e.status]}`, reasonExpected(e)]).sort(),
      };
    });
    t.same(status.seen, status.expected, `per fuelling option its value and reason in words: ${status.seen.map((s) => s.join(', ')).join('; ')}`);
    const week = await panel.locator('dl.week').evaluate((dl) => [...dl.querySelectorAll('dt')].map((dt) => [dt.textContent, dt.nextElementSibling?.textContent]));
    t.same(
      week.map(([, hours]) => hours),
      detail.week.map((day) => (day.intervals.length === 0 ? 'closed' : day.intervals.map((i) => (i.from === '00:00' && i.to === '24:00' ? 'open 24 hours' : `${i.from}–${i.to}`)).join(', '))),
      'the opening hours of the next seven days',
    );
    const weekday = (date: string) => new Date(`${date}T12:00:00Z`).toLocaleDateString('en-GB', { weekday: 'long', timeZone: 'UTC' });
    t.same(week.map(([day]) => day?.split(' ')[0]), detail.week.map((day) => weekday(day.date)), 'each day named');
    t.match(week[0]?.[0], /\(today\)$/, 'from today');
    const [lon, lat] = station.geometry.coordinates;
    t.match(await panel.getByRole('link', { name: 'Open in a maps app' }).getAttribute('href'), new RegExp(`^geo:${lat},${lon}\\b`), 'directions: a geo: URI for the phone\'s maps app');
    const osm = await panel.getByRole('link', { name: 'Route on OpenStreetMap' }).getAttribute('href');
    t.ok(osm?.startsWith('https://www.openstreetmap.org/') && osm.includes(`${lat}`) && osm.includes(`${lon}`), `and a route on OpenStreetMap to the station (${osm})`);
    t.same(await seriousViolations(page), [], `the station's panel has no serious or critical accessibility violation (${width.name})`);
    t.equal(await overflow(page), 0, 'no horizontal scroll with the panel open');

    // The search cleared, the map shown and zoomed out until other stations are in sight beside the panel.
    await page.getByLabel('Search').fill('');
    if (phone) await control(page, 'Map').click();
    await panel.waitFor();
    await page.locator('.maplibregl-marker .marker.selected').waitFor();
    t.ok(await until('the open station in sight', async () => ((await stationInSight(page)) ? true : undefined), 5000, 100).catch(() => false), 'the open station\'s marker is in sight beside the panel');
    // A phone shows a strip of map above the station's sheet; a desktop the map left of the panel.
    const several = phone ? 3 : 4;
    for (let i = 0; i < 6 && (await markersInSight(page)) < several; i++) {
      await page.getByRole('button', { name: 'Zoom out' }).click();
      await page.locator('#map[data-idle="true"]').waitFor();
    }
    t.ok(await stationInSight(page), 'zoomed out with the buttons, the station stays in sight');
    t.ok((await markersInSight(page)) >= several, `zoomed out, other stations show beside the panel (${several} markers or more)`);
    await page.locator('#connection').waitFor({ state: 'hidden' });
    t.equal(await overflow(page), 0, 'no horizontal scroll on the map with the panel open');
    await screenshot(page, `walkthrough-driver-${width.name}`);

    // In German: the page's, the panel's and the list's words.
    await page.getByLabel('Language', { exact: true }).selectOption('de');
    await page.getByRole('heading', { name: 'Wasserstoff-Tankstellenkarte' }).waitFor();
    t.equal(await page.evaluate('document.documentElement.lang'), 'de', 'lang="de"');
    t.same((await panel.locator('h3').allTextContents()).slice(0, 5), ['Status jetzt', 'Verfügbarkeit in den nächsten 12 Stunden', 'Per E-Mail benachrichtigen', 'Route', 'Öffnungszeiten dieser Woche'], 'the panel\'s sections in German');
    t.equal(await panel.locator('dl.facts dt').first().textContent(), 'Betreiber', 'its facts too');
    const german = await agreeing(map.feed, async (now) => ({
      seen: (await panel.locator('.status-item strong').allTextContents()).map((s) => s.split(': ')[1]).sort(),
      expected: (now.find((f) => f.properties.hrs_id === id)?.properties.fuelling_options ?? []).map((e) => GERMAN_STATE_WORDS[e.status]).sort(),
    }));
    t.same(german.seen, german.expected, `the values in German: ${german.seen.join(', ')}`);
    t.ok(await panel.getByRole('button', { name: 'Schließen' }).isVisible(), 'its Close button');
    if (phone) await control(page, 'Liste').click();
    listSeen = await listAgrees(page, map.feed, GERMAN_STATE_WORDS);
    t.same(listSeen.seen, listSeen.expected, 'the list\'s values in German');
    t.same(await seriousViolations(page), [], `in German, no serious or critical accessibility violation (${width.name})`);
    t.equal(await overflow(page), 0, 'no horizontal scroll in German');
    // An alert by e-mail, asked in German from the panel: the demo prints its confirmation link, whose page turns it on.
    if (!phone) {
      const alertForm = panel.locator('form.alert-form');
      await alertForm.scrollIntoViewIfNeeded();
      const address = `driver-walkthrough-${width.name}@example.org`;
      await alertForm.getByLabel('Ihre E-Mail-Adresse').fill(address);
      const mark = d.output().length;
      await alertForm.getByRole('button', { name: 'Bestätigungslink senden' }).click();
      await alertForm.getByRole('status').filter({ hasText: /Bitte sehen Sie in Ihr Postfach/ }).waitFor({ timeout: 20_000 });
      const printed = await until('the confirmation link in the terminal', () =>
        new RegExp(`alert confirmation link for ${address.replace(/[.]/g, '\\.')}: (\\S+)`).exec(d.output().slice(mark))?.[1], 30_000);
      await page.goto(printed);
      await page.getByRole('button', { name: 'Benachrichtigung einschalten' }).click();
      await page.getByRole('heading', { level: 1, name: 'Ihre Benachrichtigung ist eingeschaltet' }).waitFor();
      t.same(await seriousViolations(page), [], 'the alert\'s confirmed page: no serious or critical accessibility violation');
    }
    t.same(problems, [], 'no page error, console error, CSP violation or failed request on the way');
  });
}

t.test('the demo stops on SIGTERM, with status 0', async (t) => {
  const d = await theDemo();
  t.same(await d.stop(), { code: 0, signal: null });
});
