/**
 * The token owner's walk-through, from the demo's banner: the portal's address and the demo user's
 * e-mail address taken from what `hrs demo` prints, a sign-in link asked for and taken from the demo's
 * mail (or terminal), a personal export token created in the portal and used with export v2. At a
 * desktop's and a phone's width, with no page error, console error or horizontal scroll on the way, and
 * the portal's sign-in and tokens views checked with axe-core (no serious or critical violation).
 * Screenshots: docs/walkthrough-token-owner-{desktop,phone}.png (with UPDATE_DOCS_SCREENSHOT=1).
 */
import t from 'tap';
import { skipWithoutChromium, screenshot } from '../helpers/portal-browser.js';
import { startDemo, type DemoProcess } from '../helpers/demo-process.js';
import { closeWalkBrowser, demoStations, openAt, overflow, seriousViolations, signInByMail, WIDTHS } from '../helpers/walkthrough.js';

t.teardown(closeWalkBrowser);

/** One demo for the file, started by its first test. */
let running: Promise<DemoProcess> | undefined;
const theDemo = () => (running ??= startDemo(t));

for (const width of WIDTHS) {
  t.test(`token owner at ${width.name} width: sign in by e-mail, create a personal token, use it`, { skip: skipWithoutChromium }, async (t) => {
    const d = await theDemo();
    const email = d.banner.accounts.tokenOwner;
    const { page, problems } = await openAt(t, width, `walkthrough-token-owner-${width.name}`);

    await signInByMail(page, d, email, async () => {
      t.same(await seriousViolations(page), [], `the portal's sign-in view has no serious or critical accessibility violation (${width.name})`);
    });
    t.ok(await page.getByText(email).first().isVisible(), 'the page says who is signed in');

    await page.getByRole('heading', { name: 'Create an API token' }).waitFor();
    t.same(await seriousViolations(page), [], `the portal's tokens view has no serious or critical accessibility violation (${width.name})`);
    const name = `walk-through ${width.name}`;
    await page.getByLabel('Name', { exact: true }).fill(name);
    await page.getByRole('button', { name: 'Create token' }).click();
    await page.getByRole('heading', { name: 'Token created' }).waitFor();
    const value = ((await page.getByLabel('Token value').filter({ visible: true }).textContent()) ?? '').trim();
    t.ok(value.length >= 20, 'the new token\'s value is shown once');

    const status = await fetch(`${d.banner.base}/v2/hrs/status`, { headers: { Authorization: `Bearer ${value}` } });
    t.equal(status.status, 200, 'the token reads export v2\'s status');
    const body = (await status.json()) as { stations: { hrs_id: string }[] };
    const published = (await demoStations(d)).map((s) => s.hrs_id).sort();
    t.same(body.stations.map((s) => s.hrs_id).sort(), published, 'with every station of the demo in it');

    await page.getByRole('button', { name: /back to my tokens/i }).click();
    const row = page.getByRole('row', { name: new RegExp(name) });
    await row.waitFor();
    t.match(await row.textContent(), /active/, 'the token is listed as active');
    t.equal(await overflow(page), 0, 'no horizontal scroll');
    await screenshot(page, `walkthrough-token-owner-${width.name}`);
    t.same(problems, [], 'no page error, console error or CSP violation on the way');
  });
}

t.test('the demo stops on SIGTERM, with status 0', async (t) => {
  const d = await theDemo();
  t.same(await d.stop(), { code: 0, signal: null });
});
