/**
 * The station panel's forecast on the public map, in Debian's Chromium against a real platform with
 * weeks of hourly history seeded for BERLA's 700 bar (three days for its 350 bar, none for TRUCK):
 * per fuelling option the next 12 hours as the answer the page read gives them (the hour on the
 * station's clock, a bar as long as the probability, the word in English and German), "not enough
 * history yet" for an option with too little, "no status history has been published" before any is;
 * at a desktop's and a phone's width with no horizontal scroll, axe finds nothing serious, no console
 * error or CSP violation. The forecast is read when the panel opens and again when the station's
 * status changes, at most once a minute: the page's clock is stepped, not waited for. Screenshots to
 * test/output/ and, with UPDATE_DOCS_SCREENSHOT=1, docs/ (map-forecast-desktop.png, map-forecast-phone.png).
 */
import t from 'tap';
import { AxeBuilder } from '@axe-core/playwright';
import type { Page, Response } from 'playwright-core';
import { forecastSchema } from '../../src/domain/export-v2/forecast.js';
import { seedOf, simulatedHours } from '../../src/domain/forecast/patterns.js';
import { mapFixture } from '../helpers/map.js';
import { publishHoursUntil, shapedDay, writeOptionHours } from '../helpers/history.js';
import { closeBrowser, screenshot, skipWithoutChromium, watchedPage } from '../helpers/portal-browser.js';
import { postSignals, startTestPlatform, type TestPlatform } from '../helpers/platform.js';

const skip = skipWithoutChromium;
t.teardown(closeBrowser);
const HOUR = 3_600_000;
const DAY = 24 * HOUR;
const ENV = { MAP_RATE_LIMIT: '100000' };
const ago = (seconds: number) => new Date(Date.now() - seconds * 1000).toISOString();
const BERLA_AVAILABLE = { hrs: 'BERLA', station: { maintenance: false, limitedly_available: false }, nozzles: [{ id: 'N1', available: true }, { id: 'N2', available: true }] };
const BERLA_MAINTENANCE = { hrs: 'BERLA', station: { maintenance: true, limitedly_available: false }, nozzles: [{ id: 'N1', available: false }, { id: 'N2', available: false }] };

/** The words as the issue gives them (the catalogues' are the page's own). */
const WORDS = {
  en: { very_likely: 'very likely', likely: 'likely', uncertain: 'uncertain', unlikely: 'unlikely', very_unlikely: 'very unlikely', closed: 'closed', now: 'now' },
  de: { very_likely: 'sehr wahrscheinlich', likely: 'wahrscheinlich', uncertain: 'ungewiss', unlikely: 'unwahrscheinlich', very_unlikely: 'sehr unwahrscheinlich', closed: 'geschlossen', now: 'jetzt' },
} as const;

/**
 * The map's fixture with weeks of history for BERLA (Europe/Berlin): 700 bar six weeks of a shaped day
 * (every word in the next 12 hours, its opening hours closing two of them), 350 bar three days; BERLA
 * available now.
 */
async function forecastPlatform(t: { teardown(fn: () => unknown): void }, { published = true } = {}): Promise<TestPlatform> {
  const until = Math.floor(Date.now() / HOUR) * HOUR;
  const day = shapedDay('Europe/Berlin', Date.now());
  const fixture = mapFixture();
  (fixture.stations.find((s) => (s as { hrs_id: string }).hrs_id === 'BERLA') as Record<string, unknown>).opening_hours = day.openingHours;
  const p = await startTestPlatform(t, { env: ENV, fixture });
  if (published) {
    await writeOptionHours(p.sql, 'BERLA', '700ld', day.hours(until - 42 * DAY, until));
    await writeOptionHours(p.sql, 'BERLA', '350ld', simulatedHours({ pattern: 'steady', timeZone: 'Europe/Berlin', from: until - 3 * DAY, to: until, seed: seedOf('BERLA/350ld') }));
    await publishHoursUntil(p.sql, until);
  }
  await postSignals(p, 'availability', [{ ...BERLA_AVAILABLE, datetime: ago(2) }]);
  return p;
}

