/**
 * Credential reminders, expiring tokens and the token e-mails' delivery.
 *
 * One file, one process: its parts share the loaded platform code. Each part is a subtest named after
 * what it covers.
 */
import { createHash } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import type { Queue } from 'bullmq';
import { SMTPServer } from 'smtp-server';
import t, { type Test } from 'tap';
import { connect } from '../../db/connect.js';
import { createLogger } from '../../src/config/log.js';
import { renderCredentialReminder } from '../../src/domain/token-mail.js';
import { credentialRecipients, daysLeftAt, dueReminder } from '../../src/domain/token-reminders.js';
import { closeRedis, openRedis } from '../../src/infra/redis.js';
import { credentialReminderKey, writeCredentialReminders } from '../../src/registry/credential-reminders.js';
import { PersonalTokens } from '../../src/registry/personal-tokens.js';
import { startWorkers, type Workers } from '../../workers/index.js';
import { OUTBOX_JOB, outboxJobId, SWEEP_JOB } from '../../workers/mail/job.js';
import { scheduleMail, sweepMail } from '../../workers/mail/outbox.js';
import { openQueue, QUEUES } from '../../workers/queues.js';
import { baseFixture } from '../helpers/fixtures.js';
import { ADMIN_TOKEN, redisKeys, startTestPlatform, testConfig, type TestPlatform } from '../helpers/platform.js';
import { type ReceivedMail, smtpSink } from '../helpers/smtp.js';
import { lasting } from '../helpers/scale.js';
import { until } from '../helpers/wait.js';
import { WsClient } from '../helpers/ws.js';

/**
 * Once no e-mail of the outbox has a job left to run (waiting, delayed or under way): from then on
 * nothing more is sent unless a job is added, so a count taken now is final.
 */
const outboxIdle = (queue: Queue) =>
  until('no outbox job left to run', async () =>
    (await queue.getJobs(['waiting', 'active', 'delayed', 'prioritized'])).some((j) => j.name === OUTBOX_JOB) ? undefined : true);

/** Once every job named is completed (a delayed one has run). */
const completed = (queue: Queue, ids: readonly string[]) =>
  until(`jobs ${ids.join(', ')} to complete`, async () => {
    for (const id of ids) if (!(await (await queue.getJob(id))?.isCompleted())) return undefined;
    return true;
  });

t.test('credential-reminders', async (t) => {
  /**
   * Expiry reminders of import and legacy export tokens, end to end over real SMTP (smtp-server
   * receiving, mailparser reading): a portal-made import token expiring in 29 days reaches each of its
   * originator's active managers once across two sweeps; a registry-file token reaches the managers and
   * the admins (accounts with the admin role and ADMIN_EMAILS), each address once; a legacy export token
   * the admins; a revoked token nobody; a token renewed before its reminder went out nobody. And the
   * rules underneath: which reminder is due, who is told, what the e-mail says.
   */
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
    await outboxIdle(queue);
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
      // Read again once completed: the job read first may predate its completion (no return value yet).
      return job && (await job.isCompleted()) ? queue.getJob('second-sweep') : undefined;
    }, 20_000);
    t.match(second.returnvalue, { reminded: 0, added: 0 }, 'the second sweep writes and adds nothing');
    await outboxIdle(queue);
    t.same(smtp.received.map((r) => r.to.join(',')).sort(), ['m1@example.org', 'm2@example.org'], 'each manager once');
    const rows = await p.sql<{ key: string; state: string }[]>`SELECT key, state FROM mail_outbox WHERE token_id = ${token.id}`;
    t.equal(rows.length, 2);
    t.ok(rows.every((r) => r.state === 'sent' && /^token:\d+:expiring:30:.*:to:[0-9a-f]{16}$/.test(r.key)), 'the 30-day reminder, sent');
  });
});

