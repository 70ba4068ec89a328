/**
 * What bounds a token owner's webhooks: what reaches out (a subscription made, a URL changed, a test
 * ping) spends one budget per account, WEBHOOK_RATE_LIMIT a minute, answered 429 with Retry-After in
 * the portal's problem format past it, while other accounts and the changes that reach nowhere go on;
 * and no portal request waits past PORTAL_REQUEST_TIMEOUT, whatever it waits on (here a frozen
 * PostgreSQL with a DATABASE_TIMEOUT far longer): a 503 with Retry-After, a change's saying it may
 * still be applied.
 */
import t from 'tap';
import { randomBytes } from 'node:crypto';
import { startTestPlatform } from '../helpers/platform.js';
import { ACCOUNTS, portalFixture, signedIn } from '../helpers/portal.js';
import { privatePostgres } from '../helpers/private-services.js';
import { timedCall } from '../helpers/timed-call.js';

const LIST = '/portal/v1/webhooks';
const PUBLIC_URL = 'https://93.184.215.14/hooks/hrs';

t.test('subscriptions made, URLs changed and pings share WEBHOOK_RATE_LIMIT per account; 429 with Retry-After past it', async (t) => {
  const p = await startTestPlatform(t, { fixture: portalFixture(), env: { WEBHOOK_SECRET_KEY: randomBytes(32).toString('hex'), WEBHOOK_RATE_LIMIT: '3' } });
  const alice = await signedIn(p, ACCOUNTS.none);
  const staff = await signedIn(p, ACCOUNTS.staff);
  const made = await alice.call('POST', LIST, { url: PUBLIC_URL, kinds: ['events'] });
  t.equal(made.status, 201, 'a subscription: the first of 3');
  t.equal(made.headers.get('ratelimit-limit'), '3');
  t.equal(made.headers.get('ratelimit-remaining'), '2');
  const id = made.body.id as string;
  t.equal((await alice.call('PATCH', `${LIST}/${id}`, { url: `${PUBLIC_URL}/2` })).status, 200, 'a URL changed: the second');
  t.equal((await alice.call('POST', `${LIST}/${id}/ping`)).status, 202, 'a test ping: the third');

  for (const [what, answer] of [
    ['a fourth subscription', await alice.call('POST', LIST, { url: PUBLIC_URL, kinds: ['events'] })],
    ['a URL changed again', await alice.call('PATCH', `${LIST}/${id}`, { url: `${PUBLIC_URL}/3` })],
    ['another ping', await alice.call('POST', `${LIST}/${id}/ping`)],
  ] as const) {
    t.equal(answer.status, 429, `${what}: 429`);
    t.match(answer.headers.get('content-type'), /^application\/problem\+json/, `${what}: a problem body`);
    t.match(answer.body, { status: 429, code: 'throttled', detail: /^Rate limit exceeded: at most 3 webhook subscriptions made, URLs changed and test pings sent per minute per account\. Retry in \d+ seconds?\.$/ });
    t.match(answer.headers.get('retry-after'), /^\d+$/, `${what}: Retry-After`);
  }
  const stored = await p.sql<{ url: string }[]>`SELECT url FROM webhook_subscriptions WHERE user_id = ${ACCOUNTS.none}`;
  t.same(stored.map((r) => r.url), [`${PUBLIC_URL}/2`], 'nothing refused was stored or changed');
  t.equal((await alice.call('PATCH', `${LIST}/${id}`, { description: 'still mine' })).status, 200, 'a change that reaches nowhere is not counted');
  t.equal((await alice.call('GET', LIST)).status, 200, 'reading is not counted');
  t.equal((await staff.call('POST', LIST, { url: PUBLIC_URL, kinds: ['events'] })).status, 201, 'another account has its own budget');
});

t.test('no portal request waits past PORTAL_REQUEST_TIMEOUT, whatever it waits on', async (t) => {
  const pg = await privatePostgres(t);
  const p = await startTestPlatform(t, {
    fixture: portalFixture(),
    env: { DATABASE_URL: pg.url('hrs_portal_deadline'), DATABASE_TIMEOUT: '30', PORTAL_REQUEST_TIMEOUT: '1', WEBHOOK_SECRET_KEY: randomBytes(32).toString('hex'), LOG_LEVEL: 'warn' },
  });
  const alice = await signedIn(p, ACCOUNTS.none);
  t.equal((await alice.call('GET', LIST)).status, 200, 'answered while PostgreSQL runs');
  pg.freeze();
  t.teardown(() => pg.thaw());
  const headers = { Origin: p.url, Cookie: alice.cookie!, 'Content-Type': 'application/json' };
  const [read, change] = await Promise.all([
    timedCall('a read', `${p.url}${LIST}`, { headers }),
    timedCall('a change', `${p.url}${LIST}`, { method: 'POST', headers, body: JSON.stringify({ url: PUBLIC_URL, kinds: ['events'] }) }),
  ]);
  pg.thaw();
  for (const answer of [read, change]) {
    t.equal(answer.status, 503, `${answer.name}: 503 (${Math.round(answer.ms)} ms)`);
    // A generous bound on a deadline of 1 s: DATABASE_TIMEOUT (30 s) would answer far later.
    t.ok(answer.ms < 8000, `${answer.name}: answered by the deadline, not by DATABASE_TIMEOUT`);
    t.equal(answer.retryAfter, '5', `${answer.name}: Retry-After`);
    t.match(answer.type, /^application\/problem\+json/, `${answer.name}: a problem body`);
  }
  t.match(JSON.parse(read.body), { code: 'service_unavailable', detail: 'The platform could not answer within 1 second: try again later.' });
  t.match(JSON.parse(change.body), { code: 'service_unavailable', detail: /within 1 second: the change may still be applied\. Check before sending it again/ });
  t.ok(p.logs.lines.some((l) => l.msg === 'request not answered within its deadline'), 'logged as a warning');
});