/**
 * The map opened on a station's panel in a watched page; `forecast` resolves with the first forecast
 * answer the page read. `clock`: the page's clock is Playwright's, to be stepped.
 */
async function openPanel(t: { teardown(fn: () => unknown): void }, p: TestPlatform, hrsId: string, screen: { phone?: boolean; locale?: string; clock?: boolean; expected?: RegExp } = {}) {
  const { page, problems } = await watchedPage(t, p, { phone: screen.phone ?? false, ...(screen.expected ? { expected: screen.expected } : {}) });
  if (screen.locale) await page.addInitScript(`Object.defineProperty(navigator, 'languages', { get: () => ['${screen.locale}'] });`);
  if (screen.clock) await page.clock.install();
  const reads: Response[] = [];
  page.on('response', (res) => {
    if (new URL(res.url()).pathname === `/map/v1/stations/${hrsId}/forecast`) reads.push(res);
    else if (res.status() >= 400) problems.push(`${res.status()} ${res.url()}`);
  });
  const first = page.waitForResponse((res) => new URL(res.url()).pathname === `/map/v1/stations/${hrsId}/forecast`);
  await page.goto(`${p.url}/#/station/${hrsId}`);
  // The first page load reads MapLibre and the feed: on a busy machine longer than a click's wait.
  await page.waitForSelector('body[data-ready="true"]', { timeout: 30_000 });
  await page.locator('#panel[data-state="ready"]').waitFor({ timeout: 30_000 });
  const answer = await first;
  return { page, problems, reads, answer };
}

const overflow = (page: Page): Promise<number> => page.evaluate('Math.max(0, document.documentElement.scrollWidth - document.documentElement.clientWidth)');

async function seriousViolations(page: Page): Promise<string[]> {
  const result = await new AxeBuilder({ page }).withTags(['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa', 'best-practice']).analyze();
  return result.violations.filter((v) => v.impact === 'serious' || v.impact === 'critical').map((v) => `${v.id}: ${v.nodes.map((n) => n.target.join(' ')).slice(0, 3).join(', ')}`);
}

/** Each row of an option's table as the page shows it: [hour as read, the bar's class, the word, data-from]. */
const rowsOf = (page: Page, option: string) =>
  page.locator(`#panel .forecast-option[data-option="${option}"] tbody tr`).evaluateAll((rows) =>
    rows.map((row) => [row.querySelector('th')!.textContent, row.querySelector('.forecast-fill')!.className, row.querySelector('.forecast-word')!.textContent, row.getAttribute('data-from')]),
  );

/** The same rows as the answer gives them, in the words of `language`, hours on Berlin's clock. */
function expectedRows(body: ReturnType<typeof forecastSchema.parse>, option: string, language: 'en' | 'de', locale: string) {
  const hour = new Intl.DateTimeFormat(locale, { hour: '2-digit', minute: '2-digit', timeZone: 'Europe/Berlin' });
  const hours = body.fuelling_options.find((o) => o.fuelling_option === option)!.forecast!;
  return hours.map((h, index) => [
    hour.format(new Date(h.from)) + (index === 0 ? ` ${WORDS[language].now}` : ''),
    `forecast-fill fc-${h.likelihood} fc-p${Math.round(h.probability * 20)}`,
    WORDS[language][h.likelihood],
    h.from,
  ]);
}

