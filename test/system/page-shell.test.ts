/**
 * What a browser meets around the pages: `/portal` and `/admin` without their slash redirected (308,
 * the query string kept), the icon every page names served at `/favicon.svg` and `/favicon.ico`, the
 * portal's session probe answering 200 whether signed in or not (the session itself still a 401 for
 * API clients without a session), and, in Chromium, no console error on loading the portal (signed
 * out and signed in), the admins' dashboard and the index page.
 */
import t from 'tap';
import { readFileSync } from 'node:fs';
import type { Page } from 'playwright-core';
import { PAGE_FOLDERS } from '../../src/api/index-page/shell.js';
import { startTestPlatform, type TestPlatform } from '../helpers/platform.js';
import { ACCOUNTS, grantPortalRoles, portalClient, portalFixture, signedIn } from '../helpers/portal.js';
import { closeBrowser, skipWithoutChromium, watchedPage } from '../helpers/portal-browser.js';

const skip = skipWithoutChromium;
const ICON = readFileSync(new URL('../../src/browser/shared/favicon.svg', import.meta.url));

t.test('/portal and /admin without their slash: a 308 to the page, the query string kept', async (t) => {
  const p = await startTestPlatform(t);
  for (const [path, location] of [
    ['/portal', '/portal/'],
    ['/admin', '/admin/'],
    ['/portal?lang=de&x=1', '/portal/?lang=de&x=1'],
    ['/admin?a=b', '/admin/?a=b'],
  ] as const) {
    for (const method of ['GET', 'HEAD']) {
      const res = await fetch(`${p.url}${path}`, { method, redirect: 'manual', headers: { Accept: 'text/html' } });
      t.equal(res.status, 308, `${method} ${path}: a permanent redirect`);
      t.equal(res.headers.get('location'), location, `${method} ${path} → ${location}`);
    }
  }
  const followed = await fetch(`${p.url}/portal`, { headers: { Accept: 'text/html' } });
  t.equal(followed.status, 200, 'followed, the portal page');
  t.match(followed.headers.get('content-type'), /^text\/html/);
  t.equal((await fetch(`${p.url}/portalx`)).status, 404, 'other paths are not redirected');
});

t.test("docs/api.md names every redirect the platform answers, and API paths are never redirected", async (t) => {
  const api = readFileSync(new URL('../../docs/api.md', import.meta.url), 'utf8').replace(/\s+/g, ' ');
  t.notMatch(api, /there is never a redirect/, 'the docs do not promise that nothing redirects');
  const sentence = /The only redirects are [^.]*\./.exec(api)?.[0];
  t.ok(sentence, 'the docs say which paths redirect');
  const documented = [...(sentence ?? '').matchAll(/`(?:GET )?(\/[a-z]+)`/g)].map((m) => m[1]);
  t.same(documented.sort(), [...PAGE_FOLDERS].sort(), `the redirects documented are the ones served (${documented.join(', ')})`);
  const p = await startTestPlatform(t);
  for (const folder of PAGE_FOLDERS) {
    const res = await fetch(`${p.url}${folder}?q=1`, { redirect: 'manual' });
    t.equal(res.status, 308, `${folder}: 308`);
    t.equal(res.headers.get('location'), `${folder}/?q=1`, `${folder}: to its folder, the query kept`);
  }
  // API paths typed with or without a trailing slash: 404 (or their own answer), never a redirect.
  for (const path of ['/v2/hrs/', '/v2/hrs/status/', '/import/v2/signal/availability', '/map/v1/stations.geojson/', '/admin/v1/tokens/', '/portal/v1/stations/', '/portal/v1', '/admin/v1', '/metrics/', '/readyz/']) {
    const res = await fetch(`${p.url}${path}`, { redirect: 'manual' });
    await res.arrayBuffer();
    t.notOk(res.status >= 300 && res.status < 400, `${path}: ${res.status}, not a redirect`);
  }
});

