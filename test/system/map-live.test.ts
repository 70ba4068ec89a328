/**
 * The public map live, in Debian's Chromium against a real platform: a signal posted through import v2
 * turns the station's marker, its list entry and its open panel live, without a reload, and leaves
 * the view where the user put it (how long the turn takes is reported, not asserted: a wall clock in a
 * browser on a busy machine is no speed target);
 * when the service goes away the page says the connection is lost, and when it is back (a restart on
 * the same port) the page says so and is live again.
 */
import t from 'tap';
import type { Page } from 'playwright-core';
import { mapFixture } from '../helpers/map.js';
import { closeBrowser, skipWithoutChromium, watchedPage } from '../helpers/portal-browser.js';
import { freePort, postSignals, publishHistory, startTestPlatform, type TestPlatform } from '../helpers/platform.js';

const skip = skipWithoutChromium;
t.teardown(closeBrowser);
const ago = (seconds: number) => new Date(Date.now() - seconds * 1000).toISOString();
const BERLA_AVAILABLE = { hrs: 'BERLA', station: { maintenance: false, limitedly_available: false }, nozzles: [{ id: 'N1', available: true }, { id: 'N2', available: true }] };
const BERLA_MAINTENANCE = { hrs: 'BERLA', station: { maintenance: true, limitedly_available: false }, nozzles: [{ id: 'N1', available: false }, { id: 'N2', available: false }] };

/** The instant (epoch ms) `check` first holds in the page, polled every 25 ms for at most `ms`. */
async function whenTrue(page: Page, check: string, ms = 5000): Promise<number | null> {
  return (await whenEach(page, [check], ms))[0] ?? null;
}

/**
 * The instants (epoch ms) each of `checks` first holds in the page, all polled together every 25 ms
 * for at most `ms` (null: never held).
 */
async function whenEach(page: Page, checks: string[], ms = 10_000): Promise<(number | null)[]> {
  const start = Date.now();
  const at: (number | null)[] = checks.map(() => null);
  const all = `[${checks.map((c) => `Boolean(${c})`).join(', ')}]`;
  while (Date.now() - start < ms && at.includes(null)) {
    const held = await page.evaluate<boolean[]>(all);
    const now = Date.now();
    held.forEach((h, i) => {
      if (h && at[i] === null) at[i] = now;
    });
    if (at.includes(null)) await page.waitForTimeout(25);
  }
  return at;
}

async function openMap(t: { teardown(fn: () => unknown): void }, p: TestPlatform, hash: string, expected?: RegExp) {
  const { page, problems } = await watchedPage(t, p, expected ? { expected } : {});
  await page.goto(`${p.url}/${hash}`);
  await page.waitForSelector('body[data-ready="true"][data-live="open"]');
  return { page, problems };
}

