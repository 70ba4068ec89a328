/**
 * The portal page's views for operator staff and originator managers in a headless Chromium, against
 * the real API: staff edit BERLA's draft layout in its form, see the diff on the page, confirm it in two steps (the
 * export record changes at once), change an assignment and announce an event; a manager creates an
 * import token on the originator page (the value, shown once, authenticates on import v2), sees its
 * hint in the list and revokes it (then it is refused). The tabs follow the roles. No script error and
 * no CSP violation. Screenshots go to test/output/; with UPDATE_DOCS_SCREENSHOT=1 also to docs/
 * (portal-layout-editor.png, portal-layout-diff.png, portal-originator-tokens.png).
 */
import t from 'tap';
import type { Page } from 'playwright-core';
import { TOKENS } from '../helpers/fixtures.js';
import { get, publishHistory, startTestPlatform, type TestPlatform } from '../helpers/platform.js';
import { ACCOUNTS, grantPortalRoles, portalFixture, signedIn } from '../helpers/portal.js';
import { closeBrowser, openPortalAs, screenshot, skipWithoutChromium } from '../helpers/portal-browser.js';

const skip = skipWithoutChromium;
t.teardown(closeBrowser);

/** Waits until the message element's text holds `text`. */
const messageMatches = (page: Page, id: string, text: string) => holds(page, id, 'textContent', text);
/** Waits until the element's property (`value`, `textContent`) holds `text`. */
const holds = (page: Page, id: string, property: string, text: string) =>
  page.waitForFunction(([el, name, wanted]) => String((globalThis as any).document.getElementById(el)[name] ?? '').includes(wanted), [id, property, text] as const);

/** The page signed in as the account; the refusals a flow asks for are logged by the browser as failed loads. */
const openAs = (t: { teardown(fn: () => unknown): void }, p: TestPlatform, user: string) => openPortalAs(t, p, user, /status of (400|404|409|422)\b/);

