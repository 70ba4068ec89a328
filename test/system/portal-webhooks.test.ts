/**
 * The portal page's Webhooks workspace in a headless Chromium against the real API (WEBHOOK_SECRET_KEY
 * set, loopback receivers allowed) and the webhook worker, with a receiver on 127.0.0.1: a token owner
 * adds a subscription (the kinds as checkboxes, a station, a description), sees its signing secret once
 * (copied; dropped by "Done" and when the view is left by Back), pings it (the delivery row appears,
 * and the receiver got a message signed with that secret), changes its settings, re-enables it once
 * disabled (set with SQL), rotates the secret, deletes it after a confirming dialog; the states in
 * words (disabled since … with the reason, unsubscribed by the receiver); the API's refusals beside the
 * fields; all of it with the keyboard alone; without WEBHOOK_SECRET_KEY the section says webhooks are
 * not available. At 1280 and 390 px: no serious or critical axe violation, no horizontal scroll on the
 * phone, no console error. Screenshots: docs/portal-webhooks-desktop.png, docs/portal-webhooks-phone.png
 * (with UPDATE_DOCS_SCREENSHOT=1).
 */
import t from 'tap';
import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import { randomBytes } from 'node:crypto';
import { AxeBuilder } from '@axe-core/playwright';
import type { Page } from 'playwright-core';
import { Webhook } from 'standardwebhooks';
import { createLogger } from '../../src/config/log.js';
import { startWorkers } from '../../workers/index.js';
import { startTestPlatform, type TestPlatform } from '../helpers/platform.js';
import { ACCOUNTS, portalFixture, signedIn } from '../helpers/portal.js';
import { closeBrowser, openPortalAs, screenshot, skipWithoutChromium } from '../helpers/portal-browser.js';
import { until } from '../helpers/wait.js';

const skip = skipWithoutChromium;
t.teardown(closeBrowser);

const OWNER = ACCOUNTS.none;
/** Console errors a refused request leaves (the browser logs each 4xx answer as a failed load). */
const REFUSED_LOADS = /Failed to load resource: the server responded with a status of (400|404|409)/;

interface Received {
  headers: IncomingHttpHeaders;
  body: string;
}

