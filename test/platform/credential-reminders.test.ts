/**
 * Expiry reminders of import and legacy export tokens, end to end over real SMTP (smtp-server
 * receiving, mailparser reading): a portal-made import token expiring in 29 days reaches each of its
 * originator's active managers once across two sweeps; a registry-file token reaches the managers and
 * the admins (accounts with the admin role and ADMIN_EMAILS), each address once; a legacy export token
 * the admins; a revoked token nobody; a token renewed before its reminder went out nobody. And the
 * rules underneath: which reminder is due, who is told, what the e-mail says.
 */
import { createHash } from 'node:crypto';
import t, { type Test } from 'tap';
import { createLogger } from '../../src/config/log.js';
import { credentialRecipients, daysLeftAt, dueReminder } from '../../src/domain/token-reminders.js';
import { renderCredentialReminder } from '../../src/domain/token-mail.js';
import { credentialReminderKey, writeCredentialReminders } from '../../src/registry/credential-reminders.js';
import { startWorkers } from '../../workers/index.js';
import { sweepMail } from '../../workers/mail/outbox.js';
import { openQueue, QUEUES } from '../../workers/queues.js';
import { SWEEP_JOB } from '../../workers/mail/job.js';
import { baseFixture } from '../helpers/fixtures.js';
import { startTestPlatform, type TestPlatform } from '../helpers/platform.js';
import { smtpSink } from '../helpers/smtp.js';
import { until } from '../helpers/wait.js';

const DAY = 86_400_000;
const MAIL_FROM = 'HRS signal platform <no-reply@hrs.example>';

t.test('the reminder due: the one nearest to expiry whose time has come, after the token was made', async (t) => {
  const now = new Date('2027-01-01T12:00:00Z');
  const at = (days: number) => new Date(now.getTime() + days * DAY);
  t.match(dueReminder({ createdAt: at(-336), expiresAt: at(29), now }), { daysBefore: 30, key: `expiring:30:${at(29).toISOString()}` }, '29 days left: the 30-day one');
  t.match(dueReminder({ createdAt: at(-336), expiresAt: at(6), now }), { daysBefore: 7 }, '6 days left: the 7-day one, not the missed 30-day one');
  t.equal(dueReminder({ createdAt: at(-300), expiresAt: at(31), now }), undefined, '31 days left: none yet');
  t.equal(dueReminder({ createdAt: at(-1), expiresAt: at(29), now }), undefined, 'made with 30 days or less to run: no 30-day reminder');
  t.equal(dueReminder({ createdAt: at(-300), expiresAt: at(-1), now }), undefined, 'expired: none');
  t.equal(dueReminder({ createdAt: at(-300), expiresAt: null, now }), undefined, 'no expiry: none');
  t.equal(daysLeftAt({ daysBefore: 30, dueAt: at(-0.5), expiresAt: at(29.5) }, now), 30, 'on time: its own distance');
  t.equal(daysLeftAt({ daysBefore: 30, dueAt: at(-10), expiresAt: at(20) }, now), 20, 'ten days late: the days really left');
});

t.test('who is told: managers; the admins too for registry files, legacy export tokens and originators without a manager', async (t) => {
  const managers = ['m1@example.org', 'm2@example.org'];
  const admins = ['root@hrs.example', 'M1@example.org'];
  t.same(credentialRecipients({ generation: 'import_v2', fromFile: false, managers, admins }), [
    { email: 'm1@example.org', as: 'manager' },
    { email: 'm2@example.org', as: 'manager' },
  ]);
  t.same(credentialRecipients({ generation: 'import_v1', fromFile: true, managers, admins }), [
    { email: 'm1@example.org', as: 'manager' },
    { email: 'm2@example.org', as: 'manager' },
    { email: 'root@hrs.example', as: 'admin' },
  ], 'a manager who is an admin too is told once, as a manager');
  t.same(credentialRecipients({ generation: 'import_v2', fromFile: false, managers: [], admins }).map((r) => r.as), ['admin', 'admin'], 'no manager: the admins');
  t.same(credentialRecipients({ generation: 'export_v1', fromFile: true, managers, admins }).map((r) => r.email), admins, 'legacy export: the admins');
});

