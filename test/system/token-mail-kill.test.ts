/**
 * A mail worker killed with SIGKILL in the middle of a batch of token e-mails, then restarted: every
 * e-mail arrives exactly once. `hrs worker` runs as a child process against a real SMTP server
 * (smtp-server receiving, mailparser reading) that answers DATA slowly, so a batch is in flight when
 * the kill comes; the dead worker's claims lapse after MAIL_CLAIM_SECONDS (shortened here) and its
 * BullMQ jobs come back as stalled ones to the new worker. And a job that finds its e-mail claimed by
 * a worker that died waits for the claim to lapse, rather than leaving the e-mail unsent.
 */
import t from 'tap';
import { closeRedis, openRedis } from '../../src/infra/redis.js';
import { startWorkers } from '../../workers/index.js';
import { createLogger } from '../../src/config/log.js';
import { loadFixture } from '../../src/registry/file/load.js';
import { PersonalTokens } from '../../src/registry/personal-tokens.js';
import { outboxMessageId } from '../../workers/mail/job.js';
import { scheduleMail } from '../../workers/mail/outbox.js';
import { openQueue, QUEUES } from '../../workers/queues.js';
import { baseFixture } from '../helpers/fixtures.js';
import { freshDatabase } from '../helpers/platform.js';
import { HRS, start, type Running } from '../helpers/process.js';
import { until } from '../helpers/wait.js';
import { slowSink } from '../helpers/smtp.js';

const MAIL_FROM = 'HRS signal platform <no-reply@hrs.example>';
/** Eight users with five tokens each (a user may hold five active personal tokens): 40 e-mails. */
const USERS = 8;
const TOKENS_PER_USER = 5;
const MAILS = USERS * TOKENS_PER_USER;
/** How long the server takes to answer each message's DATA. */
const DATA_DELAY_MS = 300;
/** How many e-mails the first worker delivers before it is killed. */
const DELIVERED_BEFORE_KILL = 12;
/**
 * MAIL_CLAIM_SECONDS of both workers: the dead worker's claims (and its jobs' BullMQ locks) lapse after
 * this; still far longer than a live worker's send here (DATA_DELAY_MS), even on a loaded machine.
 */
const CLAIM_SECONDS = 5;
const DAY_MS = 86_400_000;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

