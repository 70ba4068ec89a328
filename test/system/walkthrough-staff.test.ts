/**
 * The operator staff's walk-through, from the demo's banner: the staff address taken from what
 * `hrs demo` prints, a sign-in by the e-mailed link, one of their stations opened, renamed on its Record
 * tab, an event announced on its Events tab, and both seen by a data user in export v2 (the banner's
 * token). At a desktop's and a phone's width (a station each), with no page error, console error or
 * horizontal scroll on the way. Screenshots: docs/walkthrough-staff-{desktop,phone}.png (with
 * UPDATE_DOCS_SCREENSHOT=1).
 */
import t from 'tap';
import { skipWithoutChromium, screenshot } from '../helpers/portal-browser.js';
import { startDemo, type DemoProcess } from '../helpers/demo-process.js';
import { until } from '../helpers/wait.js';
import { closeWalkBrowser, control, openAt, overflow, signInByMail, WIDTHS } from '../helpers/walkthrough.js';

t.teardown(closeWalkBrowser);

/** One demo for the file, started by its first test. */
let running: Promise<DemoProcess> | undefined;
const theDemo = () => (running ??= startDemo(t));

/** `YYYY-MM-DDTHH:mm` of a day from now at the hour, as a `datetime-local` field takes it. */
function dayAhead(days: number, hour: number): string {
  const at = new Date(Date.now() + days * 86_400_000);
  const pad = (n: number) => String(n).padStart(2, '0');
  return `${at.getFullYear()}-${pad(at.getMonth() + 1)}-${pad(at.getDate())}T${pad(hour)}:00`;
}

WIDTHS.forEach((width, index) => {
  t.test(`operator staff at ${width.name} width: open a station, rename it, announce an event, see both in export v2`, { skip: skipWithoutChromium }, async (t) => {
    const d = await theDemo();
    const { page, problems } = await openAt(t, width, `walkthrough-staff-${width.name}`);
    await signInByMail(page, d, d.banner.accounts.staff);

    await control(page, 'Stations').click();
    const list = page.getByRole('navigation', { name: 'Stations' });
    const entry = control(list.getByRole('listitem').nth(index), /\S/);
    const label = ((await entry.textContent()) ?? '').trim();
    const hrsId = /^([A-Z0-9]+)\b/.exec(label)?.[1];
    t.ok(hrsId, `the staff's stations are listed (${label})`);
    await entry.click();
    await page.getByRole('heading', { level: 2, name: new RegExp(`^${hrsId}\\b`) }).waitFor();

    const exported = (path: string) => fetch(`${d.banner.base}/v2/hrs/${hrsId}${path}`, { headers: { Authorization: `Bearer ${d.banner.exportV2Token}` } });
    const before = (await (await exported('')).json()) as { name: string };
    const newName = `${before.name} (walk-through ${width.name})`;
    await control(page, 'Record').click();
    await page.getByLabel('Station name').fill(newName);
    // The save's answer is awaited on its own (a busy machine may take seconds to commit and announce a
    // change), so a failure says what the server answered and what the page then said.
    const saved = page.waitForResponse((r) => r.request().method() === 'PUT' && new URL(r.url()).pathname.endsWith(`/stations/${hrsId}`), { timeout: 60_000 });
    await page.getByRole('button', { name: 'Save record' }).click();
    const answer = await saved;
    t.equal(answer.status(), 200, `the record is saved (${answer.status()}: ${answer.status() === 200 ? '' : await answer.text()})`);
    const said = page.getByRole('status').filter({ hasText: /record saved/i });
    const shown = await said.waitFor().then(() => true, () => false);
    t.ok(shown, `the page says the record is saved (it says: ${await page.locator('[role=status]:visible').allTextContents().then((texts) => texts.join(' | '))})`);
    t.equal(await overflow(page), 0, 'the Record tab fits the width (no horizontal scroll)');

    // The tab lists the station's events once the portal API has answered; its width is measured then.
    const listed = page.waitForResponse((r) => r.request().method() === 'GET' && new URL(r.url()).pathname.endsWith(`/stations/${hrsId}/events`));
    await control(page, 'Events').click();
    await listed;
    await page.evaluate('new Promise((resolve) => requestAnimationFrame(() => requestAnimationFrame(resolve)))');
    const description = `Walk-through: dispenser check (${width.name})`;
    await page.getByLabel(/event kind/i).selectOption('maintenance');
    await page.getByLabel(/^starts/i).fill(dayAhead(2, 9));
    await page.getByLabel(/^ends/i).fill(dayAhead(2, 11));
    await page.getByLabel('Description', { exact: true }).fill(description);
    t.equal(await overflow(page), 0, 'the Events tab fits the width (no horizontal scroll)');
    // As the save: the announcement's answer is awaited on its own, with as long for a busy machine.
    const announced = page.waitForResponse((r) => r.request().method() === 'POST' && new URL(r.url()).pathname.endsWith(`/stations/${hrsId}/events`), { timeout: 60_000 });
    await page.getByRole('button', { name: 'Announce' }).click();
    const announcement = await announced;
    t.equal(announcement.status(), 201, `the event is announced (${announcement.status()}: ${announcement.status() === 201 ? '' : await announcement.text()})`);
    const told = await page.getByRole('status').filter({ hasText: /announced/i }).waitFor().then(() => true, () => false);
    t.ok(told, `the page says the event is announced (it says: ${await page.locator('[role=status]:visible').allTextContents().then((texts) => texts.join(' | '))})`);
    // The list is drawn again after the answer: wait for the row rather than look once.
    const row = page.getByRole('row', { name: new RegExp(description.replace(/[()]/g, '\\$&')) });
    t.ok(await row.waitFor({ state: 'visible', timeout: 10_000 }).then(() => true, () => false), 'the event is listed on the station');

    const record = await until('the new name in export v2', async () => {
      const body = (await (await exported('')).json()) as { name: string };
      return body.name === newName ? body : undefined;
    });
    t.equal(record.name, newName, 'export v2\'s station record has the new name');
    const events = (await (await exported('/events')).json()) as { kind: string; description: string | null }[];
    t.match(events.find((e) => e.description === description), { kind: 'maintenance', description }, 'and export v2 lists the event');

    await control(page, 'Record').click();
    await screenshot(page, `walkthrough-staff-${width.name}`);
    t.same(problems, [], 'no page error, console error or CSP violation on the way');
  });
});

t.test('the demo stops on SIGTERM, with status 0', async (t) => {
  const d = await theDemo();
  t.same(await d.stop(), { code: 0, signal: null });
});
