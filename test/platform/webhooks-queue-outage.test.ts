/**
 * The webhook routes that queue a job (ping, re-enable) tell the truth while Redis is down: a 503
 * `queue_unavailable` with `Retry-After` at once, not a request left hanging; the subscription's own
 * changes are kept (re-enabled stays re-enabled), and asking again once Redis is back queues the job.
 */
import { randomBytes } from 'node:crypto';
import { Queue, createNodeRedisClient } from 'bullmq';
import t from 'tap';
import { closeRedis, openRedis } from '../../src/infra/redis.js';
import { bullPrefix, QUEUES } from '../../workers/queues.js';
import { deliverJobId } from '../../workers/webhooks/jobs.js';
import { startTestPlatform } from '../helpers/platform.js';
import { ACCOUNTS, portalFixture, signedIn } from '../helpers/portal.js';
import { privateRedis } from '../helpers/private-services.js';
import { until } from '../helpers/wait.js';

const redis = await privateRedis(t);
const p = await startTestPlatform(t, { fixture: portalFixture(), env: { REDIS_URL: redis.url, WEBHOOK_SECRET_KEY: randomBytes(32).toString('hex') } });
const alice = await signedIn(p, ACCOUNTS.none);

t.test('Redis down: ping and re-enable answer 503 at once; once it is back the job is queued', async (t) => {
  const made = (await alice.call('POST', '/portal/v1/webhooks', { url: 'https://93.184.215.14/hook', kinds: ['events'] })).body;
  const path = `/portal/v1/webhooks/${made.id}`;
  await p.sql`UPDATE webhook_subscriptions SET state = 'disabled', disabled_at = now(), disabled_reason = 'failing' WHERE id = ${made.id}`;

  await redis.stop();
  await until('the client has seen Redis go', () => (p.parts.redis.isReady ? undefined : true));
  const started = Date.now();
  const ping = await alice.call('POST', `${path}/ping`);
  t.equal(ping.status, 503, 'ping: 503');
  t.match(ping.body, { code: 'queue_unavailable', detail: /could not be queued/ });
  t.equal(ping.headers.get('retry-after'), '5');
  const enable = await alice.call('PATCH', path, { state: 'active' });
  t.equal(enable.status, 503, 're-enable: 503');
  t.match(enable.body, { code: 'queue_unavailable' });
  t.ok(Date.now() - started < 5000, 'answered at once');
  t.match((await alice.call('GET', path)).body, { state: 'active', disabled_at: null }, 'the subscription is re-enabled all the same');

  await redis.start();
  await until('Redis answers again', () => (p.parts.redis.isReady ? true : undefined));
  t.equal((await alice.call('PATCH', path, { state: 'active' })).status, 200, 'asked again: 200');
  t.equal((await alice.call('POST', `${path}/ping`)).status, 202);
  const client = await openRedis(redis.url, 'webhooks-outage-test');
  const queue = new Queue(QUEUES.webhooks, { connection: createNodeRedisClient(client), prefix: bullPrefix(p.parts.config.redisPrefix) });
  t.teardown(async () => {
    await queue.close();
    await closeRedis(client);
  });
  const jobs = await queue.getJobs(['waiting', 'delayed', 'prioritized']);
  t.same(jobs.map((j) => [j.name, j.id === deliverJobId(made.id) || j.name === 'ping']).sort(), [['deliver', true], ['ping', true]], 'the deliver job and the ping');
});
