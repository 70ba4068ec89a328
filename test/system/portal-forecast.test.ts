/**
 * A station's availability forecast in the portal, under its reliability on the "Signals" pane, in a
 * headless Chromium against the real API: weeks of hourly history seeded for BERLA's 700 bar (three
 * days for its 350 bar). Operator staff see per fuelling option the next 12 hours as the API answers
 * them (the hour on the station's clock, a bar, the word, the probability), "not enough history yet"
 * for an option with too little, and the outlook's lines; at a desktop's and a phone's width, no
 * horizontal scroll, axe finds nothing serious, no script error or CSP violation. Before any history is
 * published the pane says there is no forecast yet. An originator manager's view of the station has no
 * forecast. Screenshots to test/output/; with UPDATE_DOCS_SCREENSHOT=1 also to docs/ (portal-forecast.png).
 */
import t from 'tap';
import { AxeBuilder } from '@axe-core/playwright';
import type { Page } from 'playwright-core';
import { forecastSchema } from '../../src/domain/export-v2/forecast.js';
import { seedOf, simulatedHours } from '../../src/domain/forecast/patterns.js';
import { publishHoursUntil, shapedDay, writeOptionHours } from '../helpers/history.js';
import { startTestPlatform, type TestPlatform } from '../helpers/platform.js';
import { ACCOUNTS, grantPortalRoles, portalFixture, signedIn } from '../helpers/portal.js';
import { closeBrowser, openPortalAs, screenshot, skipWithoutChromium } from '../helpers/portal-browser.js';

const skip = skipWithoutChromium;
t.teardown(closeBrowser);
const HOUR = 3_600_000;
const DAY = 24 * HOUR;

/** The portal's fixture, BERLA on Berlin's clock with opening hours closing two of the next 12 hours; with `published`, its weeks of history. */
async function forecastPlatform(t: { teardown(fn: () => unknown): void }, { published = true } = {}): Promise<TestPlatform> {
  const until = Math.floor(Date.now() / HOUR) * HOUR;
  const day = shapedDay('Europe/Berlin', Date.now());
  const fixture = portalFixture();
  const berla = fixture.stations.find((s) => (s as { hrs_id: string }).hrs_id === 'BERLA') as Record<string, unknown>;
  berla.time_zone = 'Europe/Berlin';
  berla.opening_hours = day.openingHours;
  const p = await startTestPlatform(t, { fixture });
  // Drivers' alerts on BERLA's 700 bar: two confirmed waiting for it to come back, one for it to go down, one not confirmed (not counted).
  await p.sql`
    INSERT INTO driver_alerts (email, language, hrs_id, fuelling_option, wants, state, confirm_hash, confirm_until, manage_token, notified_side, confirmed_at, expires_at)
    SELECT 'driver-' || n || '@example.org', 'en', 'BERLA', '700ld', CASE WHEN n = 3 THEN 'down' ELSE 'up' END, 'active', sha256(n::text::bytea), now(), 'manage-' || n, NULL, now(), now() + interval '30 days'
    FROM generate_series(1, 3) AS n`;
  await p.sql`
    INSERT INTO driver_alerts (email, language, hrs_id, fuelling_option, wants, confirm_hash, confirm_until, manage_token)
    VALUES ('pending@example.org', 'en', 'BERLA', '700ld', 'up', sha256('pending'::bytea), now() + interval '1 day', 'manage-pending')`;
  await grantPortalRoles(p);
  if (published) {
    await writeOptionHours(p.sql, 'BERLA', '700ld', day.hours(until - 42 * DAY, until));
    await writeOptionHours(p.sql, 'BERLA', '350ld', simulatedHours({ pattern: 'steady', timeZone: 'Europe/Berlin', from: until - 3 * DAY, to: until, seed: seedOf('BERLA/350ld') }));
    await publishHoursUntil(p.sql, until);
    await p.sql`INSERT INTO history_progress (name, until, changed_at) VALUES ('materialized', ${new Date(until)}, now()) ON CONFLICT (name) DO NOTHING`;
  }
  return p;
}

/** Operator staff's page on BERLA's Signals pane; resolves with the forecast answer the page read. */
async function openSignals(t: { teardown(fn: () => unknown): void }, p: TestPlatform, { phone = false, expected }: { phone?: boolean; expected?: RegExp } = {}) {
  const { page, problems } = await openPortalAs(t, p, ACCOUNTS.staff, expected, { phone });
  const read = page.waitForResponse((res) => new URL(res.url()).pathname === '/portal/v1/stations/BERLA/forecast');
  await page.getByRole('button', { name: 'Stations', exact: true }).click();
  await page.locator('#station-list button', { hasText: 'BERLA' }).click();
  await page.getByRole('button', { name: 'Signals', exact: true }).click();
  const answer = await read;
  return { page, problems, answer };
}

const overflow = (page: Page): Promise<number> => page.evaluate('Math.max(0, document.documentElement.scrollWidth - document.documentElement.clientWidth)');

async function seriousViolations(page: Page): Promise<string[]> {
  const result = await new AxeBuilder({ page }).withTags(['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa', 'best-practice']).analyze();
  return result.violations.filter((v) => v.impact === 'serious' || v.impact === 'critical').map((v) => `${v.id}: ${v.nodes.map((n) => n.target.join(' ')).slice(0, 3).join(', ')}`);
}

