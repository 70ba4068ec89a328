/**
 * The portal page's addresses, in a headless Chromium against the real API: every view has its own
 * (`/portal/#/stations/BERLA/layout`), Back and Forward move between views, a reload returns to the
 * view; staff land on their stations, originator managers on their originators, token owners on their
 * tokens; an address the account may not open is corrected to its landing view; Back from a token's
 * value drops it and opens the view before; on a phone, choosing
 * a station scrolls to it; an address opened while signed out is opened after signing in with the
 * e-mailed link, in another tab. No script error, CSP violation or console error.
 */
import t from 'tap';
import type { Page } from 'playwright-core';
import { chromium } from 'playwright-core';
import { hashSecret, newSecret } from '../../src/api/secrets.js';
import { publishHistory, startTestPlatform, type TestPlatform } from '../helpers/platform.js';
import { ACCOUNTS, grantPortalRoles, portalFixture } from '../helpers/portal.js';
import { CHROMIUM, closeBrowser, openPortalAs, screenshot, skipWithoutChromium } from '../helpers/portal-browser.js';

const skip = skipWithoutChromium;
t.teardown(closeBrowser);

/** The address's fragment once it is `hash`. */
const hashIs = (page: Page, hash: string) => page.waitForFunction((wanted) => (globalThis as any).location.hash === wanted, hash);
const visible = (page: Page, selector: string) => page.locator(selector).waitFor({ state: 'visible' });
const hidden = (page: Page, selector: string) => page.locator(selector).waitFor({ state: 'hidden' });
/** Which of the station's panes shows. */
const pane = (page: Page) => page.evaluate(() => [...(globalThis as any).document.querySelectorAll('#station-detail .pane')].filter((p: any) => !p.hidden).map((p: any) => p.id).join(','));

/** The portal's registry; `more` stations of north-h2 besides (a long list on a phone). */
async function platform(t: Parameters<typeof startTestPlatform>[0], more = 0): Promise<TestPlatform> {
  const fixture = portalFixture();
  const kiel = fixture.stations.find((s) => s.hrs_id === 'KIELX')!;
  for (let i = 0; i < more; i++) {
    const id = `NRD${String.fromCharCode(65 + i)}${String.fromCharCode(65 + i)}`;
    fixture.stations.push({ ...kiel, hrs_id: id, name: `North station ${i + 1}` });
  }
  const p = await startTestPlatform(t, { fixture });
  await publishHistory(p); // the figures the pages show (503 before the history worker's first run)
  await grantPortalRoles(p);
  return p;
}

t.test('staff: an address per view, Back and Forward, a reload returns to the view', { skip }, async (t) => {
  const p = await platform(t);
  const { page, problems } = await openPortalAs(t, p, ACCOUNTS.staff);
  await hashIs(page, '#/stations');
  await visible(page, '#ws-stations');
  t.ok(await page.locator('#view-tokens').isHidden(), 'staff land on their stations, not on the tokens');
  t.equal(await page.getByRole('button', { name: 'Stations', exact: true }).getAttribute('aria-pressed'), 'true');

  await page.locator('#station-list button', { hasText: 'BERLA' }).click();
  await hashIs(page, '#/stations/BERLA');
  await visible(page, '#pane-record');
  await page.getByRole('button', { name: 'Layout', exact: true }).click();
  await hashIs(page, '#/stations/BERLA/layout');
  await page.getByRole('button', { name: 'Events', exact: true }).click();
  await hashIs(page, '#/stations/BERLA/events');
  t.equal(await page.title(), 'Events · BERLA · Stations · HRS portal', 'the title names the view');

  await page.goBack();
  await hashIs(page, '#/stations/BERLA/layout');
  await visible(page, '#pane-layout');
  t.equal(await pane(page), 'pane-layout', 'Back: the layout again');
  await page.goBack();
  await hashIs(page, '#/stations/BERLA');
  await visible(page, '#pane-record');
  await page.goBack();
  await hashIs(page, '#/stations');
  await hidden(page, '#station-detail');
  t.equal(await page.locator('#station-list [aria-current]').count(), 0, 'no station marked open');
  await page.goForward();
  await hashIs(page, '#/stations/BERLA');
  await visible(page, '#station-detail');
  await page.goForward();
  await hashIs(page, '#/stations/BERLA/layout');
  await visible(page, '#pane-layout');

  await page.reload();
  await visible(page, '#pane-layout');
  t.equal(new URL(page.url()).hash, '#/stations/BERLA/layout', 'a reload keeps the address');
  t.equal(await page.locator('#station-title').textContent(), 'BERLA · Berlin Airport', 'and opens its view');
  t.equal(await page.locator('#station-list button[aria-current="true"] .pick-label').textContent(), 'BERLA · Berlin Airport', 'the station marked open in the list');

  await page.getByRole('button', { name: 'API tokens', exact: true }).click();
  await hashIs(page, '#/tokens');
  await visible(page, '#view-tokens');
  t.ok(await page.locator('#ws-stations').isHidden(), 'the tokens alone');
  await page.goBack();
  await hashIs(page, '#/stations/BERLA/layout');
  await visible(page, '#ws-stations');
  t.ok(await page.locator('#view-tokens').isHidden(), 'Back: the stations again');

  // "Skip to content" moves the focus to the content; the address keeps the view.
  await page.locator('.skip-link').focus();
  await page.keyboard.press('Enter');
  await page.waitForFunction(() => (globalThis as any).document.activeElement?.id === 'main');
  t.equal(new URL(page.url()).hash, '#/stations/BERLA/layout', 'the skip link leaves the address as it is');

  // A link to another station's pane, opened in the page.
  await page.goto(`${p.url}/portal/#/stations/HAMBG/audit`);
  await visible(page, '#pane-audit');
  t.equal(await page.locator('#station-title').textContent(), 'HAMBG · Hamburg Port');
  // What the account may not open: its landing view instead, the address corrected.
  await page.goto(`${p.url}/portal/#/originators/mon-1`);
  await hashIs(page, '#/stations');
  await visible(page, '#ws-stations');
  t.ok(await page.locator('#ws-originators').isHidden(), 'no originators for staff');
  await page.goto(`${p.url}/portal/#/nowhere`);
  await hashIs(page, '#/stations');
  t.same(problems, [], 'no script error, CSP violation or console error');
});

