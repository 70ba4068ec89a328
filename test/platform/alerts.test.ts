/**
 * Driver alerts end to end in this process, with a real PostgreSQL, Redis and SMTP server: a request
 * from the map, the confirmation e-mail and its page (double opt-in), a flap shorter than the settle
 * time that sends nothing, a settled transition that sends one e-mail (the driver's language, the
 * station's local time, a link to the map, RFC 8058's one-click unsubscribe), the one-click
 * unsubscribe deleting the address, the reminder, keeping and expiry, the caps and bad input, and two
 * instances with two workers sending each transition once. The settle time and expiry are held to the
 * platform's stepped clock.
 */
import t, { type Test } from 'tap';
import { createLogger } from '../../src/config/log.js';
import { startAlertWorker, type AlertTiming } from '../../workers/alerts/processor.js';
import { startWorkers, type Workers } from '../../workers/index.js';
import { mapFixture } from '../helpers/map.js';
import { postSignals, startTestPlatform, type TestPlatform } from '../helpers/platform.js';
import { smtpSink, type ReceivedMail } from '../helpers/smtp.js';
import { until } from '../helpers/wait.js';

const SETTLE_S = 60;
const ago = (s: number) => new Date(Date.now() - s * 1000).toISOString();

/** BERLA's 700 bar option (nozzle N1) up or down. */
const berla = (p: TestPlatform, available: boolean) =>
  postSignals(p, 'availability', [{ hrs: 'BERLA', datetime: ago(1), station: { maintenance: false, limitedly_available: false }, nozzles: [{ id: 'N1', available }, { id: 'N2', available: true }] }]);

const ask = (p: TestPlatform, body: Record<string, unknown>, headers: Record<string, string> = {}) =>
  fetch(`${p.url}/map/v1/alerts`, { method: 'POST', headers: { 'Content-Type': 'application/json', ...headers }, body: JSON.stringify(body) });

const linkIn = (mail: ReceivedMail, path: string) => {
  const found = new RegExp(`https?://\\S+${path.replace(/\//g, '\\/')}\\?token=[\\w-]+`).exec(mail.mail.text ?? '');
  if (!found) throw new Error(`no ${path} link in: ${mail.mail.text}`);
  return new URL(found[0]);
};