t.test('operator staff: layout editor, diff, two-step confirmation, assignment, event', { skip }, async (t) => {
  const p = await startTestPlatform(t, { fixture: portalFixture() });
  await publishHistory(p); // the figures the pages show (503 before the history worker's first run)
  await grantPortalRoles(p);
  const { page, problems } = await openAs(t, p, ACCOUNTS.staff);
  await page.getByRole('button', { name: 'Stations', exact: true }).waitFor({ state: 'visible' });
  t.notOk(await page.getByRole('button', { name: 'Originators', exact: true }).isVisible(), 'no originator tab for staff only');
  await page.getByRole('button', { name: 'Stations', exact: true }).click();
  await page.locator('#station-list button').first().waitFor();
  t.same(await page.locator('#station-list button .pick-label').allTextContents(), ['BERLA · Berlin Airport', 'HAMBG · Hamburg Port (draft)'], 'the operator\'s stations only');
  t.same(
    await page.locator('#station-list button .pick-note').allTextContents(),
    ['unknown · no availability reading yet', 'unknown · no confirmed layout: nothing is published until one is confirmed'],
    'each with its state as data users see it, and what needs looking at',
  );
  await page.locator('#station-list button', { hasText: 'BERLA' }).click();
  await holds(page, 'record-name', 'value', 'Berlin Airport');

  // The record in labelled fields: the API's refusal beside the field it names, nothing saved; then saved.
  t.equal(await page.getByLabel('City', { exact: true }).inputValue(), '', 'BERLA\'s city is in its details as a field of its own, not an address');
  await page.getByLabel('Street', { exact: true }).fill('Melli-Beese-Ring');
  await page.getByLabel('House number', { exact: true }).fill('1');
  await page.getByLabel('Postcode', { exact: true }).fill('12529');
  await page.getByLabel('Latitude', { exact: true }).fill('52,3667');
  await page.getByLabel('Longitude', { exact: true }).fill('13.5033');
  await page.getByLabel('Phone', { exact: true }).fill('030 12345678'); // national form: no country code
  await page.getByLabel('M1', { exact: true }).check();
  await page.getByRole('button', { name: 'Save record' }).click();
  const phoneError = page.locator('#record-phone-error');
  await phoneError.waitFor();
  t.match(await phoneError.textContent(), /E\.164/, 'the phone\'s problem beside the phone field, in the API\'s words');
  t.equal(await page.getByLabel('Phone', { exact: true }).getAttribute('aria-invalid'), 'true', 'and the field marked');
  t.notOk(JSON.stringify(await (await get(`${p.url}/v2/hrs/BERLA`, TOKENS.export_v2)).json()).includes('Melli-Beese-Ring'), 'nothing saved');
  await page.getByLabel('Latitude', { exact: true }).fill('north');
  await page.getByRole('button', { name: 'Save record' }).click();
  t.match(await page.locator('#record-lat-error').textContent(), /must be a number/, 'a coordinate that is no number is said before asking the API');
  await page.getByLabel('Latitude', { exact: true }).fill('52.3667');
  await page.getByLabel('Phone', { exact: true }).fill('+49 30 12345678');
  await page.getByRole('button', { name: 'Save record' }).click();
  await messageMatches(page, 'station-message', 'Record saved');
  t.equal(await page.locator('.record-error').count(), 0, 'the problems gone');
  const saved = (await (await get(`${p.url}/v2/hrs/BERLA`, TOKENS.export_v2)).json()) as Record<string, unknown>;
  t.match(JSON.stringify(saved), /Melli-Beese-Ring/, 'export v2 has the street');
  const [row] = await p.sql<{ details: Record<string, any> }[]>`SELECT details FROM stations WHERE hrs_id = 'BERLA'`;
  t.same(row!.details.address, { street: 'Melli-Beese-Ring', house_number: '1', postal_code: '12529' }, 'the address from its fields');
  t.same(row!.details.coordinates, { lat: 52.3667, lon: 13.5033 }, 'the coordinates as numbers (a decimal comma taken)');
  t.equal(row!.details.contact_phone_number, '+493012345678', 'the phone without its spaces');
  t.same(row!.details.vehicle_types, ['M1'], 'the vehicle categories ticked');
  t.equal(row!.details.city, 'Berlin', 'a field the form has none for is kept');

  // The pin: on a map where the fields say, the nearest town beside it; dragged, the fields follow it.
  await page.waitForSelector('#record-map[data-idle="true"]');
  await messageMatches(page, 'record-place', 'Pin near Schönefeld, DE (2.5 km)');
  await screenshot(page, 'portal-station-pin');
  const marker = page.locator('#record-map .maplibregl-marker');
  await page.locator('#record-map').scrollIntoViewIfNeeded();
  const box = (await marker.boundingBox())!;
  const [x, y] = [box.x + box.width / 2, box.y + box.height / 2];
  await page.mouse.move(x, y);
  await page.mouse.down();
  await page.mouse.move(x + 120, y - 90, { steps: 10 });
  await page.mouse.up();
  for (let i = 0; i < 50 && (await page.getByLabel('Latitude', { exact: true }).inputValue()) === '52.3667'; i++) await page.waitForTimeout(100);
  const [lat, lon] = [Number(await page.getByLabel('Latitude', { exact: true }).inputValue()), Number(await page.getByLabel('Longitude', { exact: true }).inputValue())];
  t.ok(lat > 52.3667 && lon > 13.5033, `dragged north-east, the fields follow: ${lat}, ${lon}`);
  t.match(await page.getByLabel('Latitude', { exact: true }).inputValue(), /^\d+\.\d{1,5}$/, 'to 5 decimals');
  await page.locator('#record-place', { hasText: 'Pin near' }).waitFor();
  await page.getByLabel('Latitude', { exact: true }).fill('48.7823');
  await page.getByLabel('Longitude', { exact: true }).fill('9.177');
  await page.getByLabel('Longitude', { exact: true }).press('Tab');
  await messageMatches(page, 'record-place', 'Pin near Stuttgart, DE (0 km)');
  const moved = (await marker.boundingBox())!;
  const frame = (await page.locator('#record-map').boundingBox())!;
  t.ok(Math.abs(moved.x + moved.width / 2 - (frame.x + frame.width / 2)) < 4, 'typed coordinates move the pin (and the map to it)');
  await page.getByLabel('Latitude', { exact: true }).fill('52.3667');
  await page.getByLabel('Longitude', { exact: true }).fill('13.5033');
  await page.getByLabel('Longitude', { exact: true }).press('Tab');

  // The layout in the form: remove product P350, add nozzle N3 (700 bar, right side); see the diff, confirm.
  await page.getByRole('button', { name: 'Layout', exact: true }).click();
  await holds(page, 'layout-draft', 'value', 'P350');
  await page.getByRole('button', { name: 'Remove product 2 (P350)' }).click();
  await page.getByRole('button', { name: 'Add a nozzle to dispenser 1' }).click();
  await page.getByLabel('Dispenser 1, nozzle 3: id').fill('N3');
  await page.getByLabel('Dispenser 1, nozzle 3: connector type').selectOption('H70');
  await page.getByLabel('Dispenser 1, nozzle 3: vehicle side').selectOption('right');
  await page.getByLabel('Dispenser 1, nozzle 3: 700ld').check();
  t.match(await page.locator('#layout-draft').inputValue(), /"N3"/, 'the JSON follows the form');
  await page.getByRole('button', { name: 'Save draft' }).click();
  await page.locator('#diff-box').waitFor({ state: 'visible' });
  t.match(await page.locator('#station-message').textContent(), /Draft saved/);
  t.same(await page.locator('#diff-body li').allTextContents(), ['+ N3 added', '− P350 removed'], 'the diff on the page');
  t.same(await page.locator('#diff-body h4').allTextContents(), ['Nozzles', 'Products'], 'under the parts\' names');
  await screenshot(page, 'portal-layout-diff');
  const before = await (await get(`${p.url}/v2/hrs/BERLA`, TOKENS.export_v2)).json();
  t.ok(JSON.stringify(before).includes('P350'), 'not confirmed yet: export unchanged');

  await page.getByRole('button', { name: 'Confirm layout…' }).click();
  t.match(await page.locator('#confirm-text').textContent(), /version 2/, 'asks before confirming');
  await page.getByRole('button', { name: 'Yes, confirm' }).click();
  await messageMatches(page, 'station-message', 'confirmed: it is in effect now');
  const after = (await (await get(`${p.url}/v2/hrs/BERLA`, TOKENS.export_v2)).json()) as { dispensers: { nozzles: { external_id: string }[] }[]; products: { external_id: string }[] };
  t.same(after.products.map((x) => x.external_id), ['P700'], 'export: P350 gone');
  t.ok(after.dispensers[0]!.nozzles.some((n) => n.external_id === 'N3'), 'export: N3 there');
  await holds(page, 'layout-version', 'textContent', 'version 2');
  await screenshot(page, 'portal-layout-editor');

  // A bad draft typed as JSON: the API's message shown, nothing saved.
  await page.locator('#layout-json summary').click();
  await page.locator('#layout-draft').fill('{"dispensers": "D1"}');
  await page.getByRole('button', { name: 'Save draft' }).click();
  await page.locator('#station-message[data-kind="error"]').waitFor();
  t.match(await page.locator('#station-message').textContent(), /dispensers/, 'the API\'s reason shown');

  // Assignments: mon-2 testing for pricing; a second live availability originator refused with the reason.
  await page.getByRole('button', { name: 'Assignments', exact: true }).click();
  await page.getByLabel('mon-2 pricing').selectOption('testing');
  await messageMatches(page, 'station-message', 'mon-2 is now testing for pricing');
  await page.getByLabel('mon-2 availability').selectOption('live');
  await messageMatches(page, 'station-message', 'already has a live availability originator');
  t.equal(await page.getByLabel('mon-2 availability').inputValue(), 'none', 'the refused choice is undone');
  const assignments = await (await signedIn(p, ACCOUNTS.admin)).call('GET', '/portal/v1/stations/BERLA/assignments');
  t.ok(assignments.body.assignments.some((a: any) => a.originator === 'mon-2' && a.signal_type === 'pricing' && a.state === 'testing'), 'stored');

  // An event, announced on the page.
  await page.getByRole('button', { name: 'Events', exact: true }).click();
  await page.getByLabel('Event kind').selectOption('maintenance');
  await page.locator('#event-starts').fill('2030-05-01T08:00');
  await page.locator('#event-description').fill('Compressor swap');
  await page.getByRole('button', { name: 'Announce' }).click();
  await page.locator('#event-rows td', { hasText: 'Compressor swap' }).waitFor();
  const events = (await (await get(`${p.url}/v2/hrs/BERLA/events`, TOKENS.export_v2)).json()) as { id: string; description: string }[];
  const announced = events.find((e) => e.description === 'Compressor swap');
  t.ok(announced, 'export lists it');
  // Changed on the page: the form takes the event, the change is a PATCH.
  await page.getByRole('button', { name: `Change the event ${announced!.id}` }).click();
  t.equal(await page.locator('#event-starts').inputValue(), '2030-05-01T08:00', 'the form shows the event');
  await page.locator('#event-description').fill('Compressor swap, both lanes');
  await page.getByRole('button', { name: 'Save changes' }).click();
  await page.locator('#event-rows td', { hasText: 'Compressor swap, both lanes' }).waitFor();
  const changed = (await (await get(`${p.url}/v2/hrs/BERLA/events`, TOKENS.export_v2)).json()) as { id: string; description: string }[];
  t.equal(changed.find((e) => e.id === announced!.id)!.description, 'Compressor swap, both lanes', 'export shows the change');

  // The audit trail shows what was done.
  await page.getByRole('button', { name: 'Audit', exact: true }).click();
  await page.locator('#audit-rows li', { hasText: 'layout.confirm' }).waitFor();
  t.same(problems, [], 'no script error, no CSP violation');
});