t.test('managers land on their originators, token owners on their tokens; both keep their address on reload', { skip }, async (t) => {
  const p = await platform(t);
  const manager = await openPortalAs(t, p, ACCOUNTS.manager);
  await hashIs(manager.page, '#/originators');
  await visible(manager.page, '#ws-originators');
  await manager.page.locator('#originator-list button', { hasText: 'mon-1' }).click();
  await hashIs(manager.page, '#/originators/mon-1');
  await visible(manager.page, '#originator-detail');
  await manager.page.reload();
  await visible(manager.page, '#originator-detail');
  t.equal(new URL(manager.page.url()).hash, '#/originators/mon-1');
  t.match(await manager.page.locator('#originator-title').textContent(), /^Monitoring One \(mon-1\)/);
  await manager.page.goto(`${p.url}/portal/#/stations`);
  await hashIs(manager.page, '#/originators');
  t.same(manager.problems, [], 'manager: no error');

  const owner = await openPortalAs(t, p, ACCOUNTS.none);
  await hashIs(owner.page, '#/tokens');
  t.ok(await owner.page.locator('#view-tokens').isVisible(), 'a token owner on the tokens');
  t.same(await owner.page.locator('#workspaces .tab:visible').allTextContents(), ['API tokens', 'Webhooks'], 'with the webhooks beside, no other tab');
  await owner.page.goto(`${p.url}/portal/#/stations/BERLA`);
  await hashIs(owner.page, '#/tokens');
  t.same(owner.problems, [], 'token owner: no error');
});

t.test('a token\'s value on show, left by Back: the value gone, the view before it open', { skip }, async (t) => {
  const p = await platform(t);
  const { page, problems } = await openPortalAs(t, p, ACCOUNTS.staff);
  await hashIs(page, '#/stations');
  await page.getByRole('button', { name: 'API tokens', exact: true }).click();
  await hashIs(page, '#/tokens');
  await page.locator('#create-name').fill('routing test');
  await page.getByRole('button', { name: 'Create token' }).click();
  await visible(page, '#view-created');
  t.match(await page.locator('#token-value').textContent(), /^hrs_/, 'the value shown');
  await page.goBack();
  await hashIs(page, '#/stations');
  await visible(page, '#ws-stations');
  t.ok(await page.locator('#view-created').isHidden(), 'the value\'s view left');
  t.equal(await page.locator('#token-value').textContent(), '', 'the value dropped from the page');
  t.ok(await page.locator('#view-tokens').isHidden(), 'the stations alone');
  await page.goForward();
  await hashIs(page, '#/tokens');
  await visible(page, '#view-tokens');
  t.equal(await page.locator('#token-rows .token-name', { hasText: 'routing test' }).count(), 1, 'the token listed');
  t.same(problems, [], 'no error');
});