t.test('a signal through import v2 turns the marker, the list and the open panel live', { skip }, async (t) => {
  const p = await startTestPlatform(t, { env: { MAP_RATE_LIMIT: '100000' }, fixture: mapFixture() });
  await postSignals(p, 'availability', [{ ...BERLA_AVAILABLE, datetime: ago(5) }]);
  await publishHistory(p); // the panel's forecast (503 before the history worker's first run: test/system/map-forecast.test.ts)
  const { page, problems } = await openMap(t, p, '#/station/BERLA');
  await page.waitForSelector('#panel[data-state="ready"] .status-item[data-option="700ld"][data-status="AVAILABLE"]');
  await page.waitForSelector('.maplibregl-marker [data-hrs-id="BERLA"][data-status="AVAILABLE"]');
  const requests: string[] = [];
  page.on('request', (req) => requests.push(req.url()));

  const posted = await postSignals(p, 'availability', [{ ...BERLA_MAINTENANCE, datetime: ago(1) }]);
  const turned = await whenEach(page, [
    `document.querySelector('.maplibregl-marker [data-hrs-id="BERLA"]')?.dataset.status === 'UNAVAILABLE'`,
    `document.querySelector('#panel .status-item[data-option="700ld"]')?.dataset.status === 'UNAVAILABLE'`,
    `document.querySelector('#station-list button[data-hrs-id="BERLA"] .badge')?.classList.contains('state-unavailable')`,
  ]);
  for (const [i, what] of ['the marker', 'the open panel', 'the list'].entries()) {
    const at = turned[i];
    t.ok(at !== null && at !== undefined, `${what} turned${at ? ` (${at - posted} ms after the import's answer)` : ': never, in 10 s'}`);
  }
  t.match(await page.locator('#panel .status-item[data-option="700ld"] .status-reason').textContent(), 'maintenance', 'the reason in words');
  t.notOk(requests.some((url) => url.endsWith('/') || url.includes('/map/v1/stations')), 'no reload, no refetch: the stream carried it');

  // Zoomed out (the zoom buttons beside the open panel) to see the stations around it: a live change
  // leaves the view where the user put it, it does not bring the station close again.
  const inView = `document.querySelectorAll('.maplibregl-marker button').length > 1`;
  for (let i = 0; i < 6 && !(await page.evaluate<boolean>(inView)); i++) {
    await page.getByRole('button', { name: 'Zoom out' }).click();
    await page.waitForSelector('#map[data-idle="true"]');
  }
  t.ok(await page.evaluate<boolean>(inView), 'zoomed out, the stations around it show');
  // Waited for: the marker and the panel to change; asserted: what they changed to.
  const shown = ['.maplibregl-marker [data-hrs-id="BERLA"]', '#panel .status-item[data-option="700ld"]'];
  const before = await Promise.all(shown.map((s) => page.locator(s).getAttribute('data-status')));
  await postSignals(p, 'availability', [{ ...BERLA_AVAILABLE, datetime: ago(0) }]);
  for (const [i, s] of shown.entries()) await page.waitForSelector(`${s}:not([data-status="${before[i]}"])`, { timeout: 10_000 });
  t.same(await Promise.all(shown.map((s) => page.locator(s).getAttribute('data-status'))), ['AVAILABLE', 'AVAILABLE'], `and back to available (from ${before.join(', ')})`);
  await page.waitForTimeout(800);
  await page.waitForSelector('#map[data-idle="true"]');
  t.ok(await page.evaluate<boolean>(inView), 'the view stayed zoomed out');
  t.same(problems, [], 'no console error');
});

t.test('the panel reads its station once while the stream keeps the page drawing, and again after a 503 (the page\'s clock stepped)', { skip }, async (t) => {
  const p = await startTestPlatform(t, { env: { MAP_RATE_LIMIT: '100000' }, fixture: mapFixture() });
  await postSignals(p, 'availability', [{ ...BERLA_AVAILABLE, datetime: ago(30) }]);
  const { page, problems } = await watchedPage(t, p, { expected: /status of 503/ });
  await page.clock.install();
  // The detail's first read answered 503 (Retry-After: 1); the next held until the stream has drawn the page several times.
  const reads: string[] = [];
  let served503: () => void = () => {};
  const refused = new Promise<void>((resolve) => (served503 = resolve));
  let release: () => void = () => {};
  const released = new Promise<void>((resolve) => (release = resolve));
  let held: () => void = () => {};
  const holding = new Promise<void>((resolve) => (held = resolve));
  await page.route('**/map/v1/stations/BERLA', async (route) => {
    reads.push(new Date().toISOString());
    if (reads.length === 1) {
      await route.fulfill({ status: 503, headers: { 'Retry-After': '1' }, contentType: 'application/problem+json', body: '{"title":"Service Unavailable","status":503}' });
      served503();
      return;
    }
    held();
    await released;
    await route.continue();
  });
  await page.goto(`${p.url}/#/station/BERLA`);
  await page.waitForSelector('body[data-ready="true"]', { timeout: 30_000 });
  await refused;
  t.equal(await page.locator('#panel').getAttribute('data-state'), 'loading', 'a 503: still loading, not an error');
  await page.clock.fastForward('00:02');
  // Bounded, so that a page which never reads again fails here rather than at tap's timeout.
  const asked = await Promise.race([holding.then(() => true), new Promise<boolean>((resolve) => setTimeout(() => resolve(false), 15_000))]);
  t.ok(asked, 'read again once its Retry-After was up');
  // Readings that turn the marker each time: every one a stream message, and the page drawn again.
  const marker = page.locator('.maplibregl-marker [data-hrs-id="BERLA"]');
  const turns = [BERLA_MAINTENANCE, BERLA_AVAILABLE, BERLA_MAINTENANCE, BERLA_AVAILABLE, BERLA_MAINTENANCE];
  for (const [i, reading] of turns.entries()) {
    const was = await marker.getAttribute('data-status');
    await postSignals(p, 'availability', [{ ...reading, datetime: ago(turns.length - i) }]);
    await page.waitForSelector(`.maplibregl-marker [data-hrs-id="BERLA"]:not([data-status="${was}"])`, { timeout: 10_000 });
  }
  t.equal(await marker.getAttribute('data-status'), 'UNAVAILABLE', `the stream drew the page ${turns.length} times meanwhile`);
  release();
  await page.locator('#panel[data-state="ready"]').waitFor({ timeout: 15_000 });
  t.equal(reads.length, 2, 'two reads in all: the one refused and the one after its Retry-After, none begun again by a drawing');
  t.equal(await page.locator('#panel .status-item[data-option="700ld"]').getAttribute('data-status'), 'UNAVAILABLE', 'the panel shows the latest status');
  t.same(problems, [], 'no other console error');
});

t.test('the page says when the connection is lost, and when it is back', { skip }, async (t) => {
  const port = await freePort();
  const first = await startTestPlatform(t, { env: { PORT: String(port), MAP_RATE_LIMIT: '100000' }, fixture: mapFixture() });
  // The retries while the service is down fail, as they should: the browser logs each.
  const { page, problems } = await openMap(t, first, '', /WebSocket connection to .* failed|ERR_CONNECTION_REFUSED/);
  await page.waitForSelector('#connection[hidden]', { state: 'attached', timeout: 3000 }).catch(() => {});
  t.ok(await page.locator('#connection').isHidden(), `live: no notice (${await page.locator('#connection').getAttribute('data-kind')}: ${await page.locator('#connection').textContent()})`);
  await page.locator('.maplibregl-marker [data-hrs-id="BERLA"]').waitFor();
  // The page loaded whole (the place names come after the markers): what fails from here is the outage's.
  await page.waitForSelector('#map[data-places-drawn][data-idle="true"]');

  await first.stop('restart');
  await page.waitForSelector('#connection[data-kind="lost"]:not([hidden])');
  t.match(await page.locator('#connection').textContent(), /^Connection lost: reconnecting… The map shows the data as of \d\d:\d\d/, 'the page says so');
  t.ok(await page.locator('.maplibregl-marker [data-hrs-id="BERLA"]').count(), 'the markers stay');

  const second = await startTestPlatform(t, { sameStoreAs: first, port });
  await page.waitForSelector('#connection[data-kind="back"]:not([hidden])', { timeout: 20_000 });
  t.equal(await page.locator('#connection').textContent(), 'Connected again: the map is live.', 'and says when it is back');
  await page.waitForSelector('#connection[hidden]', { state: 'attached', timeout: 10_000 });
  t.ok(await page.locator('#connection').isHidden(), 'the notice goes');
  const marker = page.locator('.maplibregl-marker [data-hrs-id="BERLA"]');
  const was = await marker.getAttribute('data-status');
  await postSignals(second, 'availability', [{ ...BERLA_MAINTENANCE, datetime: ago(0) }]);
  await page.waitForSelector(`.maplibregl-marker [data-hrs-id="BERLA"]:not([data-status="${was}"])`, { timeout: 3000 });
  t.equal(await marker.getAttribute('data-status'), 'UNAVAILABLE', `live again: a signal reaches the marker (it was ${was})`);
  await second.stop('test over');
  t.same(problems, [], 'no other console error');
});

t.test('the page says when the data may be stale: nothing, not even a heartbeat, for a minute', { skip }, async (t) => {
  const p = await startTestPlatform(t, { env: { MAP_RATE_LIMIT: '100000' }, fixture: mapFixture() });
  const { page, problems } = await watchedPage(t, p);
  // The page's clock flows as usual, and can be moved forward: a minute and a half passes at once, while
  // the server's next heartbeat is still up to 25 s away.
  await page.clock.install();
  await page.goto(`${p.url}/`);
  // Polled from here: the page's own timers, which Playwright's waiting would use, are the fake clock's.
  t.ok(await whenTrue(page, `document.body.dataset.ready === 'true' && document.body.dataset.live === 'open'`, 10_000), 'the map is live');
  t.ok(await page.locator('#connection').isHidden(), 'live: no notice');
  await page.clock.fastForward('01:30');
  t.ok(await whenTrue(page, `document.getElementById('connection').dataset.kind === 'stale' && !document.getElementById('connection').hidden`), 'a stale notice');
  t.match(await page.locator('#connection').textContent(), /^The data may be out of date: the last update reached this page 1 minute ago\.$/, 'the page says so');
  await postSignals(p, 'availability', [{ ...BERLA_MAINTENANCE, datetime: ago(0) }]);
  t.ok(await whenTrue(page, `document.getElementById('connection').hidden`), 'a message arrives: the notice goes');
  t.same(problems, [], 'no console error');
});
