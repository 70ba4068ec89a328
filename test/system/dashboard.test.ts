import t from 'tap';
import { existsSync, mkdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { chromium, type Browser, type Page } from 'playwright-core';
import { baseFixture, berlaAssignments, TOKENS } from '../helpers/fixtures.js';
import { ADMIN_TOKEN, freePort, startTestPlatform, type TestPlatform, postSignals as post } from '../helpers/platform.js';
import { until } from '../helpers/wait.js';
import { startWorkers } from '../../workers/index.js';
import { createLogger } from '../../src/config/log.js';

/**
 * The admins' live dashboard (/admin/) in a headless Chromium against the whole platform: sign-in
 * with the admin token, cells coloured and updated by the live feed, the event tail, freshness
 * steps, reconnecting after a restart, a refused token. Saves a screenshot to
 * test/output/dashboard-session.png (docs/dashboard.png is test/system/dashboard-glance.test.ts's).
 */

const CHROMIUM = '/usr/bin/chromium';
const skip = existsSync(CHROMIUM) ? false : `no Chromium at ${CHROMIUM} (install Debian's "chromium" package)`;

const SCREENSHOT = fileURLToPath(new URL('../output/dashboard-session.png', import.meta.url));

const ago = (seconds: number) => new Date(Date.now() - seconds * 1000).toISOString();
/** How the dashboard writes every time: date, time and the browser's offset. */
const TIME = /^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC[+-]\d\d:\d\d$/;

/**
 * BERLA live with mon-1 for availability, usage and hydrogen storage, testing for pricing; HAMBG
 * (given BERLA's layout) live for usage only.
 */
function fixture() {
  const f = baseFixture();
  (f.stations[1] as Record<string, unknown>).layout = structuredClone(f.stations[0]!.layout);
  f.assignments = berlaAssignments('testing');
  return f;
}


const availability = (hrs: string, datetime: string, station = { maintenance: false, limitedly_available: true }) => ({
  hrs,
  datetime,
  nozzles: [
    { id: 'N1', available: true },
    { id: 'N2', available: false },
  ],
  station,
});

const cell = (hrsId: string, category: string) => `tr[data-hrs-id="${hrsId}"] td[data-category="${category}"]`;
const connection = (page: Page) => page.locator('body').getAttribute('data-connection');
const storedToken = (page: Page) => page.evaluate<string | null>('sessionStorage.getItem("hrs-admin-token")');
const rowIds = (page: Page) => page.locator('#stations tr').evaluateAll((rows) => rows.map((row) => row.getAttribute('data-hrs-id')));

let browser: Browser | undefined;
t.teardown(() => browser?.close());

/** A page of its own (own session storage); console messages and page errors are collected. */
async function openPage(t: { teardown(fn: () => unknown): void }): Promise<{ page: Page; problems: string[]; sockets: string[] }> {
  browser ??= await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox'], headless: true });
  const context = await browser.newContext({ viewport: { width: 1280, height: 720 } });
  t.teardown(() => context.close());
  const page = await context.newPage();
  page.setDefaultTimeout(10_000);
  const problems: string[] = [];
  const sockets: string[] = [];
  page.on('pageerror', (err) => problems.push(`page error: ${err.message}`));
  page.on('console', (message) => {
    // A refused WebSocket while the server is down is expected; a CSP violation or a script error is not.
    if (message.type() === 'error' && !/WebSocket connection to .* failed/.test(message.text())) problems.push(message.text());
  });
  page.on('websocket', (ws) => sockets.push(ws.url()));
  return { page, problems, sockets };
}

async function signIn(page: Page, token: string): Promise<void> {
  await page.locator('#token').fill(token);
  await page.getByRole('button', { name: 'Connect' }).click();
}

t.test('sign in, live cells and tail, receipts, sign out, a refused token; screenshot', { skip }, async (t) => {
  const p = await startTestPlatform(t, {
    fixture: fixture(),
    env: { STATUS_STALE_AFTER: '60', STATUS_UNKNOWN_AFTER: '120', EXPORT_V2_RATE_LIMIT_MINUTE: '1000000' },
  });
  // The call-log worker, so the call log the dashboard shows is written.
  const workers = startWorkers(p.parts.config, p.parts.redis, p.sql, createLogger('silent'));
  t.teardown(() => workers.close());
  const { page, problems, sockets } = await openPage(t);
  // An import token of mon-1 made on the portal that expires in 20 days: listed as expiring soon.
  const [expiring] = await p.sql<{ id: string }[]>`
    INSERT INTO tokens (generation, originator_id, name, hash, hint, created_at, expires_at)
    VALUES ('import_v2', 'mon-1', 'ci-north', ${Buffer.alloc(32, 7)}, 'AbCd', now() - interval '300 days', now() + interval '20 days')
    RETURNING id::text`;

  const res = await page.goto(`${p.url}/admin/`);
  t.equal(res?.status(), 200, 'GET /admin/ serves the page');
  t.match(res?.headers()['content-security-policy'], /script-src 'self'; style-src 'self'/, 'served with the strict CSP');
  t.equal(await connection(page), 'signed-out', 'no token yet');
  t.ok(await page.locator('#token').isVisible(), 'the token form is shown');
  t.notOk(await page.locator('#live').isVisible(), 'the table is not');

  await signIn(page, ADMIN_TOKEN);
  await page.waitForSelector('body[data-connection="connected"]');
  t.equal(await page.locator('#connection-text').textContent(), 'connected', 'the header says connected');
  t.equal(await storedToken(page), ADMIN_TOKEN, 'the token is kept in session storage');
  t.notOk(await page.locator('#login').isVisible(), 'the form is gone');
  t.same(await rowIds(page), ['BERLA', 'HAMBG'], 'a row per station, sorted');
  t.equal(await page.locator('tr[data-hrs-id="BERLA"] .station-name').textContent(), 'Berlin Airport', 'with the name');
  t.equal(await page.locator(cell('BERLA', 'availability')).getAttribute('data-freshness'), 'none', 'no reading yet');
  await page.evaluate('window.sameDocument = true');

  const expiringRow = page.locator(`#expiring tr[data-token-id="${expiring!.id}"]`);
  await expiringRow.waitFor();
  t.same(await page.locator('#expiring tr').evaluateAll((rows) => rows.map((row) => row.getAttribute('data-token-id'))), [expiring!.id], 'the token expiring within 30 days, and only it');
  t.match(await expiringRow.locator('th').textContent(), /ci-north.*…AbCd/, 'named by its name and hint');
  t.equal(await expiringRow.locator('.kind').textContent(), 'import v2', 'its kind');
  t.match(await expiringRow.locator('.owner').textContent(), /mon-1.*Monitoring One/, 'its originator');
  t.match(await expiringRow.locator('.expires-at').textContent(), /^\d{4}-\d\d-\d\d \d\d:\d\d UTC[+-]\d\d:\d\d$/, 'its expiry, with date and time zone');
  t.match(await expiringRow.locator('.expires-in').textContent(), /^in (19|20) days$/, 'and how far off');
  t.match(await page.locator('#expiring-status').textContent(), /1 token expires within 30 days/, 'counted for screen readers too');
  t.ok(await page.getByRole('region', { name: 'Tokens expiring soon' }).isVisible(), 'a labelled region');

  await post(p, 'availability', [availability('BERLA', ago(1))]);
  const fresh = page.locator(`${cell('BERLA', 'availability')}[data-freshness="fresh"]`);
  await fresh.waitFor();
  t.equal(await fresh.getAttribute('data-updated'), '1', 'marked as updated once');
  t.match(await fresh.getAttribute('class'), /\bupdated\b/, 'and highlighted');
  t.ok(await fresh.locator('.badge-limited').isVisible(), 'the limitedly_available flag is a visible badge');
  t.equal(await fresh.locator('.badge-maintenance').count(), 0, 'maintenance is not flagged');
  t.match(await fresh.locator('.age').textContent(), /^\d+ s ago$/, 'with its age');
  t.match(await fresh.locator('.cell-time').textContent(), TIME, 'its time with date and time zone');
  t.equal(await page.locator('tr[data-hrs-id="BERLA"]').getAttribute('data-state'), 'limited', 'limitedly available, whatever its nozzles say');
  t.equal(await page.locator('#count-limited').textContent(), '1', 'the header counts stations by state');
  t.equal(await page.locator('#count-unknown').textContent(), '1', 'HAMBG: no availability, unknown');
  t.equal(await page.evaluate('window.sameDocument'), true, 'without a reload');

  const change = page.locator('#tail li[data-type="change"][data-hrs-id="BERLA"][data-category="availability"]');
  await change.first().waitFor();
  t.match(await change.first().textContent(), /BERLA.*availability.*signal.*— → limitedly available.*mon-1/, 'the tail shows the change: the first reading\'s value');
  t.match(await change.first().locator('time').textContent(), TIME, 'tail times have their date and time zone');

  await post(p, 'pricing', [{ hrs: 'BERLA', datetime: ago(1), products: [{ id: 'P700', gross_price: '13.850', currency: 'EUR' }] }]);
  const testing = page.locator('#tail li[data-type="receipt"][data-hrs-id="BERLA"][data-category="pricing"]');
  await testing.waitFor();
  t.match(await testing.textContent(), /receipt · testing.*mon-1/, 'a testing transmission is a receipt in the tail');
  t.equal(await page.locator(cell('BERLA', 'pricing')).getAttribute('data-freshness'), 'none', 'and is not shown as a reading');

  await post(p, 'availability', [availability('HAMBG', ago(1))]);
  const unassigned = page.locator('#tail li[data-type="receipt"][data-hrs-id="HAMBG"][data-category="availability"]');
  await unassigned.waitFor();
  t.match(await unassigned.textContent(), /receipt · unassigned/, 'so is an unassigned one');

  await post(p, 'usage', [{ hrs: 'BERLA', datetime: ago(90), nozzles: [{ id: 'N1', usage_status: 'in-use' }, { id: 'N2', usage_status: 'free' }] }]);
  await post(p, 'hydrogen-storage', [{ hrs: 'BERLA', datetime: ago(2), storages: [{ id: 'S1', remaining_kg: '80.5' }] }]);
  await post(p, 'usage', [{ hrs: 'HAMBG', datetime: ago(150), nozzles: [{ dispenser_id: 'D1', usage_status: 'free' }] }]);
  await page.locator(`${cell('BERLA', 'usage')}[data-freshness="stale"]`).waitFor();
  await page.locator(`${cell('BERLA', 'hydrogen_storage')}[data-freshness="fresh"]`).waitFor();
  await page.locator(`${cell('HAMBG', 'usage')}[data-freshness="unknown"]`).waitFor();
  t.match(await page.locator(cell('BERLA', 'hydrogen_storage')).textContent(), /low: S1/, 'a low storage is named');

  await post(p, 'availability', [availability('BERLA', ago(0), { maintenance: true, limitedly_available: false })]);
  const again = page.locator(`${cell('BERLA', 'availability')}[data-updated="2"]`);
  await again.waitFor();
  t.ok(await again.locator('.badge-maintenance').isVisible(), 'a new reading replaces the badges');
  t.equal(await again.locator('.badge-limited').count(), 0, 'and drops the old ones');
  t.equal(await change.count(), 2, 'every change is a line of the tail');
  t.match(await page.locator('#tail li').first().textContent(), /BERLA.*availability.*signal.*limitedly available → unavailable \(in maintenance\)/, 'newest on top, with the value before and after');
  t.equal(await page.locator('tr[data-hrs-id="BERLA"]').getAttribute('data-state'), 'unavailable', 'in maintenance: unavailable though N1 says available');
  t.match(await again.locator('.cell-detail').first().textContent(), /unavailable: in maintenance/, 'and the cell says why');
  t.same(
    await Promise.all(['available', 'limited', 'unavailable', 'unknown'].map((s) => page.locator(`#count-${s}`).textContent())),
    ['0', '0', '1', '1'],
    'stations by state in the header, not readings',
  );

  // A refused import call: a line of the tail with its first error.
  const refused = await fetch(`${p.url}/import/v2/signal/availability/`, {
    method: 'POST',
    headers: { Authorization: `Bearer ${TOKENS.import_v2}`, 'Content-Type': 'application/json' },
    body: JSON.stringify([{ ...availability('BERLA', ago(1)), nozzles: [{ id: 'N9', available: true }] }]),
  });
  t.equal(refused.status, 400);
  const rejection = page.locator('#tail li[data-type="rejection"]');
  await rejection.waitFor();
  t.match(await rejection.textContent(), /BERLA.*availability.*refused · 400.*\[0\]\.nozzles.*mon-1/, 'the refusal with its first error, where it points');

  // A token event: an admin revokes alice's personal token; the tail says so (never its value).
  const listed = (await (await fetch(`${p.url}/admin/v1/tokens?generation=export_v2`, { headers: { Authorization: `Bearer ${ADMIN_TOKEN}` } })).json()) as { tokens: { id: string }[] };
  await fetch(`${p.url}/admin/v1/tokens/${listed.tokens[0]!.id}/revoke`, { method: 'POST', headers: { Authorization: `Bearer ${ADMIN_TOKEN}` } });
  const tokenLine = page.locator('#tail li[data-type="token"]');
  await tokenLine.waitFor();
  t.match(await tokenLine.textContent(), /token revoked by an admin.*alice/, 'a token event is a line of the tail');

  const tailBefore = await page.locator('#tail li').allTextContents();
  // The calls counted so far reach PostgreSQL within 5 s; the panel reads them when it connects.
  await until('the calls counted', async () => {
    const [row] = await p.sql<{ n: number }[]>`SELECT coalesce(sum(rejected), 0)::int AS n FROM originator_call_stats WHERE originator_id = 'mon-1'`;
    return row!.n >= 1 ? row : undefined;
  });
  const socketsBefore = sockets.length;
  await page.reload();
  await page.waitForSelector('body[data-connection="connected"]');
  t.equal(sockets.length - socketsBefore, 1, 'after a reload the stored token connects by itself, at the first attempt');
  t.notOk(await page.locator('#login').isVisible(), 'without asking for it');
  t.equal(await page.locator(cell('BERLA', 'availability')).getAttribute('data-freshness'), 'fresh', 'the snapshot fills the table');
  await page.locator('#tail li[data-type="rejection"]').waitFor();
  t.same(await page.locator('#tail li').allTextContents(), tailBefore, 'the tail is kept across a reload');

  const mon1 = page.locator('#originators tr[data-originator="mon-1"]');
  await mon1.waitFor();
  t.equal(await mon1.locator('.refused').textContent(), '1', 'the refused call is counted');
  t.match(await mon1.locator('.calls').textContent(), /^\d+$/, 'beside every call');
  const calls = Number(await mon1.locator('.calls').textContent());
  t.ok(calls >= 7, `${calls} calls of mon-1 counted`);
  t.equal(await mon1.locator('.error-rate').textContent(), `${((1 / calls) * 100).toFixed(1)} %`, 'the error rate');
  t.match(await mon1.locator('.last-seen').textContent(), TIME, 'last seen, with date and time zone');
  await until('the call log written', async () => {
    const [row] = await p.sql<{ n: number }[]>`SELECT count(*)::int AS n FROM call_logs WHERE status = 400`;
    return row!.n >= 1 ? row : undefined;
  });
  await page.getByRole('button', { name: 'Show the call log of mon-1' }).click();
  await page.locator('#call-log-entries li[data-status="400"]').waitFor();
  t.match(await page.locator('#call-log-entries li').first().textContent(), /BERLA.*400.*POST \/import\/v2\/signal\/availability\//, 'its call log, a click away');

  // The screenshot, once the highlights have faded.
  await page.locator('.updated').first().waitFor({ state: 'detached', timeout: 5000 }).catch(() => {});
  mkdirSync(fileURLToPath(new URL('../output/', import.meta.url)), { recursive: true });
  await page.screenshot({ path: SCREENSHOT, fullPage: true });
  t.ok(existsSync(SCREENSHOT), 'screenshot saved to test/output/dashboard-session.png');


  await page.getByRole('button', { name: 'Forget token' }).click();
  await page.waitForSelector('body[data-connection="signed-out"]');
  t.equal(await storedToken(page), null, 'signing out forgets the token');
  t.ok(await page.locator('#token').isVisible(), 'and asks for one again');

  const before = sockets.length;
  await signIn(page, 'not-the-admin-token-000000');
  await page.waitForSelector('body[data-connection="auth-failed"]');
  t.equal(await page.locator('#connection-text').textContent(), 'authentication failed');
  t.ok(await page.locator('#login').isVisible(), 'the form is shown again');
  t.match(await page.locator('#login-error').textContent(), /Authentication failed: Invalid token/, 'with the reason');
  t.equal(await storedToken(page), null, 'the refused token is not kept');
  await page.waitForTimeout(1500);
  t.equal(await connection(page), 'auth-failed', 'no reconnecting with a refused token');
  t.equal(sockets.length - before, 1, 'one attempt only');
  await page.screenshot({ path: fileURLToPath(new URL('../output/dashboard-auth-failed.png', import.meta.url)) });

  await signIn(page, ADMIN_TOKEN);
  await page.waitForSelector('body[data-connection="connected"]');
  await page.getByRole('button', { name: 'Forget token' }).click();
  await page.waitForSelector('body[data-connection="signed-out"]');
  t.notOk(await page.locator('#login-error').isVisible(), 'a failed sign-in\'s message is gone once a sign-in succeeded');

  t.same(problems, [], 'no script errors, no CSP violations');
});

t.test('freshness steps, and reconnecting by itself after a restart', { skip }, async (t) => {
  // A port of its own, as a deployment has: the restarted instance listens on it again.
  const port = await freePort();
  const first = await startTestPlatform(t, {
    fixture: fixture(),
    env: { PORT: String(port), STATUS_STALE_AFTER: '1', STATUS_UNKNOWN_AFTER: '3', EXPORT_V2_RATE_LIMIT_MINUTE: '1000000' },
  });
  const { page, problems } = await openPage(t);
  await page.goto(`http://127.0.0.1:${port}/admin/`);
  await signIn(page, ADMIN_TOKEN);
  await page.waitForSelector('body[data-connection="connected"]');

  // Every value the BERLA availability cell takes, in order.
  await page.evaluate(`(() => {
    const seen = (window.seenFreshness = []);
    const record = () => {
      const td = document.querySelector('tr[data-hrs-id="BERLA"] td[data-category="availability"]');
      const value = td && td.dataset.freshness;
      if (value && seen[seen.length - 1] !== value) seen.push(value);
    };
    record();
    new MutationObserver(record).observe(document.getElementById('stations'), { subtree: true, childList: true, attributes: true });
  })()`);
  await post(first, 'availability', [availability('BERLA', ago(0))]);
  await page.locator(`${cell('BERLA', 'availability')}[data-freshness="unknown"]`).waitFor();
  t.same(await page.evaluate('window.seenFreshness'), ['none', 'fresh', 'stale', 'unknown'], 'fresh → stale → unknown, live');
  t.match(await page.locator('#tail li').first().textContent(), /BERLA.*availability.*freshness.*stale → unknown/, 'the steps are in the tail');
  t.match(await page.locator('#tail li').nth(1).textContent(), /freshness.*fresh → stale/, 'each one');
  t.match(await page.locator(cell('BERLA', 'availability')).textContent(), /not published/, 'an unknown reading is not published');

  await first.stop('restart');
  await page.waitForSelector('body[data-connection="disconnected"]');
  t.match(await page.locator('#connection-text').textContent(), /^disconnected — reconnecting in [\d.]+ s$/, 'the page says it is reconnecting');
  t.same(await rowIds(page), ['BERLA', 'HAMBG'], 'the rows stay while disconnected');
  await page.waitForTimeout(1200);
  t.equal(await connection(page), 'disconnected', 'still down: the retries were refused');

  const second = await startTestPlatform(t, { sameStoreAs: first, port });
  t.equal(second.port, port, 'restarted on the same port');
  await page.waitForSelector('body[data-connection="connected"]', { timeout: 15_000 });
  t.equal(await page.locator('#connection-text').textContent(), 'connected', 'the page reconnected by itself and says so');
  t.same(await rowIds(page), ['BERLA', 'HAMBG'], 'and shows the stations from the new snapshot');
  t.equal(await page.locator(cell('BERLA', 'availability')).getAttribute('data-freshness'), 'unknown', 'as restored from the database');

  await post(second, 'availability', [availability('BERLA', ago(0))]);
  await page.locator(`${cell('BERLA', 'availability')}[data-freshness="fresh"]`).waitFor();
  t.match(await page.locator('#tail li').first().textContent(), /BERLA.*availability.*unknown → fresh/, 'the new connection receives changes, into the tail too');
  await second.stop('test over');

  t.same(problems, [], 'no script errors, no CSP violations');
});
