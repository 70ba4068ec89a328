/**
 * A station's signals, timeline and reliability on the portal page, in a headless Chromium against the
 * real API and the history jobs: 17 hours of availability readings every 10 minutes with a two-hour gap
 * and the silence after them, one refused call in the call log. Operator staff open BERLA's "Signals"
 * pane: the last signals, the chart's bands exactly as the API's intervals (gaps marked), the refused
 * call as a tick, the reliability table, the 7-day toggle; an originator manager sees the same for the
 * station mon-1 reports on, and mon-1's figures with its error rate. No script error, no CSP violation.
 * Screenshots go to test/output/; with UPDATE_DOCS_SCREENSHOT=1 also to docs/ (portal-timeline.png,
 * portal-originator-reliability.png).
 */
import t from 'tap';
import { storeTransmissions, type StoredTransmission } from '../../db/queries/signals.js';
import { freshnessPolicies } from '../../src/domain/categories/index.js';
import { materialize, rollUpHours } from '../../workers/history/jobs.js';
import { startTestPlatform, type TestPlatform } from '../helpers/platform.js';
import { ACCOUNTS, grantPortalRoles, portalFixture, signedIn } from '../helpers/portal.js';
import { closeBrowser, openPortalAs, screenshot, skipWithoutChromium } from '../helpers/portal-browser.js';
import { until } from '../helpers/wait.js';

const skip = skipWithoutChromium;
const MIN = 60_000;
const HOUR = 60 * MIN;
t.teardown(closeBrowser);
const openAs = openPortalAs;

/** Readings every 10 minutes over 17 hours from `h0`, none in the two hours after h0 + 6 h. */
async function history(p: TestPlatform, h0: number): Promise<void> {
  const rows: StoredTransmission[] = [];
  for (let at = h0; at <= h0 + 17 * HOUR; at += 10 * MIN) {
    if (at > h0 + 6 * HOUR && at < h0 + 8 * HOUR) continue;
    rows.push({
      originatorId: 'mon-1', hrsId: 'BERLA', category: 'availability', state: 'live',
      measuredAt: new Date(at), receivedAt: new Date(at + 1000), transmissionId: null,
      payload: { station: { maintenance: false, limitedly_available: false }, nozzles: [{ id: 'N1', available: true }, { id: 'N2', available: false }] },
    });
  }
  await storeTransmissions(p.sql, rows);
  await p.sql`INSERT INTO call_logs (originator_id, request_time, endpoint, station_ids, status, request_body, response_body, request_id)
    VALUES ('mon-1', ${new Date(h0 + 9 * HOUR)}, 'POST /import/v2/signal/availability/', '{BERLA}', 400, '[]', '[{"nozzles":["Unknown nozzle"]}]', 'r-1')`;
  await p.sql`INSERT INTO originator_call_stats (originator_id, hour, calls, rejected, last_call_at, last_rejected_at)
    VALUES ('mon-1', ${new Date(h0 + 9 * HOUR)}, 10, 1, ${new Date(h0 + 9 * HOUR)}, ${new Date(h0 + 9 * HOUR)})`;
  const jobs = {
    sql: p.sql,
    stations: () => p.parts.registry,
    policies: freshnessPolicies({ staleAfterMs: 5 * MIN, unknownAfterMs: 30 * MIN, pricingStaleAfterMs: 25 * HOUR }),
    lagMs: 0,
    retentionDays: 400,
  };
  await p.sql`INSERT INTO history_progress (name, until) VALUES ('materialized', ${new Date(h0 - 1)})`;
  await materialize(jobs);
  await rollUpHours(jobs);
}

