/**
 * `POST /portal/v1/sign-in` tells the truth when the link cannot be made: while PostgreSQL (where the
 * link is stored) or Redis (where its e-mail is queued) is down the answer is a 503 with `Retry-After`
 * in the portal's error format, for known and unknown addresses alike (nothing disclosed), and no
 * e-mail goes out; once both are back a known address gets its link and an unknown one the same 202.
 */
import t, { type Test } from 'tap';
import { createLogger } from '../../src/config/log.js';
import { startWorkers } from '../../workers/index.js';
import { baseFixture } from '../helpers/fixtures.js';
import { startTestPlatform, type TestPlatform } from '../helpers/platform.js';
import { privatePostgres, privateRedis } from '../helpers/private-services.js';
import { smtpSink } from '../helpers/smtp.js';
import { until } from '../helpers/wait.js';

const KNOWN = 'alice@example.org';
const UNKNOWN = 'nobody@example.org';

async function setup(t: Test, env: Record<string, string>) {
  const smtp = await smtpSink(t);
  const p = await startTestPlatform(t, { fixture: baseFixture(), env: { SMTP_URL: `smtp://127.0.0.1:${smtp.port}`, DATABASE_TIMEOUT: '2', ...env } });
  const workers = startWorkers(p.parts.config, p.parts.redis, p.sql, createLogger('silent'));
  t.teardown(() => workers.close());
  return { smtp, p };
}

async function signIn(p: TestPlatform, email: string) {
  const res = await fetch(`${p.url}/portal/v1/sign-in`, {
    method: 'POST',
    headers: { Origin: p.url, 'Content-Type': 'application/json' },
    body: JSON.stringify({ email }),
  });
  return { status: res.status, type: res.headers.get('content-type'), retryAfter: res.headers.get('retry-after'), body: (await res.json()) as any };
}

async function linkArrives(t: Test, smtp: Awaited<ReturnType<typeof smtpSink>>, p: TestPlatform) {
  const before = smtp.received.length;
  const known = await signIn(p, KNOWN);
  const unknown = await signIn(p, UNKNOWN);
  t.equal(known.status, 202, 'a known address: 202');
  t.same(unknown, known, 'an unknown address: the very same answer');
  await until('the sign-in e-mail', () => smtp.received.slice(before).find((r) => r.to.includes(KNOWN)));
}

function refused(t: Test, answer: Awaited<ReturnType<typeof signIn>>, what: string, detail: RegExp) {
  t.equal(answer.status, 503, `${what}: 503`);
  t.equal(answer.retryAfter, '5', `${what}: Retry-After`);
  t.match(answer.type, /^application\/problem\+json/, `${what}: the portal's error format`);
  t.equal(answer.body.status, 503);
  t.match(answer.body.detail, detail, what);
  t.notMatch(answer.body.detail, /on its way/, `${what}: never "on its way"`);
}

t.test('PostgreSQL down: 503 with Retry-After for any address, no e-mail; a link again once it is back', async (t) => {
  const pg = await privatePostgres(t);
  const { smtp, p } = await setup(t, { DATABASE_URL: pg.url('hrs_sign_in') });
  await linkArrives(t, smtp, p);

  await pg.stop();
  const before = smtp.received.length;
  const known = await signIn(p, KNOWN);
  refused(t, known, 'a known address', /no sign-in link could be made.*nothing was sent/i);
  t.equal(known.body.code, 'service_unavailable');
  const unknown = await signIn(p, UNKNOWN);
  t.same(unknown, known, 'an unknown address: the very same answer');

  await pg.start();
  await until('PostgreSQL answers again', async () => ((await fetch(`${p.url}/readyz`)).status === 200 ? true : undefined));
  await linkArrives(t, smtp, p);
  t.notOk(smtp.received.slice(before, -1).some((r) => r.to.includes(KNOWN)), 'nothing was sent while PostgreSQL was down');
});

t.test('Redis down: the e-mail cannot be queued, 503 for any address; a link again once it is back', async (t) => {
  const redis = await privateRedis(t);
  const { smtp, p } = await setup(t, { REDIS_URL: redis.url });
  await linkArrives(t, smtp, p);

  await redis.stop();
  await until('the client has seen Redis go', () => (p.parts.redis.isReady ? undefined : true));
  const known = await signIn(p, KNOWN);
  refused(t, known, 'a known address', /could not be queued.*nothing was sent/i);
  t.equal(known.body.code, 'mail_unavailable');
  t.same(await signIn(p, UNKNOWN), known, 'an unknown address: the very same answer');
  const links = await p.sql<{ n: number }[]>`SELECT count(*)::int AS n FROM sign_in_links`;
  t.equal(links[0]!.n, 1, 'no link stored for nothing: only the first one');

  await redis.start();
  await until('Redis answers again', () => (p.parts.redis.isReady ? true : undefined));
  await linkArrives(t, smtp, p);
});