t.test('originator manager: an import token created (shown once, it works), listed with its hint, revoked', { skip }, async (t) => {
  const p = await startTestPlatform(t, { fixture: portalFixture() });
  await publishHistory(p); // the figures the pages show (503 before the history worker's first run)
  await grantPortalRoles(p);
  // A refused call as the call-log worker keeps it (no worker runs here).
  const refusedBody = JSON.stringify([{ hrs: 'BERLA', datetime: '2026-12-05T03:58:00Z', nozzles: [{ id: 'D2-H70', available: true }] }]);
  await p.sql`INSERT INTO call_logs (originator_id, request_time, endpoint, station_ids, status, request_body, response_body, error_details, request_id)
    VALUES ('mon-1', now() - interval '1 minute', 'POST /import/v2/signal/availability/', ARRAY['BERLA'], 400, ${refusedBody},
            ${JSON.stringify([{ nozzles: [{ id: ['Unknown nozzle identifier: D2-H70'] }] }])}, ${JSON.stringify({ status: 400 })}, 'req-refused-1')`;
  const { page, problems } = await openAs(t, p, ACCOUNTS.manager);
  await page.getByRole('button', { name: 'Originators', exact: true }).waitFor({ state: 'visible' });
  t.notOk(await page.getByRole('button', { name: 'Stations', exact: true }).isVisible(), 'no stations tab for a manager only');
  await page.getByRole('button', { name: 'Originators', exact: true }).click();
  await page.locator('#originator-list button').first().waitFor();
  t.same(await page.locator('#originator-list button').allTextContents(), ['Monitoring One (mon-1)']);
  await page.locator('#originator-list button').first().click();
  await page.locator('#reported-rows tr', { hasText: 'BERLA' }).waitFor();
  t.match(await page.locator('#reported-rows').textContent(), /availability: live/, 'the stations it reports on');

  // The call log tells the whole story: the station, the error and where it points; opened, the request body.
  const call = page.locator('#call-rows li[data-status="400"]');
  await call.waitFor();
  t.match(await call.locator('summary').textContent(), /\d{2}:\d{2} \S+ · 400 · POST \/import\/v2\/signal\/availability\/ · BERLA · Unknown nozzle identifier: D2-H70 \(\[0\]\.nozzles\[0\]\.id\)/, 'time with its zone, status, endpoint, station, error');
  t.notOk(await call.locator('pre').first().isVisible(), 'the bodies folded away');
  await call.locator('summary').click();
  t.match(await call.locator('pre').first().textContent(), /"id": "D2-H70"/, 'opened: the request body, laid out');
  t.match(await call.textContent(), /req-refused-1/, 'and the request id to quote');

  await page.locator('#import-generation').selectOption('import_v2');
  await page.getByLabel('Token name').fill('production gateway');
  await page.getByRole('button', { name: 'Create token' }).click();
  await page.locator('#import-created').waitFor({ state: 'visible' });
  const value = (await page.locator('#import-value').textContent())!;
  t.match(value, /^hrs_imp2_[0-9A-Za-z]{49}$/, 'the value, shown once');
  const works = await fetch(`${p.url}/import/v2/active-stations/`, { headers: { Authorization: `Bearer ${value}` } });
  t.equal(works.status, 200, 'it authenticates on import v2');
  const row = page.locator('#import-rows tr', { hasText: 'production gateway' });
  await row.waitFor();
  t.match(await row.textContent(), new RegExp(`…${value.slice(-4)}`), 'listed with its hint');
  await screenshot(page, 'portal-originator-tokens');
  await page.getByRole('button', { name: 'Done' }).click();
  t.equal(await page.locator('#import-value').textContent(), '', 'the value is dropped');

  // Revoking asks first, naming the token and its last use (the call above), and acts only when confirmed.
  await row.getByRole('button', { name: 'Revoke production gateway' }).click();
  const dialog = page.getByRole('dialog', { name: 'Revoke this import token?' });
  await dialog.waitFor();
  t.match(await dialog.textContent(), new RegExp(`“production gateway” \\(…${value.slice(-4)}\\), (last used \\d|never used).*401 from its next call`), 'the dialog names the token, its last use and what follows');
  await dialog.getByRole('button', { name: 'Cancel' }).click();
  t.equal((await fetch(`${p.url}/import/v2/active-stations/`, { headers: { Authorization: `Bearer ${value}` } })).status, 200, 'cancelled: the token still works');
  await row.getByRole('button', { name: 'Revoke production gateway' }).click();
  await dialog.getByRole('button', { name: 'Revoke token' }).click();
  await page.locator('#import-rows tr[data-state="revoked"]', { hasText: 'production gateway' }).waitFor();
  const refused = await fetch(`${p.url}/import/v2/active-stations/`, { headers: { Authorization: `Bearer ${value}` } });
  t.equal(refused.status, 401, 'refused once revoked');
  t.match(await page.locator('#originator-message').textContent(), /revoked/, 'the revocation is said');
  await page.getByRole('button', { name: 'API tokens', exact: true }).click();
  await page.getByRole('button', { name: 'Originators', exact: true }).click();
  await page.locator('#originator-list button').first().waitFor();
  t.notOk(await page.locator('#originator-message').isVisible(), 'and gone once another tab was opened');
  t.same(problems, [], 'no script error, no CSP violation');
});
