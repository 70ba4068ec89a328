/**
 * Driver alerts through a worker killed with SIGKILL mid-batch, then restarted: one transition settles
 * for 20 alerts, and each driver gets its e-mail exactly once. `hrs worker` runs as a child process
 * (its alerts worker settles the change, its mail worker sends) against a real SMTP server that
 * answers DATA slowly and holds its answers once some are delivered, so the kill comes with messages in
 * flight; the dead worker's claims lapse after MAIL_CLAIM_SECONDS (shortened here), and the new worker
 * sends what is left. The change is recorded in the change log as a server instance records it; the
 * settle time is the shortest setting (a second: a child process's clock cannot be stepped).
 */
import t from 'tap';
import { recordChanges } from '../../db/queries/recorded-changes.js';
import { loadFixture } from '../../src/registry/file/load.js';
import { outboxMessageId } from '../../workers/mail/job.js';
import { mapFixture } from '../helpers/map.js';
import { freshDatabase } from '../helpers/platform.js';
import { HRS, start, type Running } from '../helpers/process.js';
import { slowSink } from '../helpers/smtp.js';
import { until } from '../helpers/wait.js';

const MAIL_FROM = 'HRS signal platform <no-reply@hrs.example>';
const ALERTS = 20;
const DELIVERED_BEFORE_KILL = 6;
const CLAIM_SECONDS = 5;

t.test('alerts worker and mail worker killed mid-batch and restarted: each driver told once', async (t) => {
  const { sql, config } = await freshDatabase(t);
  await loadFixture(sql, mapFixture(), { baseDir: process.cwd() });
  // Twenty confirmed alerts for BERLA's 700 bar option coming back, their drivers last told it was down.
  await sql`
    INSERT INTO driver_alerts (email, language, hrs_id, fuelling_option, wants, state, confirm_hash, confirm_until, manage_token, notified_side, confirmed_at, expires_at)
    SELECT 'driver-' || n || '@example.org', CASE WHEN n % 2 = 0 THEN 'de' ELSE 'en' END, 'BERLA', '700ld', 'up', 'active',
           sha256(n::text::bytea), now(), 'manage-' || n, 'down', now(), now() + interval '30 days'
    FROM generate_series(1, ${ALERTS}) AS n`;

  const smtp = await slowSink(t, { dataDelayMs: 300, holdAfter: DELIVERED_BEFORE_KILL });
  const env = {
    DATABASE_URL: config.databaseUrl,
    REDIS_URL: config.redisUrl,
    REDIS_PREFIX: config.redisPrefix,
    SMTP_URL: `smtp://127.0.0.1:${smtp.port}`,
    MAIL_FROM,
    MAIL_CLAIM_SECONDS: String(CLAIM_SECONDS),
    ALERT_SETTLE: '1',
    SANDBOX: 'off',
    LOG_LEVEL: 'warn',
  };
  const worker = (): Running => {
    const running = start(process.execPath, [HRS, 'worker'], env);
    t.teardown(() => {
      running.child.kill('SIGKILL');
    });
    return running;
  };
  const ledger = async () => {
    const rows = await sql<{ key: string; state: string; message_id: string | null }[]>`SELECT key, state, message_id FROM mail_outbox WHERE kind = 'alert_transition' ORDER BY id`;
    return { rows, sent: rows.filter((r) => r.state === 'sent').length, sending: rows.filter((r) => r.state === 'sending').length };
  };

  const first = worker();
  // The option comes back, as a server instance records it.
  await recordChanges(sql, [
    {
      topic: 'option', hrs_id: 'BERLA', entity: 'BERLA/700ld', change_key: 'option|BERLA|700ld|AVAILABLE|test',
      payload: { fuelling_option: '700ld', status: 'AVAILABLE', reason: 'reported_available', datetime: new Date().toISOString() },
    },
  ]);
  await until('the first e-mails, then the server holds its answers', () => (smtp.holding() ? true : undefined), 60_000);
  const answered = new Set(smtp.received.map((r) => r.messageId));
  await until('every e-mail answered 250 marked sent', async () => {
    const sent = new Set((await ledger()).rows.filter((r) => r.state === 'sent').map((r) => r.message_id));
    return [...answered].every((id) => sent.has(id)) ? true : undefined;
  });
  await until('a message waiting for its answer', () => (smtp.held().length > 0 ? true : undefined));
  first.child.kill('SIGKILL');
  t.same(await first.exited, { code: null, signal: 'SIGKILL' }, 'the worker was killed');
  await until("the dead worker's connections closed", () => (smtp.held().every(smtp.isClosed) ? true : undefined));
  const atKill = await ledger();
  smtp.release();
  t.equal(atKill.rows.length, ALERTS, `the transition wrote ${ALERTS} e-mails to the outbox before the kill`);
  t.ok(atKill.sending > 0, `${atKill.sending} claimed by the worker when it was killed`);

  worker();
  await until(`all ${ALERTS} e-mails`, () => (smtp.received.length >= ALERTS ? true : undefined), 60_000);
  await until('every outbox row sent', async () => ((await ledger()).sent === ALERTS ? true : undefined), 30_000);
  await new Promise((resolve) => setTimeout(resolve, 1500));
  const to = smtp.received.map((r) => r.to[0]!).sort();
  t.equal(smtp.received.length, ALERTS, 'one e-mail per driver, none twice');
  t.same(to, Array.from({ length: ALERTS }, (_, i) => `driver-${i + 1}@example.org`).sort(), 'every driver told');
  const keys = (await ledger()).rows.map((r) => r.key);
  t.same(smtp.received.map((r) => r.messageId).sort(), keys.map((k) => outboxMessageId(k, MAIL_FROM)).sort(), 'each by its deterministic Message-ID');
  t.ok(smtp.received.some((r) => /ist wieder verfügbar$/.test(r.subject)) && smtp.received.some((r) => /is available again$/.test(r.subject)), 'each in its driver\'s language');
});