t.test('expiring-tokens', async (t) => {
  /**
   * The admins' live feed lists the tokens expiring within 30 days: in the snapshot (once read) and in an
   * `expiring_tokens` message whenever the list changes (a revocation, a token made, each snapshot read
   * again). Every kind (import, legacy export, personal), with its originator or owner and its expiry;
   * revoked tokens, tokens of deactivated owners and tokens expiring later are not listed; never a value.
   */
  async function insertToken(
    p: TestPlatform,
    t: { generation: string; originator?: string; user?: string; name: string; hint?: string; expiresInDays: number; revoked?: boolean },
  ): Promise<{ id: string; value: string }> {
    const value = `hrs_test_${t.name}_${Math.random().toString(36).slice(2)}_value`;
    const hash = createHash('sha256').update(value).digest();
    const [row] = await p.sql<{ id: string }[]>`
    INSERT INTO tokens (generation, originator_id, user_id, name, hash, hint, created_at, expires_at, revoked_at)
    VALUES (${t.generation}, ${t.originator ?? null}, ${t.user ?? null}, ${t.name}, ${hash}, ${t.hint ?? null}, now() - interval '300 days',
            now() + ${`${t.expiresInDays} days`}::interval, ${t.revoked ? new Date() : null})
    RETURNING id::text`;
    return { id: row!.id, value };
  }

  const feed = async (p: TestPlatform) => {
    const ws = await WsClient.connect(`${p.url.replace('http:', 'ws:')}/admin/v1/live`, { Authorization: `Bearer ${ADMIN_TOKEN}` });
    return ws;
  };

  /** The list the feed holds once it has been read: the snapshot's, or the next `expiring_tokens` message's. */
  async function listed(t: { equal(a: unknown, b: unknown, m: string): void }, ws: WsClient): Promise<Record<string, any>[]> {
    const snapshot = await ws.nextOf('snapshot');
    if (Array.isArray(snapshot.expiring_tokens)) return snapshot.expiring_tokens;
    t.equal(snapshot.expiring_tokens, null, 'not read yet: null');
    return (await ws.nextOf('expiring_tokens', 10_000)).tokens;
  }

  t.test('the feed lists the tokens expiring within 30 days, and follows a revocation', async (t) => {
    const p = await startTestPlatform(t, { fixture: baseFixture() });
    await p.sql`INSERT INTO users (id, email, deactivated_at) VALUES ('bob', 'bob@example.org', now())`;
    const imp = await insertToken(p, { generation: 'import_v2', originator: 'mon-1', name: 'ci-north', hint: 'AbCd', expiresInDays: 20 });
    const legacy = await insertToken(p, { generation: 'export_v1', name: 'old-client', expiresInDays: 6 });
    const personal = await insertToken(p, { generation: 'export_v2', user: 'alice', name: 'phone', hint: 'PpPp', expiresInDays: 3 });
    await insertToken(p, { generation: 'import_v1', originator: 'mon-1', name: 'revoked-one', expiresInDays: 5, revoked: true });
    await insertToken(p, { generation: 'import_v1', originator: 'mon-1', name: 'later', expiresInDays: 40 });
    await insertToken(p, { generation: 'export_v2', user: 'bob', name: 'deactivated-owner', hint: 'DdDd', expiresInDays: 4 });

    const ws = await feed(p);
    t.teardown(() => ws.close());
    const list = await listed(t, ws);
    t.same(list.map((x) => x.name), ['phone', 'old-client', 'ci-north'], 'soonest first; revoked, later and deactivated owners left out');
    t.match(list[2], {
      id: imp.id,
      kind: 'import_v2',
      name: 'ci-north',
      hint: 'AbCd',
      originator: { id: 'mon-1', name: 'Monitoring One' },
      user: null,
      source: 'portal',
    });
    t.match(list[1], { id: legacy.id, kind: 'export_v1', originator: null, user: null, source: 'registry', hint: null });
    t.match(list[0], { id: personal.id, kind: 'export_v2', user: { id: 'alice', email: 'alice@example.org' } });
    const [row] = await p.sql<{ expires_at: Date }[]>`SELECT expires_at FROM tokens WHERE id = ${imp.id}`;
    t.equal(list[2]!.expires_at, row!.expires_at.toISOString(), 'its expiry');
    const text = JSON.stringify(list);
    for (const token of [imp, legacy, personal]) t.notOk(text.includes(token.value), 'never a value');

    // Revoked through the admin API: every admin gets the list again without it.
    const res = await fetch(`${p.url}/admin/v1/tokens/${legacy.id}/revoke`, { method: 'POST', headers: { Authorization: `Bearer ${ADMIN_TOKEN}` } });
    t.equal(res.status, 200);
    const after = await ws.nextOf('expiring_tokens', 10_000);
    t.same(after.tokens.map((x: { name: string }) => x.name), ['phone', 'ci-north'], 'the revoked token leaves the list');
    t.equal(after.within_days, 30);

    // A second admin: the snapshot carries the list as last read.
    const second = await feed(p);
    t.teardown(() => second.close());
    const snapshot = await second.nextOf('snapshot');
    t.same(snapshot.expiring_tokens.map((x: { name: string }) => x.name), ['phone', 'ci-north'], 'in the snapshot');
  });
});

