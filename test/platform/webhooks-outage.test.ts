/**
 * Webhook delivery through failures: a receiver that never recovers (the subscription disabled at the
 * give-up time and its owner e-mailed through the outbox); a Redis restart while a retry waits (webhook
 * delivery's state and queue are PostgreSQL's: nothing lost). A receiver down for two minutes, then back:
 * receiver-down-webhooks.test.ts.
 */
import t from 'tap';
import { baseFixture } from '../helpers/fixtures.js';
import { startTestPlatform } from '../helpers/platform.js';
import { privateRedis } from '../helpers/private-services.js';
import { smtpSink } from '../helpers/smtp.js';
import { until } from '../helpers/wait.js';
import { deliveredChanges, receiver, subscribe, TEST_TIMING, webhookKey, workersOf } from '../helpers/webhooks.js';
import { checkResends, events, head, loggedSeqs, withEvents } from '../helpers/webhook-outage.js';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

t.test('giving up disables the subscription and e-mails its owner once', async (t) => {
  const smtp = await smtpSink(t);
  const p = await startTestPlatform(t, {
    fixture: baseFixture(),
    env: { WEBHOOK_SECRET_KEY: webhookKey(), WEBHOOK_ALLOW_LOOPBACK: 'true', SMTP_URL: `smtp://127.0.0.1:${smtp.port}`, MAIL_FROM: 'HRS <no-reply@hrs.example>' },
  });
  const key = p.parts.config.webhookSecretKey!;
  const r = await receiver(t, []);
  const sub = await subscribe(p.sql, key, { url: r.url, kinds: ['station_records'] });
  r.state.secrets.push(sub.secret);
  r.state.answer = () => 503;
  await p.sql`UPDATE webhook_subscriptions SET description = 'ERP sync' WHERE id = ${sub.id}`;
  workersOf(t, p, { ...TEST_TIMING, giveUpAfterMs: 2500 });
  await p.load(withEvents([], 'Berlin Airport (renamed)'));
  const disabled = await until('the subscription disabled', async () => {
    const [row] = await p.sql<{ state: string; disabled_at: Date | null; disabled_reason: string | null; failing_since: Date | null }[]>`
      SELECT state, disabled_at, disabled_reason, failing_since FROM webhook_subscriptions WHERE id = ${sub.id}`;
    return row!.state === 'disabled' ? row! : undefined;
  }, 30_000);
  t.match(disabled.disabled_reason, /no delivery succeeded for 3 s|no delivery succeeded for 2\.5 s|503/, 'the reason names the last failure');
  const failedFor = disabled.disabled_at!.getTime() - disabled.failing_since!.getTime();
  t.ok(failedFor >= 2500 && failedFor < 6000, `disabled at the give-up time (${failedFor} ms after the first failure)`);
  const attempts = r.received.length;
  t.ok(attempts >= 3, `retried meanwhile (${attempts} attempts)`);

  const mail = await until('the e-mail', () => smtp.received[0], 20_000);
  t.same(mail.to, ['alice@example.org'], 'to the owner');
  t.match(mail.mail.subject, /webhook "ERP sync" was disabled/);
  t.match(mail.mail.text, new RegExp(r.url.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')), 'names the endpoint');
  t.match(mail.mail.text, /503/, 'and the last error');
  t.match(String(mail.mail.html), /ERP sync/, 'an HTML part like the other e-mails');
  await until('the outbox row sent', async () => {
    const [row] = await p.sql<{ state: string }[]>`SELECT state FROM mail_outbox WHERE subscription_id = ${sub.id}`;
    return row?.state === 'sent' ? true : undefined;
  });
  await p.load(withEvents([], 'Berlin Airport (renamed again)'));
  await sleep(2000);
  t.equal(r.received.length, attempts, 'nothing sent to a disabled subscription');
  t.equal(smtp.received.length, 1, 'one e-mail');

  // Enabled again as the portal does it (state active, failures forgotten): delivery resumes with the
  // message it stopped at, under the same id, then the change made while it was disabled.
  const stoppedAt = String(r.received[r.received.length - 1]!.headers['webhook-id']);
  r.state.answer = () => 200;
  await p.sql`UPDATE webhook_subscriptions SET state = 'active', disabled_at = NULL, disabled_reason = NULL, failing_since = NULL WHERE id = ${sub.id}`;
  await until('both changes after enabling', () => (deliveredChanges(r).length >= 2 ? true : undefined));
  const [first, second] = r.delivered();
  t.equal(first!.headers['webhook-id'], stoppedAt, 'the pending message first, under its id');
  t.same(deliveredChanges(r).map((c) => c.type), ['station.changed', 'station.changed'], 'then the change made meanwhile');
  t.not(second!.headers['webhook-id'], stoppedAt, 'in a message of its own');
  checkResends(t, r.received);
  // The receiver has the request before the worker records its answer.
  const recorded = await until('the attempts recorded', async () => {
    const rows = await p.sql<{ attempt: number; status_code: number | null; message_id: string }[]>`
      SELECT attempt, status_code, message_id FROM webhook_deliveries WHERE subscription_id = ${sub.id} ORDER BY id`;
    return rows.length >= attempts + 2 ? rows : undefined;
  });
  t.same(recorded.slice(0, attempts).map((d) => d.attempt), Array.from({ length: attempts }, (_, i) => i + 1), 'the failed attempts counted 1, 2, 3 …');
  t.same(recorded.slice(attempts).map((d) => [d.attempt, d.status_code]), [[1, 200], [1, 200]], 'enabled again: a new series, delivered at its first attempt');
});

t.test('a Redis restart while a retry waits loses nothing', async (t) => {
  const redis = await privateRedis(t);
  const p = await startTestPlatform(t, { fixture: baseFixture(), env: { REDIS_URL: redis.url, WEBHOOK_SECRET_KEY: webhookKey(), WEBHOOK_ALLOW_LOOPBACK: 'true' } });
  const key = p.parts.config.webhookSecretKey!;
  const start = await head(p);
  const r = await receiver(t, []);
  const sub = await subscribe(p.sql, key, { url: r.url, kinds: ['station_records', 'events'] });
  r.state.secrets.push(sub.secret);
  // Slow retries: a retry is waiting when Redis goes.
  workersOf(t, p, { ...TEST_TIMING, backoff: { baseMs: 3000, capMs: 3000 } });
  r.state.answer = () => 503;
  await p.load(withEvents(events(10, 5)));
  await until('a failed attempt', () => (r.received.length >= 1 ? true : undefined));
  await redis.stop();
  await p.load(withEvents(events(10, 8), 'Berlin Airport T3'));
  await sleep(1000);
  await redis.start();
  r.state.answer = () => 200;
  const expected = await loggedSeqs(p, start);
  await until('every change delivered after the restart', () => (deliveredChanges(r).length >= expected.length ? true : undefined), 40_000);
  await sleep(1000);
  t.same(deliveredChanges(r).map((c) => ({ seq: c.seq, hrs_id: c.hrs_id, type: c.type })), expected, 'every change once, in order');
  checkResends(t, r.received);
});