t.test('operator staff and an originator manager see the timeline and the reliability', { skip }, async (t) => {
  const p = await startTestPlatform(t, { fixture: portalFixture() });
  await grantPortalRoles(p);
  const h0 = Math.floor(Date.now() / HOUR) * HOUR - 20 * HOUR;
  await history(p, h0);
  const api = await signedIn(p, ACCOUNTS.staff);
  const timeline = (await api.call('GET', '/portal/v1/stations/BERLA/timeline?period=24h')).body;

  const { page, problems } = await openAs(t, p, ACCOUNTS.staff);
  await page.getByRole('button', { name: 'Stations', exact: true }).click();
  await page.locator('#station-list button', { hasText: 'BERLA' }).click();
  await page.getByRole('button', { name: 'Signals', exact: true }).click();
  await page.locator('#pane-signals svg.timeline').waitFor();

  t.match(await page.locator('#pane-signals .signals-table tbody tr').first().textContent(), /availability.*mon-1.*live/, 'the last signal, its originator and assignment');
  for (const [series, list] of [['availability', timeline.categories.availability], ['700ld', timeline.fuelling_options['700ld']], ['350ld', timeline.fuelling_options['350ld']]] as const) {
    const drawn = await page.locator(`#pane-signals rect.band[data-series="${series}"]`).evaluateAll((rects) => rects.map((r) => [r.getAttribute('data-state'), r.getAttribute('data-from'), r.getAttribute('data-to')]));
    t.same(drawn, (list as { state: string; from: string; to: string }[]).map((i) => [i.state, i.from, i.to]), `${series}: a band per interval of the API, in order`);
  }
  const gaps = page.locator('#pane-signals rect.gap[data-series="availability"]');
  t.equal(await gaps.count(), 2, 'both gaps marked: the two hours without readings and the silence since');
  t.equal(await gaps.first().getAttribute('data-from'), new Date(h0 + 6 * HOUR + 30 * MIN).toISOString(), 'the first from 30 minutes after the last reading');
  t.equal(await page.locator('#pane-signals rect[data-series="350ld"][data-state="UNAVAILABLE"]').count() > 0, true, '350ld drawn unavailable');
  const tick = page.locator('#pane-signals line.rejected-call');
  t.equal(await tick.count(), 1, 'the refused call is a tick');
  t.match(await tick.locator('title').textContent(), /400 · POST \/import\/v2\/signal\/availability\/ · mon-1/, 'with its status, endpoint and originator');
  t.match(await page.locator('#pane-signals svg.timeline').getAttribute('aria-label'), /Availability: \d+ intervals, 2 gaps/, 'a text alternative');
  // The station's own clock, whatever the browser's (Europe/Berlin here): BERLA has no zone and no coordinates, so UTC.
  t.match(await page.locator('#pane-signals .timeline-chart p.muted').textContent(), /^Times in UTC \(the station has no time zone\); up to \d{4}-\d\d-\d\d \d\d:\d\d UTC\.$/, 'the time zone named');
  t.match(await page.locator('#pane-signals .signals-table tbody tr td[data-label="Received"]').first().textContent(), / UTC$/, 'the signals on the same clock');
  const record = (await api.call('GET', '/portal/v1/stations/BERLA')).body;
  // Saved as a client saves it: a 503 (the instance's database deadline passed while the machine ran
  // other tests' services too) is sent again after its Retry-After (PUT is idempotent).
  const put = () => api.call('PUT', '/portal/v1/stations/BERLA', { ...record, time_zone: 'Europe/Helsinki' });
  let saved = await put();
  for (let i = 0; i < 3 && saved.status === 503; i++) {
    t.comment(`PUT answered 503 (${JSON.stringify(saved.body)}): sent again`);
    await new Promise((resolve) => setTimeout(resolve, Math.min(2000, 1000 * Number(saved.headers.get('retry-after') ?? 1))));
    saved = await put();
  }
  t.equal(saved.status, 200, 'the time zone saved');
  await until('the signals on the new time zone', async () => ((await api.call('GET', '/portal/v1/stations/BERLA/signals')).body.time_zone === 'Europe/Helsinki' ? true : undefined));
  await page.getByRole('button', { name: 'Record', exact: true }).click();
  await page.getByRole('button', { name: 'Signals', exact: true }).click();
  await page.locator('#pane-signals .timeline-chart p.muted', { hasText: 'Helsinki' }).waitFor();
  t.match(await page.locator('#pane-signals .timeline-chart p.muted').textContent(), /^Times in Europe\/Helsinki, the station's time zone \(UTC\+02:00\); up to .* UTC\+02:00\.$/, 'given a zone, its clock, named');
  t.match(await page.locator('#pane-signals .signals-table tbody tr td[data-label="Received"]').first().textContent(), / UTC\+02:00$/, 'the signals on it too');

  const figures = page.locator('#pane-signals .figures-table');
  await figures.waitFor();
  t.same(await figures.locator('thead th').allTextContents(), ['', '24 hours', '7 days', '30 days']);
  const reliability = (await api.call('GET', '/portal/v1/stations/BERLA/reliability?period=24h')).body;
  // The silence since the last reading (h0 + 17 h) lasts to the end of the figures' last whole hour.
  const longest = ((Date.parse(reliability.to) - (h0 + 17 * HOUR)) / HOUR).toFixed(1);
  t.equal(await figures.locator('tr[data-figure="availability-gaps"] td').first().textContent(), `2 (${longest} h, ongoing)`, 'gaps: two, the longest the silence since, lasting');
  t.match(await figures.locator('tr[data-figure="availability-readings"] td').first().textContent(), /^\d+$/, 'readings counted');
  t.equal(
    await figures.locator('tr[data-figure="option-700ld"] td').first().textContent(),
    `${(reliability.fuelling_options.find((o: { fuelling_option: string }) => o.fuelling_option === '700ld').available_share_of_opening_hours * 100).toFixed(1)} %`,
    '700ld: its share of the opening hours available, as the API computes it',
  );
  await screenshot(page, 'portal-timeline');

  await page.getByRole('button', { name: 'Last 7 days' }).click();
  const week = page.locator('#pane-signals svg.timeline[data-period="7d"]');
  await week.waitFor();
  t.ok((await week.locator('rect, path, line, polyline').count()) > 0, 'the 7-day timeline, drawn');
  t.same(problems, [], 'no script errors, no CSP violations');
});

t.test('an originator manager: its figures, and the signals of a station it reports on', { skip }, async (t) => {
  const p = await startTestPlatform(t, { fixture: portalFixture() });
  await grantPortalRoles(p);
  const h0 = Math.floor(Date.now() / HOUR) * HOUR - 20 * HOUR;
  await history(p, h0);
  const { page, problems } = await openAs(t, p, ACCOUNTS.manager);
  await page.getByRole('button', { name: 'Originators', exact: true }).click();
  await page.locator('#originator-list button').first().click();
  await page.locator('#originator-figures tr[data-figure="error-rate"]').waitFor();
  t.equal(await page.locator('#originator-figures tr[data-figure="error-rate"] td').textContent(), '1 of 10 · 10.0 %', 'refused calls and the error rate');
  t.match(await page.locator('#originator-figures tr[data-figure="availability"] td').textContent(), /fresh \d+\.\d % · stale .* · 2 gaps/, 'its shares over the stations');
  await page.getByRole('button', { name: 'Signals of BERLA' }).click();
  await page.locator('#reported-signals svg.timeline').waitFor();
  t.equal(await page.locator('#reported-signals rect.gap[data-series="availability"]').count(), 2, 'the same timeline');
  await page.locator('#reported-signals .figures-table').waitFor();
  await screenshot(page, 'portal-originator-reliability');
  t.same(problems, [], 'no script errors, no CSP violations');
});
