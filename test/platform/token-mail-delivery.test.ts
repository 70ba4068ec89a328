/**
 * The token e-mails end to end over real SMTP (smtp-server receiving, mailparser reading): created,
 * the reminders on a shortened schedule at their time, an expiry changed twice (only the latest
 * reminders), revoked by the owner and by an admin (no reminder after), a Redis flush made good by the
 * sweep, a 4xx then 250 delivered once, a 5xx failed and listed for admins, and the ledger refusing
 * a second delivery of the same e-mail.
 */
import t, { type Test } from 'tap';
import { createLogger } from '../../src/config/log.js';
import { PersonalTokens } from '../../src/registry/personal-tokens.js';
import { startWorkers } from '../../workers/index.js';
import { scheduleMail, sweepMail } from '../../workers/mail/outbox.js';
import { OUTBOX_JOB, SWEEP_JOB } from '../../workers/mail/job.js';
import { openQueue, QUEUES } from '../../workers/queues.js';
import { baseFixture } from '../helpers/fixtures.js';
import { ADMIN_TOKEN, redisKeys, startTestPlatform, type TestPlatform } from '../helpers/platform.js';
import { smtpSink, type ReceivedMail } from '../helpers/smtp.js';
import { until } from '../helpers/wait.js';
import { WsClient } from '../helpers/ws.js';

const MAIL_FROM = 'HRS signal platform <no-reply@hrs.example>';
const SECOND = 1000;



/** The platform with the standard registry, its workers (mail included) and a lifecycle bound to it. */
async function setup(t: Test, reminders = '8s,4s') {
  const smtp = await smtpSink(t);
  const p = await startTestPlatform(t, {
    fixture: baseFixture(),
    env: { SMTP_URL: `smtp://127.0.0.1:${smtp.port}`, MAIL_FROM, TOKEN_REMINDERS: reminders, MAIL_TIME_ZONE: 'Europe/Berlin' },
  });
  const workers = startWorkers(p.parts.config, p.parts.redis, p.sql, createLogger('silent'));
  t.teardown(() => workers.close());
  const queue = openQueue(QUEUES.mail, p.parts.redis, p.parts.config.redisPrefix);
  t.teardown(() => queue.close());
  // The expiry bounds (a day at least) are the API's rule: the e-mails are tested on a schedule of seconds.
  const tokens = new PersonalTokens(p.sql, { reminderOffsetsMs: p.parts.config.tokenReminderOffsetsMs, checkExpiry: () => null });
  const log = createLogger('silent');
  return { smtp, p, queue, tokens, schedule: (mail: Parameters<typeof scheduleMail>[1]) => scheduleMail(queue, mail, log) };
}

const subjects = (smtp: { received: ReceivedMail[] }) => smtp.received.map((r) => r.mail.subject);
const states = async (p: TestPlatform, tokenId: string) =>
  (await p.sql<{ key: string; state: string }[]>`SELECT key, state FROM mail_outbox WHERE token_id = ${tokenId} ORDER BY id`).map((r) => `${r.key.replace(/^token:\d+:/, '')} ${r.state}`);
/**
 * The token's outbox once no e-mail of it is being sent: the SMTP server keeps a message before it
 * answers 250, and the worker marks it sent only after that answer.
 */
const settled = (p: TestPlatform, tokenId: string) =>
  until('the ledger to record the deliveries', async () => {
    const now = await states(p, tokenId);
    return now.some((s) => s.endsWith(' sending')) ? undefined : now;
  });