const form = (url: string, token: string) =>
  fetch(url, { method: 'POST', headers: { 'Content-Type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams({ token }).toString() });

/**
 * The alerts workers' clock: the system's, `ahead` ms ahead. A change is stamped by PostgreSQL's clock
 * when it is recorded; the test sets how far past that the workers are (`at(ms)`), back to 0 before the
 * next change.
 */
function workerClock() {
  let ahead = 0;
  return { now: () => new Date(Date.now() + ahead), at: (ms: number) => void (ahead = ms) };
}

async function setUp(t: Test, env: Record<string, string> = {}, timing: Partial<AlertTiming> = { pollEveryMs: 50 }) {
  const smtp = await smtpSink(t);
  const p = await startTestPlatform(t, { fixture: mapFixture(), env: { ALERT_SETTLE: String(SETTLE_S), ...env } });
  // The e-mails' links name the platform as its users reach it.
  const config = { ...p.parts.config, smtpUrl: `smtp://127.0.0.1:${smtp.port}`, baseUrl: p.url };
  const clock = workerClock();
  const workers: Workers = startWorkers(config, p.parts.redis, p.sql, createLogger(process.env.ALERT_TEST_LOG ?? 'silent'), { alertTiming: { upkeepEveryMs: 100, ...timing, now: clock.now } });
  t.teardown(() => workers.close());
  return { p, smtp, config, clock };
}

/** Asks, confirms by the e-mailed link's page, and returns the alert's manage token. */
async function confirmed(t: Test, p: TestPlatform, smtp: Awaited<ReturnType<typeof smtpSink>>, body: Record<string, unknown>): Promise<string> {
  const before = smtp.received.length;
  const res = await ask(p, body);
  t.equal(res.status, 202, 'the request is accepted');
  const mail = await until('the confirmation e-mail', () => smtp.received[before]);
  const link = linkIn(mail, '/map/alerts/confirm');
  const page = await fetch(link);
  t.equal(page.status, 200);
  t.match(await page.text(), /<form method="post" action="\/map\/alerts\/confirm">/, 'the link opens a page with a button: a GET changes nothing');
  const done = await form(`${p.url}/map/alerts/confirm`, link.searchParams.get('token')!);
  t.equal(done.status, 200, 'the button confirms');
  const [row] = await p.sql<{ manage_token: string; state: string }[]>`SELECT manage_token, state FROM driver_alerts ORDER BY id DESC LIMIT 1`;
  t.equal(row!.state, 'active');
  return row!.manage_token;
}

/** Lets the alerts worker see what was recorded (the change recorder writes within 100 ms; the worker polls every 50). */
const recorded = (p: TestPlatform, status: string) =>
  until(`an option row ${status}`, async () => {
    const [row] = await p.sql<{ seq: string }[]>`SELECT seq::text FROM change_log WHERE topic = 'option' AND entity = 'BERLA/700ld' AND payload->>'status' = ${status} ORDER BY seq DESC LIMIT 1`;
    if (!row) return undefined;
    const [cursor] = await p.sql<{ seq: string }[]>`SELECT seq::text FROM alert_cursor`;
    return BigInt(cursor!.seq) >= BigInt(row.seq) ? row.seq : undefined;
  });

t.test('a driver alert: asked, confirmed, a flap ignored, one e-mail per settled transition, one-click unsubscribe', async (t) => {
  const { p, smtp, clock } = await setUp(t);
  await berla(p, false);
  const manage = await confirmed(t, p, smtp, { hrs_id: 'BERLA', fuelling_option: '700ld', when: 'available', email: 'Driver@Example.org', language: 'de' });
  const [confirmMail] = smtp.received;
  t.match(confirmMail!.mail.subject, /^Bitte bestätigen Sie Ihre Benachrichtigung: 700 bar, Pkw an Berlin Airport/, 'the confirmation in the driver\'s language');
  t.notOk(confirmMail!.mail.headerLines.some((h) => h.key === 'list-unsubscribe'), 'the confirmation is no subscription message');

  // Up for 30 s, then down again: shorter than the settle time, nothing is sent.
  await berla(p, true);
  await recorded(p, 'AVAILABLE');
  clock.at(30_000);
  await berla(p, false);
  await recorded(p, 'UNAVAILABLE');
  clock.at(SETTLE_S * 1000 + 1000);
  await until('the down change settled', async () => ((await p.sql`SELECT 1 FROM alert_options WHERE settled_side = 'down' AND pending_side IS NULL`).length > 0 ? true : undefined));
  t.equal(smtp.received.length, 1, 'a flap shorter than the settle time sends nothing');

  // Up, and it holds: one e-mail once the settle time has passed.
  clock.at(0);
  await berla(p, true);
  await recorded(p, 'AVAILABLE');
  clock.at(SETTLE_S * 1000 - 5000);
  await new Promise((resolve) => setTimeout(resolve, 300));
  t.equal(smtp.received.length, 1, 'not before the settle time');
  clock.at(SETTLE_S * 1000 + 1000);
  const mail = await until('the alert e-mail', () => smtp.received[1]);
  t.same(mail.to.map((a) => a.toLowerCase()), ['driver@example.org']);
  t.equal(mail.mail.subject, '700 bar, Pkw an Berlin Airport ist wieder verfügbar');
  const text = mail.mail.text ?? '';
  t.match(text, /^Hallo,/, 'German');
  t.match(text, /Seit:\s+\S+ \d+\. \S+ \d{4}, \d\d:\d\d (MEZ|MESZ|CET|CEST|GMT\+1|GMT\+2)/, 'the station\'s local time (Europe/Berlin)');
  t.match(text, new RegExp(`${p.url.replace(/[.:/]/g, '\\$&')}/#/station/BERLA`), 'a link to the map at the station');
  const unsubscribe = linkIn(mail, '/map/alerts/unsubscribe');
  const header = (name: string) => mail.mail.headerLines.find((h) => h.key === name)?.line.replace(/^[^:]+:\s*/, '');
  t.equal(header('list-unsubscribe'), `<${unsubscribe.href}>`, 'RFC 8058: List-Unsubscribe');
  t.equal(header('list-unsubscribe-post'), 'List-Unsubscribe=One-Click', 'RFC 8058: List-Unsubscribe-Post');
  t.equal(unsubscribe.searchParams.get('token'), manage);

  // Down and up again after that: one more e-mail for the next transition to up, none for the down.
  clock.at(0);
  await berla(p, false);
  await recorded(p, 'UNAVAILABLE');
  clock.at(SETTLE_S * 1000 + 1000);
  await until('down settled', async () => ((await p.sql`SELECT 1 FROM alert_options WHERE settled_side = 'down' AND pending_side IS NULL`).length > 0 ? true : undefined));
  clock.at(0);
  await berla(p, true);
  await recorded(p, 'AVAILABLE');
  clock.at(SETTLE_S * 1000 + 1000);
  await until('the second alert e-mail', () => smtp.received[2]);
  await new Promise((resolve) => setTimeout(resolve, 300));
  t.equal(smtp.received.length, 3, 'one e-mail per transition to the wanted side');
  const keys = await p.sql<{ key: string; state: string }[]>`SELECT key, state FROM mail_outbox WHERE kind = 'alert_transition' ORDER BY id`;
  t.same(keys.map((k) => k.state), ['sent', 'sent'], 'each sent once, by the ledger');

  // The unsubscribe link's page asks; RFC 8058's one-click POST stops the alert and deletes the address.
  const asked = await fetch(unsubscribe);
  t.equal(asked.status, 200);
  t.match(await asked.text(), /Diese Benachrichtigung beenden\?/);
  t.equal((await p.sql`SELECT 1 FROM driver_alerts`).length, 1, 'a GET of the link changes nothing');
  const oneClick = await fetch(unsubscribe, { method: 'POST', headers: { 'Content-Type': 'application/x-www-form-urlencoded' }, body: 'List-Unsubscribe=One-Click' });
  t.equal(oneClick.status, 200, 'the one-click POST is answered');
  t.same(await p.sql`SELECT 1 FROM driver_alerts`, [], 'the alert is gone');
  t.same(await p.sql`SELECT 1 FROM mail_outbox WHERE lower(recipient) = 'driver@example.org'`, [], 'and the address with it, from the outbox too');
  t.equal((await fetch(`${p.url}/map/alerts/manage?token=${manage}`)).status, 404, 'its links no longer work');

  // Further transitions send nothing.
  clock.at(0);
  await berla(p, false);
  clock.at(SETTLE_S * 1000 + 1000);
  await new Promise((resolve) => setTimeout(resolve, 300));
  clock.at(0);
  await berla(p, true);
  clock.at(SETTLE_S * 1000 + 1000);
  await new Promise((resolve) => setTimeout(resolve, 300));
  t.equal(smtp.received.length, 3, 'nothing after the unsubscribe');
});

t.test('"when it goes down": English, and the reminder, keeping and expiry', async (t) => {
  const { p, smtp, clock } = await setUp(t, { ALERT_LIFETIME: String(10 * 86_400), ALERT_REMINDER_BEFORE: String(2 * 86_400) });
  await berla(p, true);
  const manage = await confirmed(t, p, smtp, { hrs_id: 'BERLA', fuelling_option: '700ld', when: 'unavailable', email: 'fleet@example.org' });
  await berla(p, false);
  await recorded(p, 'UNAVAILABLE');
  clock.at(SETTLE_S * 1000 + 1000);
  const down = await until('the alert e-mail', () => smtp.received[1]);
  t.equal(down.mail.subject, '700 bar, cars at Berlin Airport is down');
  t.match(down.mail.text ?? '', /^Hello,/);

  // Eight days on: within two days of its end, the reminder.
  clock.at(8 * 86_400_000 + 60_000);
  const workerUpkeep = await until('the reminder', () => smtp.received[2]);
  t.equal(workerUpkeep.mail.subject, 'Your alert for 700 bar, cars at Berlin Airport ends soon');
  t.match(workerUpkeep.mail.text ?? '', /ends on/);
  // Kept: ten more days from now (the database's clock), and the manage page says so.
  const kept = await form(`${p.url}/map/alerts/renew`, manage);
  t.equal(kept.status, 200);
  t.match(await kept.text(), /Your alert is kept/);
  const [row] = await p.sql<{ expires_at: Date }[]>`SELECT expires_at FROM driver_alerts`;
  t.ok(row!.expires_at.getTime() > Date.now() + 9 * 86_400_000, 'ten days from now');
  // Past its end: deleted, with its address.
  clock.at(12 * 86_400_000);
  await until('the alert deleted', async () => ((await p.sql`SELECT 1 FROM driver_alerts`).length === 0 ? true : undefined));
});

t.test('a change is followed when it is told, not at the next poll, while an alert is active', async (t) => {
  // No poll within the test's time: only the change's notification can move the worker on.
  const { p, smtp } = await setUp(t, {}, { pollEveryMs: 600_000, changesWithinMs: 20 });
  await berla(p, false);
  await confirmed(t, p, smtp, { hrs_id: 'BERLA', fuelling_option: '700ld', when: 'available', email: 'told@example.org' });
  // The workers' first pass ran before the alert was confirmed and found none active: until a pass sees
  // one, changes wait for the poll. A second alerts worker, once its first pass is over, has seen it.
  const config = p.parts.config;
  const worker = await startAlertWorker({ sql: p.sql, redis: p.parts.redis, redisPrefix: config.redisPrefix, log: createLogger('silent'), settleMs: config.alertSettleMs, reminderMs: config.alertReminderMs, timing: { pollEveryMs: 600_000, changesWithinMs: 20, upkeepEveryMs: 600_000 } });
  t.teardown(() => worker.close());
  await worker.wake();
  await berla(p, true);
  t.ok(await recorded(p, 'AVAILABLE'), 'the change is followed on its notification');
  const [pending] = await p.sql<{ pending_side: string }[]>`SELECT pending_side FROM alert_options WHERE hrs_id = 'BERLA' AND fuelling_option = '700ld'`;
  t.equal(pending?.pending_side, 'up', 'and heard: the option is up, settling');
});

t.test('caps, bad input, unknown stations and options', async (t) => {
  const { p } = await setUp(t, { ALERTS_PER_ADDRESS: '2' });
  const base = { hrs_id: 'BERLA', fuelling_option: '700ld', when: 'available', email: 'capped@example.org' };
  t.equal((await ask(p, base)).status, 202);
  t.equal((await ask(p, base)).status, 202, 'the same alert again: a new link, not a new alert');
  t.equal((await ask(p, { ...base, when: 'unavailable' })).status, 202);
  const third = await ask(p, { ...base, fuelling_option: '350ld' });
  t.equal(third.status, 409);
  t.match(await third.json(), { code: 'alert_limit', detail: /2 alerts already/ });
  t.equal((await p.sql`SELECT 1 FROM driver_alerts`).length, 2);
  const bad = await ask(p, { ...base, email: 'not an address' });
  t.equal(bad.status, 400);
  t.equal(bad.headers.get('content-type'), 'application/problem+json; charset=utf-8');
  t.equal((await ask(p, { ...base, when: 'sometimes' })).status, 400);
  t.equal((await ask(p, { ...base, extra: 1 })).status, 400);
  const unknown = await ask(p, { ...base, hrs_id: 'HAMBG', email: 'other@example.org' });
  t.equal(unknown.status, 404, 'a station the map does not show');
  const noOption = await ask(p, { ...base, fuelling_option: '350hd', email: 'other@example.org' });
  t.equal(noOption.status, 422);
  t.match(await noOption.json(), { code: 'unknown_option' });
  t.equal((await fetch(`${p.url}/map/alerts/confirm?token=nothing`)).status, 404, 'an unknown link: the page says it no longer works');
  t.equal((await form(`${p.url}/map/alerts/unsubscribe`, 'nothing')).status, 404);
});

t.test('two instances, two workers: one e-mail per transition', async (t) => {
  const { p, smtp, config, clock } = await setUp(t);
  const q = await startTestPlatform(t, { sameStoreAs: p });
  const second = startWorkers(config, q.parts.redis, q.sql, createLogger('silent'), { alertTiming: { pollEveryMs: 50, upkeepEveryMs: 100, now: clock.now } });
  t.teardown(() => second.close());
  await berla(p, false);
  await confirmed(t, p, smtp, { hrs_id: 'BERLA', fuelling_option: '700ld', when: 'available', email: 'twice@example.org' });
  await confirmed(t, p, smtp, { hrs_id: 'BERLA', fuelling_option: '700ld', when: 'available', email: 'other@example.org' });
  // The signal reaches both instances (the bus): each records the change, the log keeps one row.
  await berla(p, true);
  await recorded(p, 'AVAILABLE');
  clock.at(SETTLE_S * 1000 + 1000);
  await until('two alert e-mails', () => (smtp.received.length >= 4 ? true : undefined));
  await new Promise((resolve) => setTimeout(resolve, 500));
  const alerts = smtp.received.slice(2);
  t.same(alerts.map((m) => m.to[0]).sort(), ['other@example.org', 'twice@example.org'], 'one e-mail to each driver, not two');
  t.equal((await p.sql`SELECT 1 FROM change_log WHERE topic = 'option' AND entity = 'BERLA/700ld' AND payload->>'status' = 'AVAILABLE'`).length, 1, 'one row of the change');
});
