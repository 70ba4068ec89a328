/**
 * Accessibility of the portal's views, checked by axe-core in a headless Chromium against the real
 * API: the sign-in page, a token owner's tokens, staff's stations list and an open station, a
 * manager's originator, and the service's index page, at 1280 and 390 px wide. No serious or critical
 * violation.
 */
import t from 'tap';
import { AxeBuilder } from '@axe-core/playwright';
import { chromium, type Page } from 'playwright-core';
import { publishHistory, startTestPlatform } from '../helpers/platform.js';
import { ACCOUNTS, grantPortalRoles, portalFixture } from '../helpers/portal.js';
import { CHROMIUM, closeBrowser, openPortalAs, skipWithoutChromium } from '../helpers/portal-browser.js';

const skip = skipWithoutChromium;
t.teardown(closeBrowser);

const WIDTHS = [1280, 390];

/** The serious and critical violations axe finds on the page as it is, each with the elements it names. */
async function violations(page: Page): Promise<string[]> {
  const result = await new AxeBuilder({ page }).analyze();
  return result.violations
    .filter((v) => v.impact === 'serious' || v.impact === 'critical')
    .map((v) => `${v.impact} ${v.id}: ${v.help} (${v.nodes.map((n) => n.target.join(' ')).slice(0, 5).join('; ')})`);
}

t.test('the portal\'s views: no serious or critical violation at 1280 and 390 px', { skip }, async (t) => {
  const p = await startTestPlatform(t, { fixture: portalFixture() });
  await publishHistory(p);
  await grantPortalRoles(p);

  const browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox'], headless: true });
  t.teardown(() => browser.close());
  const context = await browser.newContext({ locale: 'en-GB', timezoneId: 'Europe/Berlin' });
  t.teardown(() => context.close());
  const signIn = await context.newPage();
  const owner = await openPortalAs(t, p, ACCOUNTS.none);
  const staff = await openPortalAs(t, p, ACCOUNTS.staff);
  const manager = await openPortalAs(t, p, ACCOUNTS.manager);

  for (const width of WIDTHS) {
    const size = { width, height: 900 };
    await signIn.setViewportSize(size);
    await signIn.goto(`${p.url}/portal/`);
    await signIn.locator('#view-sign-in').waitFor({ state: 'visible' });
    t.same(await violations(signIn), [], `sign-in page at ${width} px`);

    await owner.page.setViewportSize(size);
    await owner.page.goto(`${p.url}/portal/#/tokens`);
    await owner.page.locator('#token-rows tr').first().waitFor();
    t.same(await violations(owner.page), [], `tokens at ${width} px`);

    await staff.page.setViewportSize(size);
    await staff.page.goto(`${p.url}/portal/#/stations`);
    await staff.page.locator('#station-list button').first().waitFor();
    t.same(await violations(staff.page), [], `stations list at ${width} px`);
    await staff.page.goto(`${p.url}/portal/#/stations/BERLA/record`);
    await staff.page.locator('#pane-record').waitFor({ state: 'visible' });
    t.same(await violations(staff.page), [], `a station's record at ${width} px`);

    await manager.page.setViewportSize(size);
    await manager.page.goto(`${p.url}/portal/#/originators/mon-1`);
    await manager.page.locator('#call-rows li').first().waitFor();
    t.same(await violations(manager.page), [], `an originator at ${width} px`);

    await signIn.goto(`${p.url}/developers/`);
    await signIn.locator('h1').waitFor();
    t.same(await violations(signIn), [], `the "For developers" page at ${width} px`);
  }

  // The check finds what it looks for: an image with no text alternative on the sign-in page.
  await signIn.goto(`${p.url}/portal/`);
  await signIn.locator('#view-sign-in').waitFor({ state: 'visible' });
  await signIn.evaluate(() => {
    const doc = (globalThis as any).document;
    const img = doc.createElement('img');
    img.src = '/favicon.svg';
    doc.getElementById('sign-in-title').after(img);
  });
  t.match((await violations(signIn)).join('\n'), /critical image-alt/, 'an image without alt text is found');
});
