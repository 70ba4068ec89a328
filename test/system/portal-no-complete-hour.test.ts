/**
 * Reliability before a complete hour counts (src/browser/portal/timeline.js, registry.js): a fresh
 * platform has figures only per complete hour, so a station whose signals all came in the hour under
 * way, or a history not published yet (503), would read 100 % unknown or an error. The portal says
 * instead that no complete hour counts yet and when the first one ends, for operator staff (a
 * station's Signals pane) and for an originator manager (its figures); with a complete hour of signals
 * the figures come back.
 */
import t from 'tap';
import { storeTransmissions } from '../../db/queries/signals.js';
import { publishHistory, startTestPlatform, type TestPlatform } from '../helpers/platform.js';
import { ACCOUNTS, grantPortalRoles, portalFixture, signedIn } from '../helpers/portal.js';
import { closeBrowser, openPortalAs, skipWithoutChromium } from '../helpers/portal-browser.js';

const skip = skipWithoutChromium;
const HOUR = 3_600_000;
t.teardown(closeBrowser);

async function reading(p: TestPlatform, at: number): Promise<void> {
  await storeTransmissions(p.sql, [{
    originatorId: 'mon-1', hrsId: 'BERLA', category: 'availability', state: 'live',
    measuredAt: new Date(at), receivedAt: new Date(at + 500), transmissionId: null,
    payload: { station: { maintenance: false, limitedly_available: false }, nozzles: [{ id: 'N1', available: true }, { id: 'N2', available: true }] },
  }]);
}

async function openSignals(t: Parameters<typeof openPortalAs>[0], p: TestPlatform) {
  const opened = await openPortalAs(t, p, ACCOUNTS.staff, /503/);
  const { page } = opened;
  await page.getByRole('button', { name: 'Stations', exact: true }).click();
  await page.locator('#station-list button', { hasText: 'BERLA' }).click();
  await page.getByRole('button', { name: 'Signals', exact: true }).click();
  return opened;
}

/** A time of day on a clock: the browser's (Europe/Berlin) by default, BERLA's (it has no zone: UTC) when asked. */
const hhmm = (ms: number, timeZone = 'Europe/Berlin') => new Intl.DateTimeFormat('en-GB', { hour: '2-digit', minute: '2-digit', hourCycle: 'h23', timeZone }).format(ms);

t.test('signals only in the hour under way: no complete hour yet, and when the first ends', { skip }, async (t) => {
  const p = await startTestPlatform(t, { fixture: portalFixture() });
  await grantPortalRoles(p);
  await reading(p, Date.now() - 1000);
  await publishHistory(p);
  const api = await signedIn(p, ACCOUNTS.staff);
  const figures = (await api.call('GET', '/portal/v1/stations/BERLA/reliability?period=24h')).body;
  t.equal(figures.categories.availability.shares.unknown, 1, 'the API: all unknown (no reading before the last complete hour)');
  const ends = Date.parse(figures.to) + HOUR;

  const { page, problems } = await openSignals(t, p);
  const note = page.locator('#pane-signals .timeline-figures .no-complete-hour');
  await note.waitFor();
  t.equal(
    await note.textContent(),
    `No complete hour yet: reliability is counted per complete hour, the first one ends at ${hhmm(ends, 'UTC')} (UTC).`,
    'says so, with the end of the hour under way on the station\'s clock (BERLA has no zone: UTC)',
  );
  t.equal(await note.getAttribute('data-ends'), new Date(ends).toISOString());
  t.equal(await page.locator('#pane-signals .figures-table').count(), 0, 'no table of 100 % unknown');
  t.notMatch(await page.locator('#pane-signals .timeline-figures').textContent(), /100\.0 %|0\.0 %/, 'no percentage');
  const timeline = page.locator('#pane-signals svg.timeline');
  await timeline.waitFor();
  t.ok((await timeline.locator('rect, path, line, polyline').count()) > 0, 'the timeline is still drawn');
  t.same(problems, [], 'no script errors, no CSP violations');

  const manager = await openPortalAs(t, p, ACCOUNTS.manager);
  await manager.page.getByRole('button', { name: 'Originators', exact: true }).click();
  await manager.page.locator('#originator-list button').first().click();
  const own = manager.page.locator('#originator-figures .no-complete-hour');
  await own.waitFor();
  t.match(await own.textContent(), `the first one ends at ${hhmm(ends)} (UTC+01:00)`, 'the originator\'s figures (many stations: an account\'s thing) on the viewer\'s clock');
  t.same(manager.problems, [], 'no script errors for the manager');
});

t.test('nothing published yet: no complete hour yet instead of an error', { skip }, async (t) => {
  const p = await startTestPlatform(t, { fixture: portalFixture() });
  await grantPortalRoles(p);
  await reading(p, Date.now() - 1000);
  const before = Math.floor(Date.now() / HOUR) * HOUR + HOUR;
  const { page, problems } = await openSignals(t, p);
  const note = page.locator('#pane-signals .timeline-figures .no-complete-hour');
  await note.waitFor();
  const after = Math.floor(Date.now() / HOUR) * HOUR + HOUR;
  t.ok([before, after].map((ms) => new Date(ms).toISOString()).includes((await note.getAttribute('data-ends'))!), 'the first hour ends at the next full hour');
  t.match(await note.textContent(), /^No complete hour yet: reliability is counted per complete hour, the first one ends at \d\d:00 \(UTC\)\.$/);
  t.equal(await page.locator('#pane-signals .message[data-kind="error"]:not([hidden])').count(), 0, 'no error');
  t.match(await page.locator('#pane-signals .timeline-chart .no-timeline').textContent(), /^No timeline yet/, 'the timeline says it has nothing yet');
  t.same(problems.filter((x) => !/reliability/.test(x)), [], 'no script errors, no CSP violations');
});

t.test('with a complete hour of signals, the figures', { skip }, async (t) => {
  const p = await startTestPlatform(t, { fixture: portalFixture() });
  await grantPortalRoles(p);
  const h0 = Math.floor(Date.now() / HOUR) * HOUR - 2 * HOUR;
  for (let at = h0; at < Date.now() - 60_000; at += 4 * 60_000) await reading(p, at);
  await publishHistory(p);
  const { page, problems } = await openSignals(t, p);
  await page.locator('#pane-signals .figures-table').waitFor();
  t.equal(await page.locator('#pane-signals .no-complete-hour').count(), 0, 'no note');
  t.match(await page.locator('#pane-signals tr[data-figure="availability-shares"] td').first().textContent(), /^\d+\.\d %/, 'the shares');
  t.same(problems, [], 'no script errors, no CSP violations');
});
