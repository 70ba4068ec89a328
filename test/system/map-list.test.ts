/**
 * The public map with many stations, in Debian's Chromium: the page is given a feed of 450 stations
 * (the platform's own feature for BERLA, copied under other ids and names, spread over Germany; served
 * to the page in place of the platform's feed). The list renders its first 200 stations, the next ones
 * when its end is scrolled near and the rest on End, its count always the whole number; the map says
 * once drawn that its markers stand for every station (`data-stations-drawn`, what the benchmark times).
 */
import t from 'tap';
import type { Page } from 'playwright-core';
import { mapFixture } from '../helpers/map.js';
import { closeBrowser, skipWithoutChromium, watchedPage } from '../helpers/portal-browser.js';
import { startTestPlatform } from '../helpers/platform.js';

const skip = skipWithoutChromium;
t.teardown(closeBrowser);
const STATIONS = 450;

const rendered = (page: Page): Promise<number> => page.evaluate(`document.querySelectorAll('#station-list button').length`);

t.test('450 stations: the list grows as it is read, the map says when all are drawn', { skip }, async (t) => {
  const p = await startTestPlatform(t, { env: { MAP_RATE_LIMIT: '100000' }, fixture: mapFixture() });
  type Feed = { features: { id: string; geometry: { coordinates: number[] }; properties: Record<string, unknown> }[] };
  // The feed settles shortly after the platform starts: read until it has BERLA.
  let feed: Feed = { features: [] };
  for (let i = 0; i < 50 && !feed.features.some((f) => f.id === 'BERLA'); i++) {
    if (i > 0) await new Promise((r) => setTimeout(r, 100));
    feed = (await (await fetch(`${p.url}/map/v1/stations.geojson`)).json()) as Feed;
  }
  const berla = feed.features.find((f) => f.id === 'BERLA');
  if (!berla) throw new Error('the feed never had BERLA');
  const ids = Array.from({ length: STATIONS }, (_, i) => `S${String(i).padStart(4, '0')}`);
  const many = {
    ...feed,
    features: ids.map((id, i) => ({
      ...berla,
      id,
      geometry: { type: 'Point', coordinates: [6 + (i % 30) * 0.3, 47.5 + Math.floor(i / 30) * 0.5] },
      properties: { ...berla.properties, hrs_id: id, name: `Station ${String(i).padStart(4, '0')}` },
    })),
  };
  const { page, problems } = await watchedPage(t, p);
  await page.route('**/map/v1/stations.geojson', (route) => route.fulfill({ status: 200, contentType: 'application/geo+json', body: JSON.stringify(many) }));
  await page.goto(`${p.url}/`);
  await page.waitForSelector('body[data-ready="true"]');

  t.match(await page.locator('#list-count').textContent(), /450/, 'the count is every station');
  t.equal(await rendered(page), 200, 'the first 200 stations are rendered');
  t.same(
    await page.evaluate(`[...document.querySelectorAll('#station-list button')].slice(0, 2).map((b) => b.dataset.hrsId)`),
    ['S0000', 'S0001'],
    'in the list\'s order (by name)',
  );

  await page.evaluate(`document.getElementById('list').scrollTop = document.getElementById('list').scrollHeight`);
  // Polled from here: the page's policy forbids the string evaluation waitForFunction would need.
  for (let i = 0; i < 100 && (await rendered(page)) < 400; i++) await new Promise((r) => setTimeout(r, 50));
  t.equal(await rendered(page), 400, 'scrolled to its end: the next 200');

  await page.locator('#station-list button[data-hrs-id="S0010"]').focus();
  await page.keyboard.press('End');
  t.equal(await rendered(page), STATIONS, 'End: the rest');
  t.equal(await page.evaluate('document.activeElement.dataset.hrsId'), 'S0449', 'and the focus on the last station');
  await page.keyboard.press('ArrowUp');
  t.equal(await page.evaluate('document.activeElement.dataset.hrsId'), 'S0448', 'the arrow keys still move through it');

  const drawn = await page.waitForSelector('#map[data-stations-drawn]', { state: 'attached' });
  t.equal(await drawn.getAttribute('data-stations-drawn'), String(STATIONS), 'the map\'s markers stand for every station');
  t.equal(await page.evaluate(`performance.getEntriesByName('map:stations-drawn').length`), 1, 'its timeline has the mark');
  t.same(problems, [], 'no console error or CSP violation');
});