/** An HTTP receiver on 127.0.0.1 that keeps what it is sent and answers 204. */
async function receiver(t: { teardown(fn: () => unknown): void }): Promise<{ url: string; received: Received[] }> {
  const received: Received[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      received.push({ headers: req.headers, body: Buffer.concat(chunks).toString('utf8') });
      res.writeHead(204).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.teardown(() => new Promise<void>((resolve) => server.close(() => resolve())));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hrs-hook`, received };
}

/** The platform with webhooks set up (a fresh key, loopback allowed) and its workers running. */
async function platform(t: Parameters<typeof startTestPlatform>[0]): Promise<TestPlatform> {
  const p = await startTestPlatform(t, {
    fixture: portalFixture(),
    env: { WEBHOOK_SECRET_KEY: randomBytes(32).toString('hex'), WEBHOOK_ALLOW_LOOPBACK: 'true' },
  });
  const workers = startWorkers(p.parts.config, p.parts.redis, p.sql, createLogger('silent'));
  t.teardown(() => workers.close());
  return p;
}

const hashIs = (page: Page, pattern: RegExp) => page.waitForFunction((source) => new RegExp(source).test((globalThis as any).location.hash), pattern.source);
const visible = (page: Page, selector: string) => page.locator(selector).waitFor({ state: 'visible' });
const text = async (page: Page, selector: string) => ((await page.locator(selector).textContent()) ?? '').trim();
const activeId = (page: Page) => page.evaluate(() => (globalThis as any).document.activeElement?.id ?? '');
/** How far the page is wider than the screen (0: no horizontal scroll). */
const overflow = (page: Page): Promise<number> => page.evaluate('Math.max(0, document.documentElement.scrollWidth - document.documentElement.clientWidth)');

async function seriousViolations(page: Page): Promise<string[]> {
  const result = await new AxeBuilder({ page }).analyze();
  return result.violations
    .filter((v) => v.impact === 'serious' || v.impact === 'critical')
    .map((v) => `${v.impact} ${v.id}: ${v.nodes.map((n) => n.target.join(' ')).slice(0, 3).join('; ')}`);
}

/** The subscription's row as stored. */
async function stored(p: TestPlatform, id: string) {
  const [row] = await p.sql<{ url: string; kinds: string[]; hrs_ids: string[] | null; bbox: number[] | null; description: string; state: string; disabled_at: Date | null }[]>`
    SELECT url, kinds, hrs_ids, bbox, description, state, disabled_at FROM webhook_subscriptions WHERE id = ${id}`;
  return row;
}

/** Adds a webhook through the page's form; resolves with its id (from the address) and the secret shown. */
async function addThroughForm(page: Page, url: string): Promise<{ id: string; secret: string }> {
  await page.getByLabel('Endpoint URL').first().fill(url);
  await page.locator('#webhook-add-form').getByLabel('Station status').check();
  await page.locator('#webhook-add-form').getByLabel('Events').check();
  await page.locator('#webhook-add-form').getByLabel('Stations (optional)').fill('berla');
  await page.locator('#webhook-add-form').getByLabel('Description (optional)').fill('Fleet dashboard');
  await page.getByRole('button', { name: 'Add webhook' }).click();
  await hashIs(page, /^#\/webhooks\/wh_[a-z0-9]+$/);
  await visible(page, '#webhook-secret');
  const id = decodeURIComponent(new URL(page.url()).hash.slice('#/webhooks/'.length));
  return { id, secret: await text(page, '#webhook-secret-value') };
}

t.test('a token owner adds a webhook, sees its secret once, pings, edits, re-enables and deletes it (1280 px)', { skip }, async (t) => {
  const p = await platform(t);
  const hook = await receiver(t);
  const { page, problems } = await openPortalAs(t, p, OWNER);
  await page.context().grantPermissions(['clipboard-read', 'clipboard-write'], { origin: p.url });

  await page.getByRole('button', { name: 'Webhooks', exact: true }).click();
  await hashIs(page, /^#\/webhooks$/);
  await visible(page, '#no-webhooks');
  t.equal(await page.title(), 'Webhooks · HRS portal', 'the title names the view');
  t.match(await text(page, '#webhooks-count'), /You have 0 of 5 webhooks\./);

  // Added: the secret shown once, its focus on the secret's heading.
  const { id, secret } = await addThroughForm(page, hook.url);
  t.match(secret, /^whsec_[A-Za-z0-9+/]{32}$/, 'the signing secret shown');
  t.equal(await activeId(page), 'webhook-secret-title', 'the focus on the secret');
  t.equal(await text(page, '#webhook-title'), hook.url, 'the view of the new webhook');
  t.same(await stored(p, id), { url: hook.url, kinds: ['station_status', 'events'], hrs_ids: ['BERLA'], bbox: null, description: 'Fleet dashboard', state: 'active', disabled_at: null }, 'stored as typed');
  await page.getByRole('button', { name: 'Copy', exact: true }).click();
  await page.locator('#webhook-secret-message[data-kind="ok"]').waitFor();
  t.equal(await page.evaluate(() => (globalThis as any).navigator.clipboard.readText()), secret, 'copied to the clipboard');
  await page.getByRole('button', { name: 'Done', exact: true }).click();
  t.ok(await page.locator('#webhook-secret').isHidden(), 'Done: the secret\'s box gone');
  t.equal(await text(page, '#webhook-secret-value'), '', 'and the secret dropped from the page');
  t.equal(await activeId(page), 'webhook-title', 'the focus on the webhook');
  t.match(await text(page, '#webhook-state'), /active\s+Active: changes are sent as they happen\./);

  // A test ping: its delivery row appears, and the receiver got it signed with the secret shown.
  await page.getByRole('button', { name: 'Send test ping' }).click();
  await page.locator('#webhook-detail-message', { hasText: `Test ping msg_${id}_ping_1` }).waitFor();
  const row = page.locator(`#delivery-rows tr[data-message-id="msg_${id}_ping_1"]`);
  await row.waitFor();
  t.same(await row.locator('td').allTextContents().then((cells) => cells.slice(1, 5)), [`msg_${id}_ping_1`, 'test ping', '1', 'HTTP 204'], 'the delivery: message, kind, attempt, result');
  t.match(await row.locator('td').nth(5).textContent(), /^\d+ ms$/, 'its latency');
  const at = (await row.locator('time').getAttribute('datetime'))!;
  t.match(at, /^\d{4}-\d\d-\d\dT/, 'its time');
  const berlin = new Intl.DateTimeFormat('en-GB', { dateStyle: 'medium', timeStyle: 'medium', timeZone: 'Europe/Berlin' });
  t.equal(await row.locator('time').textContent(), berlin.format(new Date(at)), 'shown in the browser\'s zone (Europe/Berlin), to the second');
  await page.locator('#webhook-detail-message', { hasText: 'delivered' }).waitFor();
  const ping = await until('the ping at the receiver', () => hook.received.find((r) => r.headers['webhook-id'] === `msg_${id}_ping_1`));
  t.same(JSON.parse(ping.body).data, { subscription_id: id }, 'the receiver got the ping');
  t.doesNotThrow(() => new Webhook(secret).verify(ping.body, ping.headers as Record<string, string>), 'signed with the secret the page showed');
  await screenshot(page, 'portal-webhooks-desktop');
  t.same(await seriousViolations(page), [], 'a webhook\'s view with its deliveries: no serious or critical violation');

  // Its settings changed: only what changed is sent.
  const patches: unknown[] = [];
  page.on('request', (request) => {
    if (request.method() === 'PATCH') patches.push(request.postDataJSON());
  });
  const edit = page.locator('#webhook-edit-form');
  await edit.getByLabel('Events').uncheck();
  await edit.getByLabel('Fuelling options').check();
  await edit.getByLabel('West (minimum longitude)').fill('13');
  await edit.getByLabel('South (minimum latitude)').fill('52.3');
  await edit.getByLabel('East (maximum longitude)').fill('13.8');
  await edit.getByLabel('North (maximum latitude)').fill('52.7');
  await edit.getByRole('button', { name: 'Save settings' }).click();
  await page.locator('#webhook-edit-message[data-kind="ok"]').waitFor();
  t.match(await stored(p, id), { kinds: ['station_status', 'fuelling_options'], bbox: [13, 52.3, 13.8, 52.7], hrs_ids: ['BERLA'] }, 'the change stored');
  await edit.getByRole('button', { name: 'Save settings' }).click();
  await page.locator('#webhook-edit-message', { hasText: 'Nothing to save' }).waitFor();
  t.same(patches, [{ kinds: ['station_status', 'fuelling_options'], bbox: [13, 52.3, 13.8, 52.7] }], 'the kinds and the area sent, once: saved again unchanged, nothing is');

  // Failing (retried), then disabled by failures (as the worker leaves it): the state in words, and re-enabled.
  await p.sql`UPDATE webhook_subscriptions SET failing_since = now() - interval '1 hour' WHERE id = ${id}`;
  await page.reload();
  await page.locator('#webhook-state .pill-failing').waitFor();
  t.match(await text(page, '#webhook-state'), /^failing\s+Active, but deliveries fail since .+: they are retried, and the webhook is disabled if they keep failing\.$/, 'failing since when');
  await p.sql`UPDATE webhook_subscriptions SET state = 'disabled', disabled_at = now() - interval '2 hours', disabled_reason = 'no delivery succeeded for 24 hours (last attempt: answered 503)' WHERE id = ${id}`;
  await page.reload();
  await visible(page, '#webhook-enable');
  t.match(await text(page, '#webhook-state'), /disabled\s+Disabled since .+: no delivery succeeded for 24 hours \(last attempt: answered 503\)\. Nothing is sent until you re-enable it\./, 'disabled since when, and why');
  t.ok(await page.getByRole('button', { name: 'Send test ping' }).isDisabled(), 'no ping while disabled');
  await page.getByRole('button', { name: 'Re-enable' }).click();
  await page.locator('#webhook-detail-message', { hasText: 'Re-enabled' }).waitFor();
  t.match(await stored(p, id), { state: 'active', disabled_at: null }, 're-enabled');
  t.ok(await page.locator('#webhook-enable').isHidden(), 'no re-enable button once active');

  // A rotated secret: shown with the time the old one still signs until; Back drops it.
  await page.getByRole('button', { name: 'Rotate secret' }).click();
  await visible(page, '#webhook-secret-overlap');
  const rotated = await text(page, '#webhook-secret-value');
  t.match(rotated, /^whsec_/, 'the new secret shown');
  t.not(rotated, secret, 'a new one');
  t.match(await text(page, '#webhook-secret-overlap'), /^Until .+ every message is signed with the old secret too/, 'until when the old one signs');
  await page.goBack();
  await hashIs(page, /^#\/webhooks$/);
  await visible(page, '#webhooks-overview');
  t.equal(await text(page, '#webhook-secret-value'), '', 'Back: the secret dropped from the page');
  t.equal(await page.locator('#webhook-rows tr').count(), 1, 'the list: one webhook');
  t.match(await text(page, `#webhook-rows tr[data-webhook-id="${id}"] td[data-label="Changes"]`), /^Station status, Fuelling optionsFor stations BERLA in the area 13, 52.3, 13.8, 52.7$/);

  // Another, unsubscribed by its receiver: said so in the list, not counted.
  const owner = await signedIn(p, OWNER);
  const other = await owner.call('POST', '/portal/v1/webhooks', { url: `${hook.url}/2`, kinds: ['events'] });
  t.equal(other.status, 201);
  await p.sql`UPDATE webhook_subscriptions SET state = 'unsubscribed', disabled_at = now(), last_delivery_at = now() - interval '1 day' WHERE id = ${other.body.id}`;
  await page.reload();
  await page.locator(`#webhook-rows tr[data-webhook-id="${other.body.id}"]`).waitFor();
  t.match(await text(page, `#webhook-rows tr[data-webhook-id="${other.body.id}"] td[data-label="State"]`), /^unsubscribed\s+Unsubscribed by the receiver: it answered 410 Gone on .+\. Nothing is sent any more\.$/);
  t.match(await page.locator(`#webhook-rows tr[data-webhook-id="${other.body.id}"] td[data-label="Last delivered"] time`).getAttribute('datetime'), /^\d{4}-/, 'when changes were last delivered to it');
  t.match(await text(page, '#webhooks-count'), /You have 1 of 5 webhooks\./, 'the unsubscribed one not counted');
  t.same(await seriousViolations(page), [], 'the list: no serious or critical violation');

  // Deleted after confirming.
  await page.locator(`#webhook-rows a[href="#/webhooks/${id}"]`).click();
  await hashIs(page, new RegExp(`^#/webhooks/${id}$`));
  await visible(page, '#webhook-body');
  await page.getByRole('button', { name: 'Delete…' }).click();
  await visible(page, '#webhook-delete-dialog');
  t.equal(await activeId(page), 'webhook-delete-cancel', 'the dialog opens on Cancel');
  t.match(await text(page, '#webhook-delete-text'), new RegExp(`stops sending to ${hook.url.replace(/[.]/g, '\\.')} at once`));
  t.same(await seriousViolations(page), [], 'the dialog: no serious or critical violation');
  await page.getByRole('button', { name: 'Cancel' }).click();
  t.equal(await activeId(page), 'webhook-delete', 'Cancel: the focus back on Delete');
  t.ok(await stored(p, id), 'not deleted');
  await page.getByRole('button', { name: 'Delete…' }).click();
  await page.getByRole('button', { name: 'Delete webhook' }).click();
  await hashIs(page, /^#\/webhooks$/);
  await page.locator('#webhooks-message', { hasText: 'is deleted' }).waitFor();
  t.equal(await stored(p, id), undefined, 'the row deleted');
  t.equal(await page.locator(`#webhook-rows tr[data-webhook-id="${id}"]`).count(), 0, 'gone from the list');
  t.equal(await activeId(page), 'webhooks-title', 'the focus on the list');
  t.same(problems, [], 'no page error, console error or CSP violation');
});

t.test('the API\'s refusals beside the fields they are about', { skip }, async (t) => {
  const p = await platform(t);
  const { page, problems } = await openPortalAs(t, p, OWNER, REFUSED_LOADS);
  await page.goto(`${p.url}/portal/#/webhooks`);
  await visible(page, '#webhook-add-form');
  const form = page.locator('#webhook-add-form');
  const add = page.getByRole('button', { name: 'Add webhook' });

  // Checked before asking: no kind chosen.
  await form.getByLabel('Endpoint URL').fill('https://receiver.example/hook');
  await add.click();
  await visible(page, '#webhook-add-kinds-error');
  t.equal(await text(page, '#webhook-add-kinds-error'), 'Choose at least one kind of change to send.');
  t.equal(await activeId(page), 'webhook-add-kind-station_status', 'the focus on the first kind');

  // The API: an address it may not deliver to (a private one), said beside the URL.
  await form.getByLabel('Events').check();
  await form.getByLabel('Endpoint URL').fill('https://10.1.2.3/hook');
  await add.click();
  await visible(page, '#webhook-add-url-error');
  t.ok(await page.locator('#webhook-add-kinds-error').isHidden(), 'the kinds no longer wrong');
  t.match(await text(page, '#webhook-add-url-error'), /\S/, `the URL refused: "${await text(page, '#webhook-add-url-error')}"`);
  t.equal(await page.locator('#webhook-add-url').getAttribute('aria-invalid'), 'true', 'the URL marked wrong');
  t.equal(await activeId(page), 'webhook-add-url', 'the focus on the URL');
  t.match(await page.locator('#webhook-add-url').getAttribute('aria-describedby'), /webhook-add-url-error/, 'the message describes the field');

  // A station the platform does not have, and a description too long for it.
  await form.getByLabel('Endpoint URL').fill('http://127.0.0.1:9/hook');
  await form.getByLabel('Stations (optional)').fill('BERLA, NOPEX');
  await add.click();
  await visible(page, '#webhook-add-hrs_ids-error');
  t.match(await text(page, '#webhook-add-hrs_ids-error'), /NOPEX/, 'the unknown station named beside the stations');
  t.ok(await page.locator('#webhook-add-url-error').isHidden(), 'the URL no longer wrong');
  t.equal((await p.sql`SELECT count(*)::int AS n FROM webhook_subscriptions`)[0]!.n, 0, 'nothing stored');

  // The bbox: three edges of four.
  await form.getByLabel('Stations (optional)').fill('');
  await form.getByLabel('West (minimum longitude)').fill('13');
  await add.click();
  t.equal(await text(page, '#webhook-add-bbox-error'), 'Give all four edges of the area, or none.');
  // The limit: five.
  const owner = await signedIn(p, OWNER);
  for (let i = 0; i < 5; i++) t.equal((await owner.call('POST', '/portal/v1/webhooks', { url: `http://127.0.0.1:9/h${i}`, kinds: ['events'] })).status, 201);
  await form.getByLabel('West (minimum longitude)').fill('');
  await add.click();
  await page.locator('#webhook-add-message[data-kind="error"]').waitFor();
  t.match(await text(page, '#webhook-add-message'), /^The webhook was not added: .*5/, 'the limit said under the form');
  t.same(await seriousViolations(page), [], 'refusals shown: no serious or critical violation');
  t.same(problems, [], 'no page error, console error (but the refusals\' loads) or CSP violation');
});

t.test('with the keyboard alone: add, copy, ping, delete', { skip }, async (t) => {
  const p = await platform(t);
  const hook = await receiver(t);
  const { page, problems } = await openPortalAs(t, p, OWNER);
  /** Presses Tab until the focus is on `selector` (at most 80 times). */
  const tabTo = async (selector: string) => {
    for (let i = 0; i < 80; i++) {
      if (await page.evaluate((s) => (globalThis as any).document.activeElement?.matches(s), selector)) return;
      await page.keyboard.press('Tab');
    }
    throw new Error(`${selector} not reached with Tab`);
  };
  await tabTo('#ws-webhooks-tab');
  await page.keyboard.press('Enter');
  await hashIs(page, /^#\/webhooks$/);
  await tabTo('#webhook-add-url');
  await page.keyboard.type(hook.url);
  await tabTo('#webhook-add-kind-fuelling_options');
  await page.keyboard.press('Space');
  await tabTo('#webhook-add-submit');
  await page.keyboard.press('Enter');
  await visible(page, '#webhook-secret');
  await tabTo('#webhook-secret-copy');
  await page.keyboard.press('Enter');
  await page.locator('#webhook-secret-message:not([hidden])').waitFor();
  await tabTo('#webhook-secret-done');
  await page.keyboard.press('Enter');
  t.equal(await text(page, '#webhook-secret-value'), '', 'the secret dropped');
  await tabTo('#webhook-ping');
  await page.keyboard.press('Enter');
  const delivery = page.locator('#delivery-rows tr').first();
  await delivery.waitFor();
  t.match(await delivery.locator('td[data-label="Kind"]').textContent(), /^test ping$/, 'pinged, and its delivery listed');
  await tabTo('#webhook-delete');
  await page.keyboard.press('Enter');
  await visible(page, '#webhook-delete-dialog');
  await page.keyboard.press('Tab');
  t.equal(await activeId(page), 'webhook-delete-confirm', 'Tab: from Cancel to Delete webhook');
  await page.keyboard.press('Enter');
  await hashIs(page, /^#\/webhooks$/);
  await visible(page, '#no-webhooks');
  t.equal((await p.sql`SELECT count(*)::int AS n FROM webhook_subscriptions`)[0]!.n, 0, 'deleted');
  t.same(problems, [], 'no page error, console error or CSP violation');
});

t.test('on a phone (390 px): the list, the form and a webhook\'s view fit the width', { skip }, async (t) => {
  const p = await platform(t);
  const hook = await receiver(t);
  const { page, problems } = await openPortalAs(t, p, OWNER, undefined, { phone: true });
  await page.goto(`${p.url}/portal/#/webhooks`);
  await visible(page, '#webhook-add-form');
  t.equal(await overflow(page), 0, 'the empty list and the form: no horizontal scroll');
  t.same(await seriousViolations(page), [], 'the empty list and the form: no serious or critical violation');
  const { id } = await addThroughForm(page, `${hook.url}/with/a/rather/long/path/that/would/not/fit/on/one/line/of/a/phone`);
  t.equal(await overflow(page), 0, 'the secret: no horizontal scroll');
  await page.getByRole('button', { name: 'Done', exact: true }).click();
  await page.getByRole('button', { name: 'Send test ping' }).click();
  await page.locator(`#delivery-rows tr[data-message-id="msg_${id}_ping_1"]`).waitFor();
  t.equal(await overflow(page), 0, 'a webhook with its deliveries: no horizontal scroll');
  t.same(await seriousViolations(page), [], 'a webhook\'s view: no serious or critical violation');
  await screenshot(page, 'portal-webhooks-phone');
  await page.goBack();
  await page.locator(`#webhook-rows tr[data-webhook-id="${id}"]`).waitFor();
  t.equal(await overflow(page), 0, 'the list: no horizontal scroll');
  t.same(await seriousViolations(page), [], 'the list: no serious or critical violation');
  t.same(problems, [], 'no page error, console error or CSP violation');
});

t.test('without WEBHOOK_SECRET_KEY the section says webhooks are not available here', { skip }, async (t) => {
  const p = await startTestPlatform(t, { fixture: portalFixture() });
  const { page, problems } = await openPortalAs(t, p, OWNER, /status of 503/);
  await page.goto(`${p.url}/portal/#/webhooks`);
  await visible(page, '#webhooks-unavailable');
  t.match(await text(page, '#webhooks-unavailable'), /^Webhooks are not available on this platform/);
  t.ok(await page.locator('#webhook-add').isHidden(), 'no form to add one');
  t.ok(await page.locator('#webhooks-list').isHidden(), 'no list');
  await page.goto(`${p.url}/portal/#/webhooks/wh_0123456789abcdefghij`);
  await visible(page, '#webhooks-unavailable');
  t.ok(await page.locator('#webhook-detail').isHidden(), 'no webhook\'s view either');
  t.same(problems, [], 'no page error, other console error or CSP violation');
});
