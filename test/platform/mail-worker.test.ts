import t from 'tap';
import type { AddressInfo } from 'node:net';
import { SMTPServer } from 'smtp-server';
import type { Queue } from 'bullmq';
import { connect } from '../../db/connect.js';
import { closeRedis, openRedis } from '../../src/infra/redis.js';
import { createLogger } from '../../src/config/log.js';
import { startWorkers, type Workers } from '../../workers/index.js';
import { openQueue } from '../../workers/queues.js';
import { SWEEP_JOB } from '../../workers/mail/job.js';
import { testConfig } from '../helpers/platform.js';
import { until } from '../helpers/wait.js';

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
  t.same(workers.names, ['mail', 'call-log', 'change-log']);

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
  t.same(workers.names, ['call-log', 'change-log']);
});