t.test('created, then each reminder at its time, once; plain text and HTML, never the value', async (t) => {
  const { smtp, tokens, schedule, p } = await setup(t);
  const feed = await WsClient.connect(`${p.url.replace('http:', 'ws:')}/admin/v1/live`, { Authorization: `Bearer ${ADMIN_TOKEN}` });
  t.teardown(() => feed.close());
  await feed.nextOf('snapshot');
  const expiresAt = new Date(Date.now() + 14 * SECOND);
  const created = await tokens.create('alice', 'laptop', expiresAt);
  await schedule(created.mail);
  await until('the created e-mail', () => (smtp.received.length >= 1 ? true : undefined));
  const first = smtp.received[0]!;
  t.same(first.to, ['alice@example.org'], 'to the owner');
  t.match(first.mail.subject, /laptop.*created/i);
  t.match(first.mail.text, /laptop/);
  t.match(first.mail.text, new RegExp(created.token.hint!));
  t.match(first.mail.html, /laptop/);
  t.notMatch(first.mail.text, new RegExp(created.value), 'never the value (text)');
  t.notMatch(String(first.mail.html), new RegExp(created.value), 'never the value (HTML)');
  t.match(first.mail.text, /CET|CEST|GMT\+1|GMT\+2/, 'the expiry in the configured zone');
  t.match(first.mail.messageId, /@hrs\.example>$/, 'a deterministic Message-ID on the sender\'s domain');
  await until('both reminders', () => (smtp.received.length >= 3 ? true : undefined), 20_000);
  t.match(subjects(smtp), [/created/i, /expires in 30 days/i, /expires in 7 days/i], 'the reminders in order');
  await new Promise((resolve) => setTimeout(resolve, 1500));
  t.equal(smtp.received.length, 3, 'each once');
  await until('the ledger', async () => ((await states(p, created.token.id)).every((s) => s.endsWith(' sent')) ? true : undefined));
  const reminded = [await feed.nextOf('token', 10_000), await feed.nextOf('token', 10_000)];
  t.match(reminded, [
    { kind: 'expiring', token_id: created.token.id, user_id: 'alice', name: 'laptop', days_before: 30 },
    { kind: 'expiring', days_before: 7 },
  ], 'each reminder sent is a token event on the admins\' feed (from the worker, over the bus)');
  t.same(await states(p, created.token.id), ['created sent', `expiring:30:${expiresAt.toISOString()} sent`, `expiring:7:${expiresAt.toISOString()} sent`]);
});

t.test('expiry changed twice: exactly the latest reminders; revoked: the revocation, no reminder after', async (t) => {
  const { smtp, tokens, schedule, p } = await setup(t, '6s,3s');
  const created = await tokens.create('alice', 'ci', new Date(Date.now() + 60 * SECOND));
  await schedule(created.mail);
  const second = new Date(Date.now() + 40 * SECOND);
  await schedule((await tokens.changeExpiry(created.token.id, second)).mail);
  const latest = new Date(Date.now() + 9 * SECOND);
  await schedule((await tokens.changeExpiry(created.token.id, latest)).mail);
  await until('the latest reminders', () => (smtp.received.length >= 3 ? true : undefined), 20_000);
  t.same((await settled(p, created.token.id)).filter((s) => !s.endsWith('cancelled')), [
    'created sent',
    `expiring:30:${latest.toISOString()} sent`,
    `expiring:7:${latest.toISOString()} sent`,
  ], 'the latest expiry\'s reminders sent');
  t.equal((await states(p, created.token.id)).filter((s) => s.endsWith('cancelled')).length, 4, 'the four earlier ones cancelled');

  const other = await tokens.create('alice', 'phone', new Date(Date.now() + 9 * SECOND));
  await schedule(other.mail);
  const revoked = await tokens.revoke(other.token.id, 'owner');
  await schedule(revoked!.mail);
  await until('the revocation', () => (smtp.received.some((r) => /phone.*revoked/i.test(r.mail.subject ?? '')) ? true : undefined));
  await new Promise((resolve) => setTimeout(resolve, 8 * SECOND));
  const phone = subjects(smtp).filter((s) => /phone/.test(s ?? ''));
  t.equal(phone.length, 2, 'created and revoked, no reminder');
  t.match(smtp.received.find((r) => /phone.*revoked/i.test(r.mail.subject ?? ''))!.mail.text, /you revoked|by you/i);
  t.same(await tokens.revoke(other.token.id, 'owner'), { mail: [], events: [] }, 'a second revocation tells nobody');
});

