/**
 * The admin's walk-through, from the demo's banner: the dashboard's address and admin token taken from
 * what `hrs demo` prints, the stations and their states seen, an originator's view opened. And the
 * "For developers" page (`/developers/`, linked from the map at `/`) as a newcomer meets it: its links
 * lead to the portal, the dashboard and an API reference. At a desktop's and a phone's width, with no page error, console error or horizontal scroll,
 * and axe-core on the "For developers" page (no violation at all) and the dashboard (no serious or critical one).
 * Screenshots: docs/walkthrough-admin-{desktop,phone}.png (with UPDATE_DOCS_SCREENSHOT=1).
 */
import t from 'tap';
import { skipWithoutChromium, screenshot } from '../helpers/portal-browser.js';
import { startDemo, type DemoProcess } from '../helpers/demo-process.js';
import { closeWalkBrowser, control, demoStations, openAt, overflow, seriousViolations, WIDTHS } from '../helpers/walkthrough.js';
import { AxeBuilder } from '@axe-core/playwright';

t.teardown(closeWalkBrowser);

/** One demo for the file, started by its first test. */
let running: Promise<DemoProcess> | undefined;
const theDemo = () => (running ??= startDemo(t));

/** The states a station's row can say it is in. */
const STATE = /\b(available|limited|unavailable|unknown|closed)\b/i;

for (const width of WIDTHS) {
  t.test(`admin at ${width.name} width: the dashboard with the banner's token, every station's state, an originator's view`, { skip: skipWithoutChromium }, async (t) => {
    const d = await theDemo();
    const { page, problems } = await openAt(t, width, `walkthrough-admin-${width.name}`);
    await page.goto(d.banner.dashboard);
    await page.getByRole('textbox', { name: /token/i }).waitFor();
    t.same(await seriousViolations(page), [], `the dashboard's sign-in has no serious or critical accessibility violation (${width.name})`);
    await page.getByRole('textbox', { name: /token/i }).fill(d.banner.adminToken);
    await page.getByRole('button', { name: 'Connect' }).click();
    await page.getByRole('status').filter({ hasText: /connected/i }).first().waitFor();

    const stations = await demoStations(d);
    t.ok(stations.length > 0, `the demo publishes ${stations.length} stations`);
    for (const station of stations) {
      const row = page.getByRole('row', { name: new RegExp(`^${station.hrs_id}\\b`) });
      await row.first().waitFor();
      const header = await row.first().getByRole('rowheader').first().innerText();
      t.match(header, STATE, `${station.hrs_id} is shown with its state`);
    }
    t.equal(await overflow(page), 0, 'the stations fit the width (no horizontal scroll)');
    t.same(await seriousViolations(page), [], `the connected dashboard has no serious or critical accessibility violation (${width.name})`);

    const show = control(page, /call log of/i);
    const originator = /call log of (\S+)/i.exec((await show.getAttribute('aria-label')) ?? (await show.textContent()) ?? '')?.[1] ?? '';
    await show.click();
    const heading = page.getByRole('heading', { name: new RegExp(`call log of ${originator}`, 'i') });
    await heading.waitFor();
    t.match(((await heading.textContent()) ?? '').trim(), /call log of \S/i, `the originator ${originator}'s call log opens`);
    t.not(originator, '', 'an originator named');
    t.equal(await overflow(page), 0, 'no horizontal scroll');
    await screenshot(page, `walkthrough-admin-${width.name}`);
    t.same(problems, [], 'no page error, console error or CSP violation on the way');
  });
}

for (const width of WIDTHS) {
  t.test(`the "For developers" page at ${width.name} width leads to the portal, the dashboard and an API reference`, { skip: skipWithoutChromium }, async (t) => {
    const d = await theDemo();
    const { page, problems } = await openAt(t, width, `walkthrough-index-${width.name}`);
    await page.goto(`${d.banner.base}/developers/`);
    await page.getByRole('heading', { level: 1, name: /HRS signal platform/ }).waitFor();
    t.equal(await page.evaluate<number>('document.documentElement.clientWidth'), width.viewport.width, 'laid out at the device\'s width');
    t.equal(await overflow(page), 0, 'no horizontal scroll');
    const axe = await new AxeBuilder({ page }).withTags(['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa', 'best-practice']).analyze();
    t.same(axe.violations.map((v) => `${v.id} (${v.impact}): ${v.nodes.map((n) => n.target.join(' ')).join(', ')}`), [], 'no accessibility violation at all');

    await page.getByRole('link', { name: /^Portal:/ }).click();
    await page.getByRole('heading', { name: 'Sign in' }).waitFor();
    t.equal(new URL(page.url()).pathname, '/portal/', 'the portal link opens the portal\'s sign-in');

    await page.goBack();
    await page.getByRole('link', { name: /dashboard/i }).click();
    await page.getByRole('heading', { level: 1, name: /dashboard/i }).waitFor();
    t.equal(new URL(page.url()).pathname, '/admin/', 'the dashboard link opens the dashboard');

    await page.goBack();
    await page.getByRole('link', { name: /^Export API v2/ }).click();
    await page.getByRole('heading', { name: /Export API v2/ }).first().waitFor();
    t.equal(new URL(page.url()).pathname, '/v2/doc/', 'the reference link opens the export v2 reference');
    t.same(problems, [], 'no page error, console error or CSP violation on the way');
  });
}

t.test('the demo stops on SIGTERM, with status 0', async (t) => {
  const d = await theDemo();
  t.same(await d.stop(), { code: 0, signal: null });
});