t.test('on a phone, choosing a station scrolls to it', { skip }, async (t) => {
  const p = await platform(t, 16);
  const { page, problems } = await openPortalAs(t, p, ACCOUNTS.admin);
  await page.setViewportSize({ width: 390, height: 844 });
  await page.getByRole('button', { name: 'Stations', exact: true }).click();
  await page.locator('#station-list button', { hasText: 'NRDPP' }).waitFor();
  // The first station, at the top of a list that reaches below the screen: its view opens below the list.
  const first = page.locator('#station-list button').first();
  const list = await page.locator('#station-list').boundingBox();
  t.ok(list && list.y + list.height > 844, `the list reaches below the screen (to ${list && list.y + list.height})`);
  t.equal(await page.evaluate(() => (globalThis as any).scrollY), 0, 'not scrolled yet');
  await first.click();
  await page.waitForFunction(() => (globalThis as any).document.activeElement?.id === 'station-title');
  const box = await page.locator('#station-title').boundingBox();
  t.ok(box && box.y >= 0 && box.y + box.height <= 844, `the station's title is in view (at ${box?.y})`);
  t.ok(await page.evaluate(() => (globalThis as any).scrollY > 0), 'the page scrolled to it');
  t.equal(await page.evaluate(() => (globalThis as any).document.documentElement.scrollWidth), 390, 'no sideways scrolling');
  await screenshot(page, 'portal-phone-station');
  t.same(problems, [], 'no error');
});

t.test('an address opened while signed out is opened after signing in from the e-mailed link', { skip }, async (t) => {
  const p = await platform(t);
  const browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox'], headless: true });
  t.teardown(() => browser.close());
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 }, locale: 'en-GB', timezoneId: 'Europe/Berlin' });
  const problems: string[] = [];
  const watch = (page: Page) => {
    page.on('pageerror', (err) => problems.push(`page error: ${err.message}`));
    page.on('console', (message) => {
      if (message.type() === 'error') problems.push(message.text());
    });
  };
  const first = await context.newPage();
  watch(first);
  await first.goto(`${p.url}/portal/#/stations/HAMBG/layout`);
  await visible(first, '#view-sign-in');
  t.equal(new URL(first.url()).hash, '#/stations/HAMBG/layout', 'the address stays while signing in');

  // The link as e-mailed, opened in a tab of its own.
  const secret = newSecret();
  await p.sql`INSERT INTO sign_in_links (hash, user_id, expires_at) VALUES (${hashSecret(secret)}, ${ACCOUNTS.staff}, clock_timestamp() + interval '15 minutes')`;
  const second = await context.newPage();
  watch(second);
  await second.goto(`${p.url}/portal/#sign-in=${secret}`);
  await visible(second, '#view-link');
  await second.getByRole('button', { name: 'Sign in', exact: true }).click();
  await hashIs(second, '#/stations/HAMBG/layout').catch(async (err: Error) => {
    // What the page shows instead (the view, its messages, what this browser kept), so a failure says why.
    const state = await second.evaluate(() => {
      const doc = (globalThis as any).document;
      return {
        view: doc.body.dataset.view,
        hash: (globalThis as any).location.hash,
        messages: [...doc.querySelectorAll('[role=status], [role=alert], .message')].map((el: any) => el.textContent.trim()).filter(Boolean),
        kept: (globalThis as any).localStorage.getItem('hrs-portal:return'),
      };
    });
    throw new Error(`${err.message}; the page: ${JSON.stringify(state)}; problems: ${JSON.stringify(problems)}`);
  });
  await visible(second, '#pane-layout');
  t.equal(await second.locator('#station-title').textContent(), 'HAMBG · Hamburg Port', 'the view asked for before signing in');

  // Once used, the address is not opened again: signing out and in lands on the stations.
  await second.getByRole('button', { name: 'Sign out' }).click();
  await visible(second, '#view-sign-in');
  t.equal(new URL(second.url()).hash, '', 'signed out: no view in the address');
  const again = newSecret();
  await p.sql`INSERT INTO sign_in_links (hash, user_id, expires_at) VALUES (${hashSecret(again)}, ${ACCOUNTS.staff}, clock_timestamp() + interval '15 minutes')`;
  await second.goto(`${p.url}/portal/#sign-in=${again}`);
  await second.getByRole('button', { name: 'Sign in', exact: true }).click();
  await hashIs(second, '#/stations');
  t.same(problems, [], 'no error: the probe answers 200 when signed out');
});