t.test('mail-worker', async (t) => {
  const MAIL_FROM = 'HRS <no-reply@hrs.example>';

  interface ReceivedMail {
    mailFrom: string | undefined;
    rcptTo: string[];
    raw: string;
    headers: Map<string, string>;
    body: string;
  }

  type Test = Parameters<typeof testConfig>[0];

  /** Splits a raw RFC 5322 message into unfolded headers (lower-cased names) and its body. */
  function parseMessage(raw: string): { headers: Map<string, string>; body: string } {
    const end = raw.indexOf('\r\n\r\n');
    const head = end === -1 ? raw : raw.slice(0, end);
    const body = end === -1 ? '' : raw.slice(end + 4);
    const headers = new Map<string, string>();
    for (const line of head.replace(/\r\n[ \t]+/g, ' ').split('\r\n')) {
      const colon = line.indexOf(':');
      if (colon > 0) headers.set(line.slice(0, colon).trim().toLowerCase(), line.slice(colon + 1).trim());
    }
    return { headers, body };
  }

  /** An SMTP server on a free local port that keeps every message it accepts. */
  async function startSmtp(t: Test) {
    const received: ReceivedMail[] = [];
    let connections = 0;
    const server = new SMTPServer({
      authOptional: true,
      disabledCommands: ['STARTTLS'],
      logger: false,
      closeTimeout: 1000,
      onConnect(_session, callback) {
        connections++;
        callback();
      },
      onData(stream, session, callback) {
        const chunks: Buffer[] = [];
        stream.on('data', (chunk: Buffer) => chunks.push(chunk));
        stream.on('error', callback);
        stream.on('end', () => {
          const raw = Buffer.concat(chunks).toString('utf8');
          const mailFrom = session.envelope.mailFrom;
          received.push({
            mailFrom: mailFrom === false ? undefined : mailFrom.address,
            rcptTo: session.envelope.rcptTo.map((r) => r.address),
            raw,
            ...parseMessage(raw),
          });
          callback();
        });
      },
    });
    await new Promise<void>((resolve, reject) => {
      server.server.once('error', reject);
      server.listen(0, '127.0.0.1', () => resolve());
    });
    const { port } = server.server.address() as AddressInfo;
    return {
      port,
      received,
      connections: () => connections,
      close: () => new Promise<void>((resolve) => server.close(() => resolve())),
    };
  }


  /** Workers and a mail queue against a fresh Redis prefix; everything is closed when the test ends. */
  async function mailSetup(t: Test, env: Record<string, string>) {
    const config = testConfig(t, env);
    const redis = await openRedis(config.redisUrl, 'hrs-test');
    // For the call-log worker, which starts too; the pool connects only on a query, and no call-log
    // job arrives here.
    const sql = connect(config.databaseUrl, { max: 1 });
    let workers: Workers | undefined;
    let queue: Queue | undefined;
    t.teardown(async () => {
      await workers?.close();
      if (queue) {
        await queue.obliterate({ force: true });
        await queue.close();
      }
      await closeRedis(redis);
      await sql.end({ timeout: 1 });
    });
    workers = startWorkers(config, redis, sql, createLogger('silent'));
    queue = openQueue('mail', redis, config.redisPrefix);
    return { config, redis, workers, queue };
  }

  t.test('a mail job is delivered over SMTP with the configured sender', async (t) => {
    const smtp = await startSmtp(t);
    t.teardown(smtp.close);
    const { workers, queue } = await mailSetup(t, { SMTP_URL: `smtp://127.0.0.1:${smtp.port}`, MAIL_FROM });
    t.same(workers.names, ['mail', 'call-log', 'change-log', 'alerts']);

    const job = await queue.add('token-created', { to: 'alice@example.org', subject: 'Your token', text: 'hello' });
    await until('the message to arrive', () => (smtp.received.length > 0 ? true : undefined));
    // Counted once the job has completed, so a second delivery by the same job would show.
    await until('the job to complete', async () => ((await job.getState()) === 'completed' ? true : undefined));

    t.equal(smtp.received.length, 1, 'exactly one message');
    const mail = smtp.received[0]!;
    t.equal(mail.mailFrom, 'no-reply@hrs.example', 'envelope sender');
    t.same(mail.rcptTo, ['alice@example.org'], 'envelope recipient');
    t.equal(mail.headers.get('from'), MAIL_FROM, 'From header is MAIL_FROM');
    t.equal(mail.headers.get('to'), 'alice@example.org', 'To header');
    t.equal(mail.headers.get('subject'), 'Your token', 'Subject header');
    t.match(mail.headers.get('content-type') ?? '', /^text\/plain/, 'plain text');
    t.equal(mail.body.replace(/\r\n$/, ''), 'hello', 'body');

    const done = await queue.getJob(job.id!);
    t.ok(done, 'the completed job is kept');
    t.equal(done?.attemptsMade, 1, 'sent on the first attempt');
    t.match(done?.returnvalue, { messageId: String });
  });

  t.test('an invalid mail job fails at once, without retries and without sending', async (t) => {
    const smtp = await startSmtp(t);
    t.teardown(smtp.close);
    const { queue } = await mailSetup(t, { SMTP_URL: `smtp://127.0.0.1:${smtp.port}`, MAIL_FROM });

    const added = await queue.add('token-created', { to: 'not-an-email' });
    t.equal(added.opts.attempts, 8, 'the queue would retry an ordinary failure');
    await until('the job to settle', async () => {
      const state = await added.getState();
      return state === 'failed' || state === 'completed' || state === 'delayed' ? state : undefined;
    });

    const job = await queue.getJob(added.id!);
    t.ok(job, 'the failed job is kept');
    t.equal(await job!.getState(), 'failed', 'ends failed, not delayed for a retry');
    t.equal(job!.attemptsMade, 1, 'tried once');
    t.match(job!.failedReason, /^invalid mail job/);
    // The mail sweep's next run is a delayed job of its own: only retries count here.
    t.same((await queue.getDelayed()).filter((j) => j.name !== SWEEP_JOB).map((j) => j.name), [], 'nothing scheduled for a retry');
    t.equal(smtp.received.length, 0, 'no mail sent');
    t.equal(smtp.connections(), 0, 'the SMTP server was not even contacted');
  });

  t.test('without SMTP_URL no mail worker starts (the call-log and change-log workers need none)', async (t) => {
    const config = testConfig(t, { MAIL_FROM });
    t.equal(config.smtpUrl, undefined);
    const redis = await openRedis(config.redisUrl, 'hrs-test');
    const sql = connect(config.databaseUrl, { max: 1 });
    const workers = startWorkers(config, redis, sql, createLogger('silent'));
    t.teardown(async () => {
      await workers.close();
      await closeRedis(redis);
      await sql.end({ timeout: 1 });
    });
    t.same(workers.names, ['call-log', 'change-log', 'alerts']);
  });
});

