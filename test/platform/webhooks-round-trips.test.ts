/**
 * What a delivered webhook message costs in round trips: every statement the webhook worker sends to
 * PostgreSQL (counted by the client's debug hook on a pool of its own) and every command it sends to
 * Redis on the webhook queue's keys (MONITOR on a private Redis; a script's own commands aside), over
 * ten messages, each one change delivered alone. The safety-net poll is set far out so only the
 * LISTEN wakes and the deliveries count. A message costs a claim that reads it (its changes come
 * with it), its storing as pending, and one statement recording the answer and moving the cursor; the
 * claim that finds nothing more ends the worker's wake. Before PostgreSQL was delivery's one queue
 * (migration 0017) it was 11 statements and 8 Redis commands.
 */
import t from 'tap';
import { connect } from '../../db/connect.js';
import { createLogger } from '../../src/config/log.js';
import { boundedResolver } from '../../src/infra/name-resolver.js';
import { closeRedis, openRedis } from '../../src/infra/redis.js';
import { startWebhookWorker } from '../../workers/webhooks/processor.js';
import { baseFixture } from '../helpers/fixtures.js';
import { startTestPlatform } from '../helpers/platform.js';
import { privateRedis } from '../helpers/private-services.js';
import { until } from '../helpers/wait.js';
import { deliveredChanges, receiver, subscribe, webhookKey } from '../helpers/webhooks.js';
import { withEvents } from '../helpers/webhook-outage.js';

const MESSAGES = 10;

t.test('round trips per delivered message', async (t) => {
  const redis = await privateRedis(t);
  const p = await startTestPlatform(t, { fixture: baseFixture(), env: { REDIS_URL: redis.url, WEBHOOK_SECRET_KEY: webhookKey(), WEBHOOK_ALLOW_LOOPBACK: 'true' } });
  const key = p.parts.config.webhookSecretKey!;
  const r = await receiver(t, []);
  const sub = await subscribe(p.sql, key, { url: r.url, kinds: ['station_records'] });
  r.state.secrets.push(sub.secret);

  let statements = 0;
  const sql = connect(p.parts.config.databaseUrl, { debug: () => void statements++ });
  const workerRedis = await openRedis(redis.url, 'webhooks-round-trips');
  const monitor = await openRedis(redis.url, 'webhooks-round-trips-monitor');
  // Commands a client sent (not those a script ran: MONITOR tags them `lua`) on the webhook queue's keys.
  const queueKeys = `${p.parts.config.redisPrefix}:bull:webhooks:`;
  let commands = 0;
  await monitor.monitor((line: string) => {
    if (!line.includes(' lua]') && line.includes(`"${queueKeys}`)) commands++;
  });
  const worker = await startWebhookWorker({
    redis: workerRedis,
    redisPrefix: p.parts.config.redisPrefix,
    sql,
    log: createLogger('silent'),
    secretKey: key,
    baseUrl: p.parts.config.baseUrl,
    timeoutMs: 5000,
    allowLoopback: true,
    resolver: boundedResolver({ timeoutMs: 2000 }),
    giveUpAfterMs: 3600_000,
    stations: () => p.parts.registry,
    timing: { pollEveryMs: 3600_000 },
  });
  t.teardown(async () => {
    await worker.close();
    await sql.end({ timeout: 1 });
    await closeRedis(monitor);
    await closeRedis(workerRedis);
  });
  // Settled: the start's sweep is over and nothing is due.
  await new Promise((resolve) => setTimeout(resolve, 1500));
  const [sqlBefore, redisBefore] = [statements, commands];
  for (let i = 1; i <= MESSAGES; i++) {
    await p.load(withEvents([], `Berlin Airport ${i}`));
    await until(`message ${i}`, () => (deliveredChanges(r).length >= i ? true : undefined));
    // The worker finishes its turn (records the answer, finds nothing more) before the next change.
    await until('the worker idle', async () => {
      const seen = statements;
      await new Promise((resolve) => setTimeout(resolve, 300));
      return statements === seen ? true : undefined;
    });
  }
  const perMessage = { sql: (statements - sqlBefore) / MESSAGES, redis: (commands - redisBefore) / MESSAGES };
  t.comment(`per delivered message: ${perMessage.sql} SQL statements, ${perMessage.redis} Redis commands`);
  t.equal(r.delivered().length, MESSAGES, 'one message per change');
  // 4 measured: claim and read, store as pending, record and advance, the claim that finds nothing more
  // (a notification arriving during a claim may add one).
  t.ok(perMessage.sql <= 5, `at most 5 statements a message (${perMessage.sql})`);
  t.equal(perMessage.redis, 0, 'no Redis command');
});
