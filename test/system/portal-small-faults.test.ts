/**
 * The portal page's small faults, in a headless Chromium against the real API: a token loaded from
 * the registry file (no hint known) shows a dash, never `…null`; a token used just now shows its last
 * use when the page comes back into view (the instance's gathered use times are written before the
 * list is read), an import token's too; "Signed in as" appears once after signing in; an empty call log's note carries no
 * list number.
 */
import t from 'tap';
import { hashSecret, newSecret } from '../../src/api/secrets.js';
import { TOKENS } from '../helpers/fixtures.js';
import { get, publishHistory, startTestPlatform } from '../helpers/platform.js';
import { ACCOUNTS, grantPortalRoles, portalFixture, signedIn } from '../helpers/portal.js';
import { closeBrowser, openPortalAs, skipWithoutChromium } from '../helpers/portal-browser.js';

const skip = skipWithoutChromium;
t.teardown(closeBrowser);

t.test('a token with no known hint, and one used just now', { skip }, async (t) => {
  const p = await startTestPlatform(t, { fixture: portalFixture() });
  const { page, problems } = await openPortalAs(t, p, ACCOUNTS.none);
  const laptop = page.locator('#token-rows tr').filter({ has: page.locator('.token-name', { hasText: /^laptop$/ }) });
  await laptop.waitFor();
  t.equal(await laptop.locator('td[data-label="Token"]').textContent(), '—', 'a dash for the hint of a token loaded from the registry file');
  t.notMatch(await page.locator('body').innerText(), /null/, 'no "null" on the page');
  await laptop.getByRole('button', { name: /^Revoke/ }).click();
  t.notMatch(await page.locator('#revoke-text').textContent(), /null/, 'nor in the revoke dialog');
  await page.getByRole('button', { name: 'Cancel' }).click();

  t.equal(await laptop.locator('td[data-label="Last used"]').textContent(), 'never');
  t.equal((await get(`${p.url}/v2/hrs/BERLA`, TOKENS.export_v2)).status, 200, 'the token used');
  // Back to the page (another window was in front): the list is read again, the use written first.
  await page.evaluate(() => (globalThis as any).document.dispatchEvent(new Event('visibilitychange')));
  await laptop.locator('td[data-label="Last used"] time').waitFor();
  t.match(await laptop.locator('td[data-label="Last used"]').textContent(), /\d{4}/, 'its last use shown');
  const [row] = await p.sql<{ last_used_at: Date | null }[]>`SELECT last_used_at FROM tokens WHERE name = 'laptop'`;
  t.ok(row!.last_used_at, 'and stored');
  t.same(problems, [], 'no error');
});

t.test('an originator\'s import tokens: a use just now is in the list', async (t) => {
  const p = await startTestPlatform(t, { fixture: portalFixture() });
  await grantPortalRoles(p);
  const manager = await signedIn(p, ACCOUNTS.manager);
  const before = await manager.call('GET', '/portal/v1/originators/mon-1/tokens');
  t.ok(before.body.tokens.every((token: { last_used_at: string | null }) => token.last_used_at === null), 'none used yet');
  t.equal((await get(`${p.url}/import/v2/active-stations/`, TOKENS.import_v2)).status, 200, 'the import v2 token used');
  const after = await manager.call('GET', '/portal/v1/originators/mon-1/tokens');
  const used = after.body.tokens.filter((token: { last_used_at: string | null }) => token.last_used_at !== null);
  t.equal(used.length, 1, 'its use is listed at once');
  t.equal(used[0].generation, 'import_v2');
});

t.test('signed in from the link: "Signed in as" once', { skip }, async (t) => {
  const p = await startTestPlatform(t, { fixture: portalFixture() });
  const { page, problems } = await openPortalAs(t, p, ACCOUNTS.none);
  await page.getByRole('button', { name: 'Sign out' }).click();
  await page.locator('#view-sign-in').waitFor({ state: 'visible' });
  const secret = newSecret();
  await p.sql`INSERT INTO sign_in_links (hash, user_id, expires_at) VALUES (${hashSecret(secret)}, 'alice', clock_timestamp() + interval '15 minutes')`;
  await page.goto(`${p.url}/portal/#sign-in=${secret}`);
  await page.getByRole('button', { name: 'Sign in', exact: true }).click();
  await page.locator('#view-tokens').waitFor({ state: 'visible' });
  const text = await page.locator('body').innerText();
  t.equal(text.split('Signed in as').length - 1, 1, 'said once, in the header');
  t.match(await page.locator('#account').innerText(), /Signed in as alice@example\.org/);
  t.same(problems, [], 'no error');
});

t.test('an empty call log: its note is not numbered', { skip }, async (t) => {
  const p = await startTestPlatform(t, { fixture: portalFixture() });
  await publishHistory(p);
  await grantPortalRoles(p);
  const { page, problems } = await openPortalAs(t, p, ACCOUNTS.manager);
  await page.getByRole('button', { name: 'Originators', exact: true }).click();
  await page.locator('#originator-list button', { hasText: 'mon-1' }).click();
  const note = page.locator('#call-rows li');
  await note.waitFor();
  t.match(await note.textContent(), /^No calls recorded/);
  t.equal(await note.evaluate((el) => (globalThis as any).getComputedStyle(el).listStyleType), 'none', 'no "1." before it');
  t.same(problems, [], 'no error');
});