t.test('an admin revocation tells the owner; the outbox is listed for admins', async (t) => {
  const { smtp, tokens, schedule, p } = await setup(t);
  const created = await tokens.create('alice', 'server', new Date(Date.now() + 3600 * SECOND));
  await schedule(created.mail);
  const res = await fetch(`${p.url}/admin/v1/tokens/${created.token.id}/revoke`, { method: 'POST', headers: { Authorization: `Bearer ${ADMIN_TOKEN}` } });
  t.equal(res.status, 200);
  await until('the revocation', () => (smtp.received.some((r) => /revoked/i.test(r.mail.subject ?? '')) ? true : undefined));
  t.match(smtp.received.find((r) => /revoked/i.test(r.mail.subject ?? ''))!.mail.text, /administrator/i, 'says an administrator did it');
  await settled(p, created.token.id);
  const listed = (await (await fetch(`${p.url}/admin/v1/mail?token=${created.token.id}`, { headers: { Authorization: `Bearer ${ADMIN_TOKEN}` } })).json()) as { mail: { kind: string; state: string }[] };
  t.match(listed.mail.map((m) => `${m.kind} ${m.state}`).sort(), ['created sent', 'expiring cancelled', 'expiring cancelled', 'revoked sent']);
});

t.test('nothing lost: Redis flushed, the sweep gives the reminders their jobs again', async (t) => {
  const { smtp, tokens, p, queue } = await setup(t, '6s,3s');
  // The workers sweep once as they start: that sweep must be over before the token exists, or it,
  // not the one below, would give the e-mails their jobs.
  await until('the workers\' first sweep', async () => ((await queue.getJobs(['completed'])).some((j) => j.name === SWEEP_JOB) ? true : undefined), 20_000);
  const created = await tokens.create('alice', 'flushed', new Date(Date.now() + 10 * SECOND));
  // Never scheduled (as if Redis had been flushed after the commit): the sweep finds all three.
  const swept = await sweepMail(p.sql, queue, p.parts.redis);
  t.same(swept, { unsent: 3, added: 3 });
  t.same(await sweepMail(p.sql, queue, p.parts.redis), { unsent: 3, added: 0 }, 'a second sweep adds nothing: the jobs exist');
  await until('all three e-mails', () => (smtp.received.length >= 3 ? true : undefined), 20_000);
  t.equal((await settled(p, created.token.id)).filter((s) => s.endsWith(' sent')).length, 3);
  t.ok((await redisKeys(p.parts.config.redisPrefix)).length > 0);
});

t.test('SMTP 4xx then 250: delivered once; 5xx: failed for good and listed; a second job for one e-mail sends nothing', async (t) => {
  const { smtp, tokens, schedule, p, queue } = await setup(t, '20d,7d');
  smtp.refuse(451);
  const created = await tokens.create('alice', 'retried', new Date(Date.now() + 90 * 86_400_000));
  await schedule(created.mail);
  await until('the retried delivery', () => (smtp.received.length >= 1 ? true : undefined), 30_000);
  await settled(p, created.token.id);
  const [row] = await p.sql<{ state: string; attempts: number }[]>`SELECT state, attempts FROM mail_outbox WHERE key = ${`token:${created.token.id}:created`}`;
  t.same(row, { state: 'sent', attempts: 2 }, 'sent on the second attempt');

  // The ledger: another job for the same e-mail (a duplicate) sends nothing.
  await queue.add(OUTBOX_JOB, { key: `token:${created.token.id}:created` }, { jobId: 'duplicate-of-created' });
  await new Promise((resolve) => setTimeout(resolve, 1500));
  t.equal(smtp.received.length, 1, 'once, whatever the jobs');

  smtp.refuse(550);
  const refused = await tokens.create('alice', 'refused', new Date(Date.now() + 90 * 86_400_000));
  await schedule(refused.mail);
  const failed = await until('the failure listed', async () => {
    const res = await fetch(`${p.url}/admin/v1/mail?state=failed`, { headers: { Authorization: `Bearer ${ADMIN_TOKEN}` } });
    const body = (await res.json()) as { mail: { key: string; last_error: string }[] };
    return body.mail.length > 0 ? body.mail : undefined;
  });
  t.match(failed, [{ key: `token:${refused.token.id}:created`, last_error: /550/ }], 'a permanent refusal is failed at once, with the server\'s answer');
});