for (const width of ['desktop', 'phone'] as const) {
  t.test(`operator staff at a ${width}'s width: the next 12 hours per option under the reliability, too little history said`, { skip }, async (t) => {
    const p = await forecastPlatform(t);
    const phone = width === 'phone';
    const { page, problems, answer } = await openSignals(t, p, { phone });
    t.equal(answer.status(), 200);
    const body = forecastSchema.parse(await answer.json());
    const pane = page.locator('#pane-signals');
    await pane.locator('.forecast[data-state="ready"]').waitFor();
    t.same(await pane.locator('h3').allTextContents(), ['Last signal received', 'Timeline', 'Reliability', 'Availability forecast'], 'the forecast after the reliability');
    t.match(await pane.locator('.timeline-forecast p.muted').first().textContent(), /as drivers see them on the public map.*Hours on the station's clock \(Europe\/Berlin, UTC\+0[12]:00\)\.$/, 'the clock named');
    const lines = await pane.locator('.outlook-lines dt').allTextContents();
    t.same(lines, ['Drivers waiting for e-mail alerts', 'Forecast made', 'History learned from'], 'the outlook\'s lines');
    t.equal(
      await pane.locator('.drivers-waiting dd').textContent(),
      'option 700ld: 2 waiting for it to be available again, 1 for it to go down (counts only: the portal never shows their addresses)',
      'the drivers waiting, counted from the confirmed alerts only',
    );
    const hour = new Intl.DateTimeFormat('en-GB', { hour: '2-digit', minute: '2-digit', hourCycle: 'h23', timeZone: 'Europe/Berlin' });
    const hours = body.fuelling_options.find((o) => o.fuelling_option === '700ld')!.forecast!;
    const rows = await pane.locator('.forecast-option[data-option="700ld"] tbody tr').evaluateAll((trs) =>
      trs.map((tr) => [tr.querySelector('th')!.textContent, tr.querySelector('.forecast-fill')!.className, tr.querySelector('.forecast-word')!.textContent, tr.querySelector('.forecast-probability')!.textContent, tr.getAttribute('data-from')]),
    );
    t.same(rows, hours.map((h, index) => [
      hour.format(new Date(h.from)) + (index === 0 ? ' (now)' : ''),
      `forecast-fill fc-${h.likelihood} fc-p${Math.round(h.probability * 20)}`,
      h.likelihood.replace(/_/g, ' '),
      h.likelihood === 'closed' ? '—' : `${Math.round(h.probability * 100)} %`,
      h.from,
    ]), 'each hour as the API answers it: on Berlin\'s clock, the bar as long as its probability, the word, the probability');
    const words = [...new Set(rows.map((r) => r[2]))];
    t.ok(words.length >= 5 && words.includes('closed'), `the day's shape in words: ${words.join(', ')}`);
    t.match(
      await pane.locator('.forecast-option[data-option="350ld"] .forecast-none').textContent(),
      /^Not enough history yet: \d+ known hours since \d{4}-\d\d-\d\d \d\d:\d\d; a forecast needs 168 over at least 14 days\.$/,
      '350 bar: three days are too little, said plainly',
    );
    t.equal(await overflow(page), 0, 'no horizontal scroll');
    t.same(await seriousViolations(page), [], 'axe: no serious or critical violation');
    if (!phone) {
      await pane.locator('.timeline-forecast').scrollIntoViewIfNeeded();
      await screenshot(page, 'portal-forecast');
    }
    t.same(problems, [], 'no script errors, no CSP violations');
  });
}

t.test('before any history is published the pane says there is no forecast yet; a manager\'s view of the station has none', { skip }, async (t) => {
  const p = await forecastPlatform(t, { published: false });
  // The refusals the page asks for: the history's 503s (reliability, timeline, forecast) before any is published.
  const { page, problems, answer } = await openSignals(t, p, { expected: /status of 503/ });
  t.equal(answer.status(), 503);
  const forecast = page.locator('#pane-signals .forecast[data-state="not_published"]');
  await forecast.waitFor();
  t.equal(await forecast.locator('.no-forecast').textContent(), 'No forecast yet: no hour of status history is published. The history worker publishes each hour within minutes of its end; reload then.');
  t.match(await forecast.locator('.drivers-waiting dd').textContent(), /^option 700ld: 2 waiting/, 'the drivers waiting, said without a forecast too');
  await p.sql`DELETE FROM driver_alerts`;
  await page.reload();
  await page.locator('#pane-signals .forecast[data-state="not_published"] .drivers-waiting').waitFor();
  t.match(await page.locator('#pane-signals .drivers-waiting dd').textContent(), /^none \(counts only/, 'no driver waits: said so');
  t.same(await seriousViolations(page), [], 'axe: nothing serious');
  t.same(problems, [], 'no other script error');

  const manager = await signedIn(p, ACCOUNTS.manager);
  t.equal((await manager.call('GET', '/portal/v1/stations/BERLA/forecast')).status, 403, 'a manager may not read it');
  const other = await openPortalAs(t, p, ACCOUNTS.manager, /status of 503/);
  const asked: string[] = [];
  other.page.on('request', (req) => asked.push(new URL(req.url()).pathname));
  await other.page.getByRole('button', { name: 'Originators', exact: true }).click();
  await other.page.locator('#originator-list button').first().click();
  await other.page.getByRole('button', { name: 'Signals of BERLA' }).click();
  await other.page.locator('#reported-signals .no-complete-hour, #reported-signals .figures-table').first().waitFor();
  t.equal(await other.page.locator('#reported-signals .timeline-forecast').count(), 0, 'the manager\'s view of BERLA: no forecast section');
  t.notOk(asked.some((path) => path.endsWith('/forecast')), 'nor asked for');
  t.same(other.problems, [], 'no other script error');
});
