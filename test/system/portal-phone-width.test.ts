/**
 * The portal's views on a phone (390 × 844, touch) in a headless Chromium against the real API: the API
 * tokens, the stations list, every tab of an open station, the originators list and an open originator
 * (with import tokens, figures, the stations it reports on, a station's timeline), the webhooks and a
 * webhook's view each fit the width —
 * the page never scrolls sideways (a wide chart may scroll inside its own box) — and no control is
 * covered by another element: each one is what a tap at its centre reaches. "Signals of BERLA" is
 * tapped for real and opens the station's timeline. Screenshots of each view: test/output/portal-*-phone.png.
 */
import t from 'tap';
import { mkdirSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { AxeBuilder } from '@axe-core/playwright';
import type { Page } from 'playwright-core';
import { storeTransmissions } from '../../db/queries/signals.js';
import { publishHistory, startTestPlatform } from '../helpers/platform.js';
import { ACCOUNTS, grantPortalRoles, portalFixture, signedIn } from '../helpers/portal.js';
import { closeBrowser, openPortalAs, skipWithoutChromium } from '../helpers/portal-browser.js';

const skip = skipWithoutChromium;
const OUTPUT = fileURLToPath(new URL('../output/', import.meta.url));
mkdirSync(OUTPUT, { recursive: true });
t.teardown(closeBrowser);

const PANES = ['record', 'layout', 'events', 'photo', 'assignments', 'audit', 'signals'];

/** How far the page is wider than the screen (0: no horizontal scroll). */
const overflow = (page: Page): Promise<number> => page.evaluate('Math.max(0, document.documentElement.scrollWidth - document.documentElement.clientWidth)');

/** The serious and critical axe-core violations, as "rule: elements" lines. */
async function seriousViolations(page: Page): Promise<string[]> {
  const result = await new AxeBuilder({ page }).analyze();
  return result.violations
    .filter((v) => v.impact === 'serious' || v.impact === 'critical')
    .map((v) => `${v.id}: ${v.nodes.map((n) => n.target.join(' ')).slice(0, 3).join(', ')}`);
}

/**
 * The elements that stick out to the right of the screen while their parent does not, as "tag#id.class
 * (right edge)" lines (what widens the page); none inside a box that scrolls or clips.
 */
const sticksOut = (page: Page): Promise<string[]> => page.evaluate(`(() => {
  const edge = document.documentElement.clientWidth + 0.5;
  const out = [];
  for (const el of document.body.querySelectorAll('*')) {
    const right = el.getBoundingClientRect().right;
    if (right <= edge || !el.checkVisibility()) continue;
    const parent = el.parentElement;
    if (parent !== document.body && parent.getBoundingClientRect().right > edge) continue;
    let clipped = false;
    for (let a = parent; a && a !== document.body; a = a.parentElement) if (getComputedStyle(a).overflowX !== 'visible') clipped = true;
    if (!clipped) out.push(el.tagName.toLowerCase() + (el.id ? '#' + el.id : '') + (typeof el.className === 'string' && el.className.trim() ? '.' + el.className.trim().split(/\\s+/).join('.') : '') + ' (' + Math.round(right) + ' px)');
  }
  return out;
})()`);

/**
 * The visible controls in `selector` that a tap at their centre would not reach (another element lies
 * over them), as "control under element" lines; each is scrolled to first, as a finger would.
 */
const covered = (page: Page, selector: string): Promise<string[]> => page.evaluate(`(() => {
  const name = (el) => el ? el.tagName.toLowerCase() + (el.id ? '#' + el.id : '') + (typeof el.className === 'string' && el.className.trim() ? '.' + el.className.trim().split(/\\s+/).join('.') : '') + (el.getAttribute('aria-label') ? ' "' + el.getAttribute('aria-label') + '"' : '') : 'nothing';
  const out = [];
  for (const el of document.querySelectorAll(${JSON.stringify(selector)} + ' :is(button, a[href], input, select, textarea, summary)')) {
    if (!el.checkVisibility({ visibilityProperty: true }) || el.closest('.visually-hidden')) continue; // in a closed <details>, hidden
    el.scrollIntoView({ block: 'center', inline: 'center' });
    const box = el.getBoundingClientRect();
    const hit = document.elementFromPoint(box.left + box.width / 2, box.top + box.height / 2);
    const reached = hit && (el === hit || el.contains(hit) || [...(el.labels || [])].some((label) => label.contains(hit)));
    if (!reached) out.push(name(el) + ' under ' + name(hit));
  }
  scrollTo(0, 0);
  return out;
})()`);

t.test('at 390 px every view fits the width and every control can be tapped', { skip }, async (t) => {
  const p = await startTestPlatform(t, { fixture: portalFixture(), env: { WEBHOOK_SECRET_KEY: randomBytes(32).toString('hex'), WEBHOOK_ALLOW_LOOPBACK: 'true' } });
  await grantPortalRoles(p);
  // Two hours of BERLA's readings (its figures, a table of three periods, and its timeline to show),
  // import tokens with long names (a table of seven columns).
  const hour = 3_600_000;
  for (let at = Math.floor(Date.now() / hour) * hour - 2 * hour; at < Date.now() - 60_000; at += 10 * 60_000) {
    await storeTransmissions(p.sql, [{
      originatorId: 'mon-1', hrsId: 'BERLA', category: 'availability', state: 'live',
      measuredAt: new Date(at), receivedAt: new Date(at + 500), transmissionId: null,
      payload: { station: { maintenance: false, limitedly_available: true }, nozzles: [{ id: 'N1', available: true }, { id: 'N2', available: false }] },
    }]);
  }
  await publishHistory(p);
  const inAMonth = new Date(Date.now() + 30 * 86_400_000).toISOString();
  const admin = await signedIn(p, ACCOUNTS.admin);
  for (const [generation, name] of [['import_v2', 'production gateway of the monitoring'], ['import_v1', 'legacy gateway, kept until the switch']]) {
    const made = await admin.call('POST', '/portal/v1/originators/mon-1/tokens', { generation, name, expires_at: inAMonth });
    if (made.status !== 201) throw new Error(`token: ${made.status} ${JSON.stringify(made.body)}`);
  }

  const { page, problems } = await openPortalAs(t, p, ACCOUNTS.admin, undefined, { phone: true });
  t.equal(await page.evaluate(() => (globalThis as any).innerWidth), 390, 'a phone\'s width');

  const check = async (view: string, scope: string) => {
    t.equal(await overflow(page), 0, `${view}: no horizontal scroll`);
    t.same(await sticksOut(page), [], `${view}: nothing sticks out to the right`);
    t.same(await covered(page, scope), [], `${view}: every control can be tapped (nothing lies over it)`);
    t.same(await seriousViolations(page), [], `${view}: no serious or critical accessibility violation`);
  };

  await page.goto(`${p.url}/portal/#/tokens`);
  await page.locator('#view-tokens').waitFor({ state: 'visible' });
  await check('API tokens', '#view-tokens');

  await page.goto(`${p.url}/portal/#/stations`);
  await page.locator('#station-list button', { hasText: 'BERLA' }).waitFor();
  await check('the stations list', '#ws-stations');

  for (const pane of PANES) {
    await page.goto(`${p.url}/portal/#/stations/BERLA/${pane}`);
    await page.locator(`#pane-${pane}`).waitFor({ state: 'visible' });
    if (pane === 'layout') await page.locator('#layout-form fieldset, #layout-form .part').first().waitFor();
    if (pane === 'assignments') await page.locator('#assignment-rows select').first().waitFor();
    if (pane === 'audit') await page.locator('#audit-rows li').first().waitFor();
    if (pane === 'signals') await page.locator('#pane-signals svg.timeline').waitFor();
    if (pane === 'signals') await page.locator('#pane-signals .figures-table').waitFor();
    await page.waitForTimeout(200); // what the pane asked the API for is laid out
    await check(`BERLA's ${pane} tab`, '#ws-stations');
    if (pane === 'signals') {
      const wrapped = await page.locator('#pane-signals .figures-table td').evaluateAll((cells) => cells
        .filter((cell: any) => cell.getBoundingClientRect().height > 2 * parseFloat((globalThis as any).getComputedStyle(cell).lineHeight))
        .map((cell: any) => cell.textContent));
      t.same(wrapped, [], 'each of its figures reads on one line (a card per figure, each period named)');
    }
    await page.screenshot({ path: `${OUTPUT}portal-station-${pane}-phone.png`, fullPage: true });
  }

  await page.goto(`${p.url}/portal/#/originators`);
  await page.locator('#originator-list button').first().waitFor();
  await check('the originators list', '#ws-originators');

  // mon-2 has no import token: its token table is its column heads alone.
  await page.goto(`${p.url}/portal/#/originators/mon-2`);
  await page.locator('#call-rows li').first().waitFor();
  await page.waitForTimeout(200);
  t.equal(await page.locator('#import-rows tr').count(), 0, 'an originator without import tokens');
  await check('an originator without import tokens', '#ws-originators');

  await page.goto(`${p.url}/portal/#/originators/mon-1`);
  await page.locator('#reported-rows tr', { hasText: 'BERLA' }).waitFor();
  await page.locator('#import-rows tr', { hasText: 'legacy gateway' }).waitFor();
  await page.locator('#originator-figures table, #originator-figures p').first().waitFor();
  await page.locator('#call-rows li').first().waitFor();
  await check('an originator', '#ws-originators');

  await page.getByRole('button', { name: 'Signals of BERLA' }).click({ timeout: 3000 });
  const timeline = page.locator('#reported-signals svg.timeline');
  await timeline.waitFor();
  // Waited for: the timeline's element; asserted: that something is drawn in it.
  t.ok((await timeline.locator('rect, path, line, polyline').count()) > 0, '"Signals of BERLA" is tapped and opens the station\'s timeline, drawn');
  await page.waitForTimeout(200);
  await check('an originator with a station\'s timeline', '#ws-originators');
  await page.screenshot({ path: OUTPUT + 'portal-originator-phone.png', fullPage: true });

  // A webhook with a long address and every kind: the list and its view.
  const hook = await admin.call('POST', '/portal/v1/webhooks', {
    url: 'http://127.0.0.1:9/hrs/receivers/fleet-dashboard/a-rather-long-path-segment-for-a-phone',
    kinds: ['station_status', 'fuelling_options', 'station_records', 'events'],
    hrs_ids: ['BERLA', 'HAMBG'],
    description: 'Fleet dashboard of the north-east depots',
  });
  if (hook.status !== 201) throw new Error(`webhook: ${hook.status} ${JSON.stringify(hook.body)}`);
  await page.goto(`${p.url}/portal/#/webhooks`);
  await page.locator('#webhook-rows tr').first().waitFor();
  await check('the webhooks', '#ws-webhooks');
  await page.goto(`${p.url}/portal/#/webhooks/${hook.body.id}`);
  await page.locator('#webhook-body').waitFor({ state: 'visible' });
  await page.locator('#no-deliveries').waitFor({ state: 'visible' });
  await check('a webhook', '#ws-webhooks');

  t.same(problems, [], 'no page error, console error or CSP violation');
});