t.test('the icon: /favicon.svg and /favicon.ico, named by every page', async (t) => {
  const p = await startTestPlatform(t);
  for (const path of ['/favicon.svg', '/favicon.ico']) {
    const res = await fetch(`${p.url}${path}`);
    t.equal(res.status, 200, `${path} answers`);
    t.equal(res.headers.get('content-type'), 'image/svg+xml', `${path}: an SVG`);
    t.same(Buffer.from(await res.arrayBuffer()), ICON, `${path}: the icon`);
    t.match(res.headers.get('cache-control'), /max-age=\d+/, `${path}: cached`);
    const again = await fetch(`${p.url}${path}`, { headers: { 'If-None-Match': res.headers.get('etag')! } });
    t.equal(again.status, 304, `${path}: revalidated`);
  }
  t.match(ICON.toString(), /^<svg xmlns="http:\/\/www\.w3\.org\/2000\/svg"[^>]*><title>/, 'an SVG with a title');
  const link = '<link rel="icon" href="/favicon.svg" type="image/svg+xml">';
  for (const path of ['/portal/', '/admin/']) t.ok((await (await fetch(`${p.url}${path}`)).text()).includes(link), `${path} names the icon`);
  for (const path of ['/', '/developers/']) {
    const page = await (await fetch(`${p.url}${path}`, { headers: { Accept: 'text/html' } })).text();
    t.ok(page.includes(link), `${path === '/' ? 'the map page' : 'the "For developers" page'} names the icon`);
  }
  for (const path of ['/v2/doc/', '/import/v2/doc/', '/portal/v1/doc/']) {
    t.ok((await (await fetch(`${p.url}${path}`)).text()).includes(link), `the API reference ${path} names the icon`);
  }
});

t.test('the session probe: 200 signed in or not; the session itself still 401 without one', async (t) => {
  const p = await startTestPlatform(t, { fixture: portalFixture() });
  await grantPortalRoles(p);
  const nobody = portalClient(p);
  const out = await nobody.call('GET', '/portal/v1/session/state');
  t.equal(out.status, 200, 'not signed in: 200');
  t.same(out.body, { signed_in: false });
  t.equal(out.headers.get('cache-control'), 'no-store');
  const stale = await portalClient(p, `hrs_portal=${'x'.repeat(43)}`).call('GET', '/portal/v1/session/state');
  t.same([stale.status, stale.body], [200, { signed_in: false }], 'an unknown session: not signed in');
  t.equal((await nobody.call('GET', '/portal/v1/session')).status, 401, 'GET /portal/v1/session unchanged for API clients');

  const staff = await signedIn(p, ACCOUNTS.staff);
  const state = await staff.call('GET', '/portal/v1/session/state');
  const session = await staff.call('GET', '/portal/v1/session');
  t.equal(state.status, 200);
  t.same(state.body, { signed_in: true, ...session.body }, 'signed in: the account and roles GET /portal/v1/session answers');
  t.same(state.body.roles.operators.map((o: { id: string }) => o.id), ['h2-demo']);
});

// --- in a browser --------------------------------------------------------------------------------------

t.teardown(closeBrowser);

/** A `watchedPage` (no cookie unless given) that counts a failed response as a problem too. */
async function open(t: { teardown(fn: () => unknown): void }, p: TestPlatform, cookie?: string): Promise<{ page: Page; problems: string[] }> {
  const { page, problems } = await watchedPage(t, p, { cookie });
  page.on('response', (res) => {
    if (res.status() >= 400) problems.push(`${res.status()} ${res.url()}`);
  });
  return { page, problems };
}

/** Lets the page settle: its requests answered, the browser's own (the icon) too. */
const settle = (page: Page) => page.waitForLoadState('networkidle');

t.test('no console error on loading the portal, the dashboard and the "For developers" page', { skip }, async (t) => {
  const p = await startTestPlatform(t, { fixture: portalFixture() });
  await grantPortalRoles(p);

  const signedOut = await open(t, p);
  await signedOut.page.goto(`${p.url}/portal/`);
  await signedOut.page.locator('#view-sign-in').waitFor({ state: 'visible' });
  await settle(signedOut.page);
  t.same(signedOut.problems, [], 'the portal, signed out: no error (the probe answers 200)');

  const staff = await open(t, p, (await signedIn(p, ACCOUNTS.staff)).cookie);
  await staff.page.goto(`${p.url}/portal/`);
  await staff.page.locator('#ws-stations').waitFor({ state: 'visible' });
  await settle(staff.page);
  t.same(staff.problems, [], 'the portal, signed in: no error');

  const dashboard = await open(t, p);
  await dashboard.page.goto(`${p.url}/admin/`);
  await settle(dashboard.page);
  t.same(dashboard.problems, [], 'the dashboard: no error');

  const index = await open(t, p);
  await index.page.goto(`${p.url}/developers/`);
  await index.page.locator('h1').waitFor();
  await settle(index.page);
  t.same(index.problems, [], 'the "For developers" page: no error (its icon and style sheet are served)');

  const slashless = await open(t, p);
  await slashless.page.goto(`${p.url}/portal`);
  await slashless.page.locator('#view-sign-in').waitFor({ state: 'visible' });
  t.equal(new URL(slashless.page.url()).pathname, '/portal/', '/portal in the address bar: the portal page');
  t.same(slashless.problems, [], 'no error');
});