for (const width of ['desktop', 'phone'] as const) {
  t.test(`at a ${width}'s width: per option the next 12 hours as read, too little history said, no sideways scroll, axe-clean`, { skip }, async (t) => {
    const p = await forecastPlatform(t);
    const phone = width === 'phone';
    const { page, problems, answer } = await openPanel(t, p, 'BERLA', { phone });
    t.equal(answer.status(), 200);
    t.equal(answer.headers()['cache-control'], 'max-age=60');
    const body = forecastSchema.parse(await answer.json());
    const section = page.locator('#panel-forecast');
    await section.locator('.forecast[data-state="ready"]').waitFor({ timeout: 30_000 });
    t.equal(await section.locator('h3').textContent(), 'Availability in the next 12 hours');
    t.equal(await section.locator('.forecast-zone').textContent(), 'Hours on the station\'s clock (Europe/Berlin), forecast from its own status history.', 'the clock the hours are on, named');
    t.same(await section.locator('.forecast-option h4').allTextContents(), ['700 bar, cars', '350 bar, cars'], 'the station\'s options, in the vocabulary\'s order');
    const rows = await rowsOf(page, '700ld');
    t.equal(rows.length, 12, '12 hours');
    t.same(rows, expectedRows(body, '700ld', 'en', 'en-GB'), 'each hour as the answer gives it: on Berlin\'s clock, the bar as long as its probability, its word');
    const words = [...new Set(rows.map((r) => r[2]))];
    t.ok(words.length >= 5 && words.includes('closed'), `the day's shape in words, closed hours among them: ${words.join(', ')}`);
    t.equal(await section.locator('.forecast-option[data-option="700ld"] caption').textContent(), '700 bar, cars: how likely it is available, hour by hour', 'the table named for screen readers');
    t.same(await section.locator('.forecast-option[data-option="700ld"] thead th').allTextContents(), ['Hour', 'Available?']);
    t.equal(await section.locator('.forecast-option[data-option="350ld"] table').count(), 0, '350 bar: no table');
    t.equal(
      await section.locator('.forecast-option[data-option="350ld"] .forecast-none').textContent(),
      'Not enough history yet: a forecast needs two weeks of this option\'s status.',
      '350 bar: three days are too little, said plainly',
    );
    t.equal(await page.locator('.forecast-bar[aria-hidden="true"]').count(), 12, 'the bars are decoration: the words say it');
    t.equal(await overflow(page), 0, 'no horizontal scroll');
    const table = await section.locator('.forecast-option[data-option="700ld"] table').boundingBox();
    const panel = await page.locator('#panel').boundingBox();
    t.ok(table !== null && panel !== null && table.x >= panel.x && table.x + table.width <= panel.x + panel.width + 0.5, `the table fits the panel (${table?.width} of ${panel?.width} px)`);
    t.same(await seriousViolations(page), [], 'axe: no serious or critical violation');
    // The section at the top of the panel, under its sticky head.
    await page.evaluate(`document.getElementById('panel').scrollTop = document.getElementById('panel-forecast').offsetTop - document.querySelector('#panel .panel-head').offsetHeight - 8`);
    await page.waitForSelector('#map[data-idle="true"]');
    await screenshot(page, `map-forecast-${width}`);

    if (!phone) {
      await page.locator('#language').selectOption('de');
      await section.locator('h3', { hasText: 'Verfügbarkeit in den nächsten 12 Stunden' }).waitFor();
      t.same(await rowsOf(page, '700ld'), expectedRows(body, '700ld', 'de', 'de'), 'in German: the words translated, the hours the same (the answer read once)');
      t.equal(await section.locator('.forecast-option[data-option="350ld"] .forecast-none').textContent(), 'Noch zu wenig Verlauf: Eine Vorhersage braucht zwei Wochen Status dieser Option.');
      t.same(await seriousViolations(page), [], 'axe: nothing serious in German');
    }
    t.same(problems, [], 'no console error, CSP violation or failed request');
  });
}

t.test('a station without history, and a platform that has published none yet, say so', { skip }, async (t) => {
  const p = await forecastPlatform(t);
  const truck = await openPanel(t, p, 'TRUCK');
  await truck.page.locator('#panel .forecast[data-state="ready"]').waitFor({ timeout: 30_000 });
  t.same(
    await truck.page.locator('#panel .forecast-option').evaluateAll((parts) => parts.map((x) => [x.getAttribute('data-option'), x.querySelector('.forecast-none')?.textContent, x.querySelectorAll('table').length])),
    ['700ld', '700hd', '350hd'].map((option) => [option, 'Not enough history yet: a forecast needs two weeks of this option\'s status.', 0]),
    'TRUCK: no history at all, each option says there is too little',
  );
  t.same(truck.problems, [], 'no console error');

  const fresh = await forecastPlatform(t, { published: false });
  // The one refusal the page asks for: the forecast's 503 before any history is published (Chromium logs it).
  const none = await openPanel(t, fresh, 'BERLA', { expected: /status of 503/ });
  t.equal(none.answer.status(), 503);
  t.ok(Number(none.answer.headers()['retry-after']) > 0, 'with Retry-After');
  await none.page.locator('#panel .forecast[data-state="not_published"]').waitFor({ timeout: 30_000 });
  t.equal(await none.page.locator('#panel .forecast .forecast-none').textContent(), 'No forecast yet: no status history has been published.', 'said plainly');
  t.equal(await none.page.locator('#panel .status-item[data-option="700ld"]').getAttribute('data-status'), 'AVAILABLE', 'the rest of the panel as ever');
  t.same(await seriousViolations(none.page), [], 'axe: nothing serious');
  t.same(none.problems, [], 'no other console error or failed request');
});

