/**
 * The originator manager's walk-through, from the demo's banner: the manager's address taken from what
 * `hrs demo` prints, a sign-in by the e-mailed link, their originator opened (its reliability, a
 * station's timeline, its call log), an import token created and used on import v2. At a desktop's and a
 * phone's width, with no page error, console error or horizontal scroll on the way. Screenshots:
 * docs/walkthrough-manager-{desktop,phone}.png (with UPDATE_DOCS_SCREENSHOT=1).
 */
import t from 'tap';
import { skipWithoutChromium, screenshot } from '../helpers/portal-browser.js';
import { startDemo, type DemoProcess } from '../helpers/demo-process.js';
import { closeWalkBrowser, control, openAt, overflow, signInByMail, WIDTHS } from '../helpers/walkthrough.js';

t.teardown(closeWalkBrowser);

/** One demo for the file, started by its first test. */
let running: Promise<DemoProcess> | undefined;
const theDemo = () => (running ??= startDemo(t));

for (const width of WIDTHS) {
  t.test(`originator manager at ${width.name} width: reliability, timeline and call log, then an import token`, { skip: skipWithoutChromium }, async (t) => {
    const d = await theDemo();
    const email = d.banner.accounts.manager;
    const { page, problems } = await openAt(t, width, `walkthrough-manager-${width.name}`);
    await signInByMail(page, d, email);

    await control(page, 'Originators').click();
    const list = page.getByRole('navigation', { name: 'Originators' });
    await list.getByRole('listitem').first().waitFor();
    // The manager's own originator: the one named like their address's domain (demo-monitoring for
    // manager@demo-monitoring.example), else the first listed.
    const domain = email.split('@')[1]!.split('.')[0]!;
    const own = control(list, new RegExp(`\\(${domain}\\)`));
    const entry = (await own.count()) > 0 ? own : control(list.getByRole('listitem').first(), /\S/);
    const originator = ((await entry.textContent()) ?? '').trim();
    await entry.click();
    const heading = page.getByRole('heading', { level: 2, name: originator });
    await heading.waitFor();
    const title = ((await heading.textContent()) ?? '').trim();
    t.equal(title.slice(0, originator.length), originator, `the originator "${originator}" opens (${title})`);

    await page.getByRole('heading', { name: 'Reliability' }).first().waitFor();
    t.ok(await page.getByRole('heading', { name: /call log/i }).first().isVisible(), 'its API call log is shown');
    t.equal(await overflow(page), 0, 'the originator\'s view fits the width (no horizontal scroll)');
    await control(page, /^Signals of /).click();
    await page.getByRole('heading', { name: 'Timeline' }).waitFor();
    const timeline = page.getByRole('img', { name: /^Timeline/ });
    await timeline.waitFor();
    t.ok((await timeline.locator('rect, path, line, polyline').count()) > 0, 'a station\'s timeline is drawn, with a text alternative');
    const shares = page.getByRole('row', { name: /fresh \/ stale \/ unknown/i }).first();
    await shares.waitFor();
    t.match(await shares.locator('td').first().textContent(), /^(\d+\.\d %|—) \/ (\d+\.\d %|—) \/ (\d+\.\d %|—)$/, 'and its reliability figures');

    const name = `walk-through ${width.name}`;
    await page.getByLabel('API', { exact: true }).selectOption({ label: 'Import v2' });
    await page.getByLabel('Token name').fill(name);
    await page.getByRole('button', { name: 'Create token' }).click();
    const shown = page.getByLabel('Token value').filter({ visible: true });
    await shown.waitFor();
    const value = ((await shown.textContent()) ?? '').trim();
    t.ok(value.length >= 20, 'the import token\'s value is shown once');
    const res = await fetch(`${d.banner.base}/import/v2/active-stations/`, { headers: { Authorization: `Bearer ${value}` } });
    t.equal(res.status, 200, 'the new token works on import v2');
    const listed = page.getByRole('row', { name: new RegExp(name) });
    await listed.waitFor();
    t.match(await listed.textContent(), /Import v2/i, 'the token is listed with the originator\'s tokens, for import v2');

    t.equal(await overflow(page), 0, 'no horizontal scroll');
    await screenshot(page, `walkthrough-manager-${width.name}`);
    t.same(problems, [], 'no page error, console error or CSP violation on the way');
  });
}

t.test('the demo stops on SIGTERM, with status 0', async (t) => {
  const d = await theDemo();
  t.same(await d.stop(), { code: 0, signal: null });
});