t.test('the e-mail names the token, its expiry in the zone and how to renew it, never a value', async (t) => {
  const token = {
    id: '42',
    generation: 'import_v2',
    name: 'ci <north>',
    hint: 'Xy7Q',
    createdAt: new Date('2026-02-01T10:00:00Z'),
    expiresAt: new Date('2027-02-01T10:00:00Z'),
    originator: { id: 'mon-1', name: 'Monitoring One' },
  };
  const portal = renderCredentialReminder({
    recipient: { name: 'Mia', email: 'm1@example.org' },
    as: 'manager',
    token,
    daysLeft: 30,
    portalUrl: 'https://hrs.example/portal/',
    timeZone: 'Europe/Berlin',
  });
  t.equal(portal.subject, 'HRS import token "ci <north>" of Monitoring One expires in 30 days');
  t.match(portal.text, /Hello Mia,/);
  t.match(portal.text, /Monday 1 February 2027, 11:00 CET/, 'the expiry in the mail time zone');
  t.match(portal.text, /The import token "ci <north>" \(…Xy7Q\) of Monitoring One expires in 30 days, on Monday/);
  t.match(portal.text, /\(…Xy7Q\), id 42/);
  t.match(portal.text, /https:\/\/hrs\.example\/portal\//);
  t.match(portal.text, /create a new import token on the portal/);
  t.match(portal.text, /as a manager of the originator Monitoring One \(mon-1\)/);
  t.match(portal.html, /&quot;ci &lt;north&gt;&quot;/, 'HTML-escaped');
  const file = renderCredentialReminder({
    recipient: { name: null, email: 'root@hrs.example' },
    as: 'admin',
    token: { ...token, hint: null, generation: 'export_v1', originator: null, name: '' },
    daysLeft: 7,
    portalUrl: 'https://hrs.example/portal/',
  });
  t.equal(file.subject, 'HRS legacy export token "token 42" expires in 7 days');
  t.match(file.text, /expires_at in the registry file and load the file again \(hrs load\)/);
  t.match(file.text, /as an administrator/);
  t.notMatch(file.text, /import token on the portal/, 'a legacy export token is not made on the portal');
});

/** A token as a registry file or the portal leaves it, written directly: its times are the test's. */
async function insertToken(
  p: TestPlatform,
  t: { generation: string; originator: string | null; name: string; hint: string | null; createdDaysAgo: number; expiresInDays: number; revoked?: boolean },
): Promise<{ id: string; value: string }> {
  const value = `hrs_test_${t.name}_${Math.random().toString(36).slice(2)}_value`;
  const hash = createHash('sha256').update(value).digest();
  const [row] = await p.sql<{ id: string }[]>`
    INSERT INTO tokens (generation, originator_id, name, hash, hint, created_at, expires_at, revoked_at)
    VALUES (${t.generation}, ${t.originator}, ${t.name}, ${hash}, ${t.hint}, now() - ${`${t.createdDaysAgo} days`}::interval,
            now() + ${`${t.expiresInDays} days`}::interval, ${t.revoked ? new Date() : null})
    RETURNING id::text`;
  return { id: row!.id, value };
}

async function setup(t: Test) {
  const smtp = await smtpSink(t);
  const p = await startTestPlatform(t, {
    fixture: baseFixture(),
    env: { SMTP_URL: `smtp://127.0.0.1:${smtp.port}`, MAIL_FROM, MAIL_TIME_ZONE: 'Europe/Berlin', ADMIN_EMAILS: 'ops@hrs.example, M1@example.org' },
  });
  await p.sql`
    INSERT INTO users (id, email, name, is_admin, deactivated_at) VALUES
      ('m1', 'm1@example.org', 'Mia', false, NULL), ('m2', 'm2@example.org', NULL, false, NULL),
      ('gone', 'gone@example.org', NULL, false, now()), ('root', 'root@hrs.example', 'Root', true, NULL)`;
  await p.sql`INSERT INTO originator_members (user_id, originator_id) VALUES ('m1', 'mon-1'), ('m2', 'mon-1'), ('gone', 'mon-1')`;
  return { smtp, p };
}

t.test('import and legacy export tokens: each recipient once across two sweeps; revoked and renewed ones nobody', async (t) => {
  const { smtp, p } = await setup(t);
  const config = p.parts.config;
  const settings = { offsetsMs: config.tokenReminderOffsetsMs, adminEmails: config.adminEmails };
  const portalMade = await insertToken(p, { generation: 'import_v2', originator: 'mon-1', name: 'ci-north', hint: 'AbCd', createdDaysAgo: 336, expiresInDays: 29 });
  const fromFile = await insertToken(p, { generation: 'import_v1', originator: 'mon-1', name: 'legacy-feed', hint: null, createdDaysAgo: 359, expiresInDays: 6 });
  const legacyExport = await insertToken(p, { generation: 'export_v1', originator: null, name: 'old-client', hint: null, createdDaysAgo: 345, expiresInDays: 20 });
  const revoked = await insertToken(p, { generation: 'import_v2', originator: 'mon-1', name: 'revoked-one', hint: 'ZzZz', createdDaysAgo: 336, expiresInDays: 29, revoked: true });
  const renewed = await insertToken(p, { generation: 'import_v2', originator: 'mon-1', name: 'renewed-one', hint: 'RrRr', createdDaysAgo: 336, expiresInDays: 29 });
  const later = await insertToken(p, { generation: 'import_v2', originator: 'mon-1', name: 'not-yet', hint: 'NnNn', createdDaysAgo: 300, expiresInDays: 40 });

  // The first sweep's reminders, written before any worker runs.
  const first = await writeCredentialReminders(p.sql, settings);
  const byToken = (id: string) => first.written.filter((i) => i.tokenId === id).map((i) => i.recipient).sort();
  t.same(byToken(portalMade.id), ['m1@example.org', 'm2@example.org'], 'a portal-made token: its active managers');
  t.same(byToken(fromFile.id), ['m1@example.org', 'm2@example.org', 'ops@hrs.example', 'root@hrs.example'], 'a registry-file token: the managers and the admins, each address once');
  t.same(byToken(legacyExport.id), ['m1@example.org', 'ops@hrs.example', 'root@hrs.example'], 'a legacy export token: the admins (accounts and ADMIN_EMAILS)');
  t.same(byToken(revoked.id), [], 'a revoked token: nobody');
  t.same(byToken(later.id), [], '40 days left: nothing yet');
  t.equal(first.written.find((i) => i.tokenId === portalMade.id)!.daysBefore, 30, '29 days left: the 30-day reminder');
  t.equal(first.written.find((i) => i.tokenId === fromFile.id)!.daysBefore, 7, '6 days left: the 7-day reminder');
  t.equal(
    first.written.find((i) => i.tokenId === portalMade.id && i.recipient === 'm1@example.org')!.key,
    credentialReminderKey(portalMade.id, `expiring:30:${first.written.find((i) => i.tokenId === portalMade.id)!.expiresAt!.toISOString()}`, 'm1@example.org'),
  );
  // Renewed before its reminders went out: the worker cancels them rather than send them.
  await p.sql`UPDATE tokens SET expires_at = now() + interval '300 days' WHERE id = ${renewed.id}`;

  // The workers start (as after a restart): their first sweep gives the outbox's e-mails their jobs.
  const workers = startWorkers(config, p.parts.redis, p.sql, createLogger('silent'));
  t.teardown(() => workers.close());
  const expected = 2 + 4 + 3;
  await until('the reminders', () => (smtp.received.length >= expected ? true : undefined), 30_000);
  const settled = () =>
    until('the ledger', async () => {
      const rows = await p.sql<{ state: string }[]>`SELECT state FROM mail_outbox WHERE key LIKE '%:to:%'`;
      return rows.some((r) => r.state === 'pending' || r.state === 'sending') ? undefined : rows;
    });
  await settled();

  // A second sweep, and a third: nothing new is written, nothing is sent again.
  const queue = openQueue(QUEUES.mail, p.parts.redis, config.redisPrefix);
  t.teardown(() => queue.close());
  for (let i = 0; i < 2; i++) {
    t.same((await writeCredentialReminders(p.sql, settings)).written, [], 'a later sweep writes nothing');
    t.equal((await sweepMail(p.sql, queue, p.parts.redis)).added, 0);
  }
  await new Promise((resolve) => setTimeout(resolve, 1500));
  t.equal(smtp.received.length, expected, 'each reminder once');

  const to = (needle: RegExp) => smtp.received.filter((r) => needle.test(r.mail.subject ?? '')).map((r) => r.to.join(',')).sort();
  t.same(to(/ci-north/), ['m1@example.org', 'm2@example.org'], 'the portal-made token: each manager once');
  t.same(to(/legacy-feed/), ['m1@example.org', 'm2@example.org', 'ops@hrs.example', 'root@hrs.example'], 'the registry-file token: managers and admins');
  t.same(to(/old-client/), ['m1@example.org', 'ops@hrs.example', 'root@hrs.example'], 'the legacy export token: the admins');
  t.same(to(/revoked-one|renewed-one|not-yet/), [], 'revoked, renewed, not due: nobody');
  t.same(smtp.received.filter((r) => r.to.includes('gone@example.org')), [], 'a deactivated manager: nothing');
  const states = await p.sql<{ state: string }[]>`SELECT state FROM mail_outbox WHERE token_id = ${renewed.id}`;
  t.same(states.map((s) => s.state), ['cancelled', 'cancelled'], 'the renewed token\'s reminders cancelled');

  const mia = smtp.received.find((r) => /ci-north/.test(r.mail.subject ?? '') && r.to.includes('m1@example.org'))!.mail;
  t.equal(mia.subject, 'HRS import token "ci-north" of Monitoring One expires in 29 days', 'sent a day after its time: the days really left');
  t.match(mia.text, /Hello Mia,/);
  t.match(mia.text, /…AbCd/);
  t.match(mia.text, /CET|CEST/, 'the expiry in the mail time zone');
  t.match(mia.text, /\/portal\//, 'how to renew it');
  t.match(mia.html, /ci-north/);
  for (const r of smtp.received) {
    for (const token of [portalMade, fromFile, legacyExport]) {
      t.notOk(r.mail.text?.includes(token.value) || String(r.mail.html).includes(token.value), 'never a token value');
    }
  }
  const adminMail = smtp.received.find((r) => /legacy-feed/.test(r.mail.subject ?? '') && r.to.includes('root@hrs.example'))!.mail;
  t.match(adminMail.subject, /expires in 6 days|expires in 7 days/);
  t.match(adminMail.text, /hrs load/, 'a registry-file token: renewed in the file');
  t.match(adminMail.text, /as an administrator/);
  const managerMail = smtp.received.find((r) => /legacy-feed/.test(r.mail.subject ?? '') && r.to.includes('m2@example.org'))!.mail;
  t.match(managerMail.text, /ask them to extend it/, 'a manager of a registry-file token: the admins renew it');
});

t.test('a manager removed before the reminder goes out is not told', async (t) => {
  const { smtp, p } = await setup(t);
  const config = p.parts.config;
  const token = await insertToken(p, { generation: 'import_v2', originator: 'mon-1', name: 'moved', hint: 'MmMm', createdDaysAgo: 336, expiresInDays: 29 });
  const written = await writeCredentialReminders(p.sql, { offsetsMs: config.tokenReminderOffsetsMs, adminEmails: config.adminEmails });
  t.same(written.written.map((i) => i.recipient).sort(), ['m1@example.org', 'm2@example.org']);
  await p.sql`DELETE FROM originator_members WHERE user_id = 'm2'`;
  const workers = startWorkers(config, p.parts.redis, p.sql, createLogger('silent'));
  t.teardown(() => workers.close());
  await until('the reminder', () => (smtp.received.length >= 1 ? true : undefined), 30_000);
  await until('the ledger', async () => {
    const rows = await p.sql<{ state: string }[]>`SELECT state FROM mail_outbox WHERE token_id = ${token.id} ORDER BY recipient`;
    return rows.every((r) => r.state === 'sent' || r.state === 'cancelled') ? rows : undefined;
  });
  const rows = await p.sql<{ recipient: string; state: string }[]>`SELECT recipient, state FROM mail_outbox WHERE token_id = ${token.id} ORDER BY recipient`;
  t.same(rows.map((r) => `${r.recipient} ${r.state}`), ['m1@example.org sent', 'm2@example.org cancelled']);
  t.same(smtp.received.map((r) => r.to.join(',')), ['m1@example.org']);
});

t.test('through the workers\' own sweep job: written, sent to each manager, once across two sweeps', async (t) => {
  const { smtp, p } = await setup(t);
  const config = p.parts.config;
  const token = await insertToken(p, { generation: 'import_v2', originator: 'mon-1', name: 'swept', hint: 'SsSs', createdDaysAgo: 336, expiresInDays: 29 });
  const queue = openQueue(QUEUES.mail, p.parts.redis, config.redisPrefix);
  t.teardown(() => queue.close());
  // Nothing written beforehand: the sweep the workers run as they start finds the reminder.
  const workers = startWorkers(config, p.parts.redis, p.sql, createLogger('silent'));
  t.teardown(() => workers.close());
  await until('the reminders', () => (smtp.received.length >= 2 ? true : undefined), 30_000);
  const sweeps = async () => (await queue.getJobs(['completed'])).filter((j) => j.name === SWEEP_JOB);
  const first = await until('the first sweep to complete', async () => ((await sweeps()).length >= 1 ? await sweeps() : undefined), 20_000);
  t.match(first[0]!.returnvalue, { reminded: 2 }, 'the first sweep wrote the two reminders');
  await queue.add(SWEEP_JOB, {}, { jobId: 'second-sweep' });
  const second = await until('the second sweep', async () => {
    const job = await queue.getJob('second-sweep');
    return job && (await job.isCompleted()) ? job : undefined;
  }, 20_000);
  t.match(second.returnvalue, { reminded: 0, added: 0 }, 'the second sweep writes and adds nothing');
  await new Promise((resolve) => setTimeout(resolve, 1500));
  t.same(smtp.received.map((r) => r.to.join(',')).sort(), ['m1@example.org', 'm2@example.org'], 'each manager once');
  const rows = await p.sql<{ key: string; state: string }[]>`SELECT key, state FROM mail_outbox WHERE token_id = ${token.id}`;
  t.equal(rows.length, 2);
  t.ok(rows.every((r) => r.state === 'sent' && /^token:\d+:expiring:30:.*:to:[0-9a-f]{16}$/.test(r.key)), 'the 30-day reminder, sent');
});