t.test('read when the panel opens and when the station\'s status changes, at most once a minute (the page\'s clock stepped)', { skip }, async (t) => {
  const p = await forecastPlatform(t);
  const { page, problems, reads } = await openPanel(t, p, 'BERLA', { clock: true });
  const option = page.locator('#panel .forecast-option[data-option="700ld"]');
  const statusShown = (status: string) => page.locator(`#panel .status-item[data-option="700ld"][data-status="${status}"]`).waitFor();
  const forecastSays = (status: string) => page.locator(`#panel .forecast-option[data-option="700ld"][data-status="${status}"]`).waitFor();
  await forecastSays('AVAILABLE');
  t.equal(reads.length, 1, 'read once on opening');

  // A change within the minute of that read: the status shows at once, the forecast waits for the minute.
  await postSignals(p, 'availability', [{ ...BERLA_MAINTENANCE, datetime: ago(1) }]);
  await statusShown('UNAVAILABLE');
  await page.locator('#panel[data-forecast-waiting="true"]').waitFor();
  t.equal(reads.length, 1, 'not read again within the minute');
  t.equal(await option.getAttribute('data-status'), 'AVAILABLE', 'the forecast shown is the one read');
  const second = page.waitForResponse((res) => res.url().endsWith('/map/v1/stations/BERLA/forecast'));
  await page.clock.fastForward('01:00');
  t.equal((await second).status(), 200, 'the minute up: read again');
  await forecastSays('UNAVAILABLE');
  t.equal(reads.length, 2, 'once');
  t.equal(await page.locator('#panel[data-forecast-waiting]').count(), 0, 'nothing waits any more');

  // Another change right after: waits again; the minute up, read a third time.
  await postSignals(p, 'availability', [{ ...BERLA_AVAILABLE, datetime: ago(0) }]);
  await statusShown('AVAILABLE');
  await page.locator('#panel[data-forecast-waiting="true"]').waitFor();
  t.equal(reads.length, 2, 'not read within the minute of the last read');
  const third = page.waitForResponse((res) => res.url().endsWith('/map/v1/stations/BERLA/forecast'));
  await page.clock.fastForward('01:00');
  await third;
  await forecastSays('AVAILABLE');

  // A minute without a change: nothing is read (the panel does not poll); the next change is read at once.
  await page.clock.fastForward('01:01');
  t.equal(reads.length, 3, 'no read without a change');
  const fourth = page.waitForResponse((res) => res.url().endsWith('/map/v1/stations/BERLA/forecast'));
  await postSignals(p, 'availability', [{ ...BERLA_MAINTENANCE, datetime: ago(0) }]);
  await statusShown('UNAVAILABLE');
  await fourth;
  await forecastSays('UNAVAILABLE');
  t.equal(reads.length, 4, 'a change over a minute after the last read: read at once');
  t.equal(await page.locator('#panel[data-forecast-waiting]').count(), 0, 'without waiting');

  // Closed: nothing is read for it any more.
  await page.locator('#panel-close').click();
  await page.locator('#panel').waitFor({ state: 'hidden' });
  await postSignals(p, 'availability', [{ ...BERLA_AVAILABLE, datetime: ago(0) }]);
  await page.locator('.maplibregl-marker [data-hrs-id="BERLA"][data-status="AVAILABLE"]').waitFor();
  await page.clock.fastForward('01:01');
  t.equal(reads.length, 4, 'a closed panel reads nothing');
  t.same(problems, [], 'no console error, CSP violation or failed request');
});