t.test('token-mail-delivery', async (t) => {
  /**
   * The token e-mails end to end over real SMTP (smtp-server receiving, mailparser reading): created,
   * the reminders on a schedule of seconds at their time, an expiry changed twice (only the latest
   * reminders), revoked by the owner and by an admin (no reminder after), a Redis flush made good by the
   * sweep, a 4xx then 250 delivered once, a 5xx failed and listed for admins, and the ledger refusing
   * a second delivery of the same e-mail.
   */
  const MAIL_FROM = 'HRS signal platform <no-reply@hrs.example>';
  const SECOND = 1000;



  /** The platform with the standard registry, its workers (mail included) and a lifecycle bound to it. */
  async function setup(t: Test, reminders = '2s,1s') {
    const smtp = await smtpSink(t);
    const p = await startTestPlatform(t, {
      fixture: baseFixture(),
      env: {
        SMTP_URL: `smtp://127.0.0.1:${smtp.port}`,
        MAIL_FROM,
        TOKEN_REMINDERS: reminders,
        MAIL_TIME_ZONE: 'Europe/Berlin',
        // A delivery refused for the moment is tried again after this long: the default's 5 s at the full scale.
        MAIL_RETRY_DELAY: String(lasting(5, 0.2)),
      },
    });
    const workers = startWorkers(p.parts.config, p.parts.redis, p.sql, createLogger('silent'));
    t.teardown(() => workers.close());
    const queue = openQueue(QUEUES.mail, p.parts.redis, p.parts.config.redisPrefix);
    t.teardown(() => queue.close());
    // The expiry bounds (a day at least) are the API's rule: the e-mails are tested on a schedule of seconds.
    const tokens = new PersonalTokens(p.sql, { reminderOffsetsMs: p.parts.config.tokenReminderOffsetsMs, checkExpiry: () => null });
    const log = createLogger('silent');
    return { smtp, p, queue, tokens, schedule: (mail: Parameters<typeof scheduleMail>[1]) => scheduleMail(queue, mail, log, undefined, p.parts.config.mailRetryMs) };
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
    const { smtp, tokens, schedule, p, queue } = await setup(t);
    const feed = await WsClient.connect(`${p.url.replace('http:', 'ws:')}/admin/v1/live`, { Authorization: `Bearer ${ADMIN_TOKEN}` });
    t.teardown(() => feed.close());
    await feed.nextOf('snapshot');
    // The reminders 2 s and 1 s before: the created e-mail has two seconds to arrive first.
    const expiresAt = new Date(Date.now() + 4 * SECOND);
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
    await outboxIdle(queue);
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
    const { smtp, tokens, schedule, p, queue } = await setup(t);
    const created = await tokens.create('alice', 'ci', new Date(Date.now() + 60 * SECOND));
    await schedule(created.mail);
    const second = new Date(Date.now() + 40 * SECOND);
    await schedule((await tokens.changeExpiry(created.token.id, second)).mail);
    const latest = new Date(Date.now() + 3 * SECOND);
    await schedule((await tokens.changeExpiry(created.token.id, latest)).mail);
    await until('the latest reminders', () => (smtp.received.length >= 3 ? true : undefined), 20_000);
    t.same((await settled(p, created.token.id)).filter((s) => !s.endsWith('cancelled')), [
      'created sent',
      `expiring:30:${latest.toISOString()} sent`,
      `expiring:7:${latest.toISOString()} sent`,
    ], 'the latest expiry\'s reminders sent');
    t.equal((await states(p, created.token.id)).filter((s) => s.endsWith('cancelled')).length, 4, 'the four earlier ones cancelled');

    const other = await tokens.create('alice', 'phone', new Date(Date.now() + 3 * SECOND));
    await schedule(other.mail);
    const revoked = await tokens.revoke(other.token.id, 'owner');
    await schedule(revoked!.mail);
    await until('the revocation', () => (smtp.received.some((r) => /phone.*revoked/i.test(r.mail.subject ?? '')) ? true : undefined));
    // Its reminders' jobs, due 1 s and 2 s after it was made, have run (and found them cancelled).
    const reminders = await p.sql<{ key: string }[]>`SELECT key FROM mail_outbox WHERE token_id = ${other.token.id} AND key LIKE '%:expiring:%'`;
    t.equal(reminders.length, 2, 'its two reminders were meant');
    await completed(queue, reminders.map((r) => outboxJobId(r.key)));
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
    const { smtp, tokens, p, queue } = await setup(t);
    // The workers sweep once as they start: that sweep must be over before the token exists, or it,
    // not the one below, would give the e-mails their jobs.
    await until('the workers\' first sweep', async () => ((await queue.getJobs(['completed'])).some((j) => j.name === SWEEP_JOB) ? true : undefined), 20_000);
    const created = await tokens.create('alice', 'flushed', new Date(Date.now() + 3 * SECOND));
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
    await completed(queue, ['duplicate-of-created']);
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
});