t.test('worker killed with SIGKILL mid-batch and restarted: each e-mail once', async (t) => {
  const { sql, config } = await freshDatabase(t);
  const fixture = baseFixture();
  const users = Array.from({ length: USERS }, (_, i) => ({ id: `user-${i + 1}`, email: `user-${i + 1}@example.org` }));
  fixture.users.push(...users);
  await loadFixture(sql, fixture, { baseDir: process.cwd() });

  const redis = await openRedis(config.redisUrl, 'hrs-test');
  t.teardown(() => closeRedis(redis));
  const queue = openQueue(QUEUES.mail, redis, config.redisPrefix);
  t.teardown(() => queue.close());

  // Reminder offsets longer than the tokens' lives: only the `created` e-mails are written, all due now.
  const tokens = new PersonalTokens(sql, { reminderOffsetsMs: [800 * DAY_MS, 700 * DAY_MS], checkExpiry: () => null });
  const intents = [];
  for (const user of users) {
    for (let i = 1; i <= TOKENS_PER_USER; i++) intents.push(...(await tokens.create(user.id, `token-${i}`)).mail);
  }
  t.equal(intents.length, MAILS, `${MAILS} e-mails written to the outbox`);
  t.equal(await scheduleMail(queue, intents, createLogger('silent')), MAILS, 'and given their jobs');
  const expected = new Set(intents.map((i) => outboxMessageId(i.key, MAIL_FROM)));

  const smtp = await slowSink(t, { dataDelayMs: DATA_DELAY_MS, holdAfter: DELIVERED_BEFORE_KILL });
  const env = {
    DATABASE_URL: config.databaseUrl,
    REDIS_URL: config.redisUrl,
    REDIS_PREFIX: config.redisPrefix,
    SMTP_URL: `smtp://127.0.0.1:${smtp.port}`,
    MAIL_FROM,
    MAIL_CLAIM_SECONDS: String(CLAIM_SECONDS),
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
    const rows = await sql<{ state: string; message_id: string | null; attempts: number }[]>`SELECT state, message_id, attempts FROM mail_outbox ORDER BY id`;
    const count = (state: string) => rows.filter((r) => r.state === state).length;
    return { rows, sent: count('sent'), sending: count('sending'), pending: count('pending') };
  };

  const first = worker();
  await until('the first e-mails, then the server holds its answers', () => (smtp.holding() ? true : undefined), 30_000);
  // Nothing is killed between an SMTP 250 and the ledger's `sent`: the gate holds every further answer,
  // and the kill waits until each e-mail answered 250 is marked sent. What the worker has in flight
  // then is claimed and sent up to DATA, never answered: the duplicate an SMTP sender cannot rule out
  // (killed after the 250, before recording it) is kept out of this test by construction.
  const answered = new Set(smtp.received.map((r) => r.messageId));
  await until('every e-mail answered 250 marked sent', async () => {
    const { rows } = await ledger();
    const sent = new Set(rows.filter((r) => r.state === 'sent').map((r) => r.message_id));
    return [...answered].every((id) => sent.has(id)) ? true : undefined;
  });
  await until('a message waiting for its answer', () => (smtp.held().length > 0 ? true : undefined));
  const inFlight = smtp.held();
  first.child.kill('SIGKILL');
  t.same(await first.exited, { code: null, signal: 'SIGKILL' }, 'the first worker was killed');
  await until("the dead worker's connections closed", () => (smtp.held().every(smtp.isClosed) ? true : undefined));
  // What the dead worker left in the ledger (read after its death: it claimed more while it lived).
  const atKill = await ledger();
  smtp.release();

  t.equal(smtp.received.length, DELIVERED_BEFORE_KILL, `${DELIVERED_BEFORE_KILL} e-mails delivered before the kill`);
  t.equal(atKill.sent, DELIVERED_BEFORE_KILL, 'each marked sent');
  t.ok(atKill.sending > 0, `${atKill.sending} claimed by the worker when it was killed`);
  t.ok(atKill.pending > 0, `${atKill.pending} not started`);
  t.comment(`at the kill: ${atKill.sent} sent, ${atKill.sending} claimed, ${atKill.pending} pending`);

  const second = worker();
  await until(`all ${MAILS} e-mails`, () => (smtp.received.length >= MAILS ? true : undefined), 40_000);
  await until('every outbox row sent', async () => ((await ledger()).sent === MAILS ? true : undefined));
  // Time for a second delivery to show, were there one.
  await sleep(1500);

  const ids = smtp.received.map((r) => r.messageId);
  t.equal(smtp.received.length, MAILS, 'as many e-mails as written: none twice');
  t.same([...new Set(ids)].sort(), [...expected].sort(), 'each e-mail of the outbox arrived (by Message-ID)');
  t.same(
    ids.filter((id, i) => ids.indexOf(id) !== i),
    [],
    'no Message-ID twice',
  );
  const end = await ledger();
  t.ok(
    end.rows.every((r) => r.state === 'sent'),
    'every outbox row is sent',
  );
  t.same(end.rows.map((r) => r.message_id).sort(), [...expected].sort(), 'each with its Message-ID');
  t.ok(smtp.dropped.length >= inFlight.length && inFlight.length > 0, `the kill cut ${smtp.dropped.length} messages off after their DATA, before the answer`);
  t.ok(
    smtp.dropped.every((id) => expected.has(id) && ids.includes(id)),
    'each delivered by the second worker',
  );
  t.equal(end.rows.filter((r) => r.attempts === 2).length, atKill.sending, "the dead worker's claims were taken over: a second attempt each");
  const after = smtp.received.length - DELIVERED_BEFORE_KILL;
  t.comment(`delivered: ${DELIVERED_BEFORE_KILL} before the kill, ${after} after the restart`);

  second.child.kill('SIGTERM');
  t.same(await second.exited, { code: 0, signal: null }, 'the second worker stops on SIGTERM');
});

t.test("a job that finds its e-mail claimed by a dead worker sends it once the claim lapses", async (t) => {
  // With the default settings a dead worker's BullMQ job comes back (its lock, 30 s) long before its
  // claim lapses (2 minutes): the job must not end there, or the e-mail would stay unsent, its
  // completed job keeping the sweep from giving it another.
  const smtp = await slowSink(t, { dataDelayMs: DATA_DELAY_MS });
  const { sql, config } = await freshDatabase(t, { SMTP_URL: `smtp://127.0.0.1:${smtp.port}`, MAIL_FROM });
  await loadFixture(sql, baseFixture(), { baseDir: process.cwd() });
  const redis = await openRedis(config.redisUrl, 'hrs-test');
  t.teardown(() => closeRedis(redis));
  const workers = startWorkers(config, redis, sql, createLogger('silent'));
  t.teardown(() => workers.close());
  const queue = openQueue(QUEUES.mail, redis, config.redisPrefix);
  t.teardown(() => queue.close());

  const tokens = new PersonalTokens(sql, { reminderOffsetsMs: [800 * DAY_MS, 700 * DAY_MS], checkExpiry: () => null });
  const { mail } = await tokens.create('alice', 'claimed');
  const key = mail[0]!.key;
  // A worker claimed it and died: its claim holds two seconds more.
  await sql`UPDATE mail_outbox SET state = 'sending', attempts = 1, claimed_until = clock_timestamp() + interval '2 seconds' WHERE key = ${key}`;
  const scheduled = Date.now();
  await scheduleMail(queue, mail, createLogger('silent'));

  await until('the e-mail', () => (smtp.received.length > 0 ? true : undefined), 15_000);
  t.ok(Date.now() - scheduled >= 1500, 'not before the claim lapsed');
  await sleep(1000);
  t.same(smtp.received.map((r) => r.messageId), [outboxMessageId(key, MAIL_FROM)], 'sent once');
  const [row] = await sql<{ state: string; attempts: number }[]>`SELECT state, attempts FROM mail_outbox WHERE key = ${key}`;
  t.same(row, { state: 'sent', attempts: 2 });
});
