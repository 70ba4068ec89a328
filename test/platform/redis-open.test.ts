/** Opening Redis at start: an unreachable server and a refused connection are told apart, by their cause. */
import t from 'tap';
import type { EventEmitter } from 'node:events';
import { openRedis, REDIS_LISTENERS, RedisUnavailableError } from '../../src/infra/redis.js';
import { createLogger } from '../../src/config/log.js';
import { startPlatform } from '../../src/platform.js';
import { openQueue, QUEUES } from '../../workers/queues.js';
import { freePort, testConfig } from '../helpers/platform.js';
import { testRedisDatabase } from '../helpers/services.js';

t.test('a database number out of range says so, not "not reachable"', async (t) => {
  const err = await openRedis(testRedisDatabase(99), 'test').then(
    () => undefined,
    (e: unknown) => e,
  );
  t.type(err, RedisUnavailableError);
  t.match((err as Error).message, /DB index is out of range/);
  t.notMatch((err as Error).message, /not reachable/);
});

t.test('nothing listening is "not reachable", with the URL and how to start one', async (t) => {
  const port = await freePort();
  const err = await openRedis(`redis://127.0.0.1:${port}`, 'test').then(
    () => undefined,
    (e: unknown) => e,
  );
  t.type(err, RedisUnavailableError);
  t.match((err as Error).message, new RegExp(`Redis at redis://127\\.0\\.0\\.1:${port}.* is not reachable`));
});

t.test('hrs serve\'s Redis client has room for the BullMQ queues and workers that listen on it', async (t) => {
  // BullMQ's wrapper adds an 'error' listener per queue and worker to the shared client and keeps it:
  // past Node's default of ten, every start printed a MaxListenersExceededWarning.
  const warnings: Error[] = [];
  const onWarning = (warning: Error) => warnings.push(warning);
  process.on('warning', onWarning);
  t.teardown(() => void process.off('warning', onWarning));
  // As `hrs serve` runs by default: the workers in the process, the sandbox on.
  const platform = await startPlatform(testConfig(t, { SANDBOX: 'on' }), createLogger('silent'), { workers: true });
  t.teardown(() => platform.stop('test over'));
  const redis = platform.parts.redis;
  const errorListeners = () => (redis as unknown as EventEmitter).listenerCount('error');
  t.ok(errorListeners() >= 10, `the queues and workers listen on the shared client (${errorListeners()} 'error' listeners; Node warns past 10 by default)`);
  // A few queues more (a feature's, a test's) still fit.
  const more = [QUEUES.mail, QUEUES.history, QUEUES.callLog].map((name) => openQueue(name, redis, platform.parts.config.redisPrefix));
  t.teardown(() => Promise.all(more.map((q) => q.close())));
  t.ok(errorListeners() <= REDIS_LISTENERS / 2, `${errorListeners()} with three queues more: room for as many again (bound ${REDIS_LISTENERS})`);
  await new Promise((resolve) => setImmediate(resolve));
  t.same(warnings.filter((w) => w.name === 'MaxListenersExceededWarning').map((w) => w.message), [], 'no leak warning');
});

t.test("a caller's deadline shorter than the client's bound does not count Redis as down; the bound does", async (t) => {
  const { TEST_REDIS_URL } = await import('../helpers/services.js');
  const { closeRedis, redisUsable, withinRedis } = await import('../../src/infra/redis.js');
  const redis = await openRedis(TEST_REDIS_URL, 'test-deadline', { waitMs: 300 });
  t.teardown(() => closeRedis(redis));
  const never = new Promise<never>(() => {});
  await t.rejects(
    withinRedis(redis, never, 5),
    { code: 'REDIS_DEADLINE', message: "the caller's deadline (5 ms) passed before Redis answered; not an outage (REDIS_TIMEOUT is 300 ms)" },
    'what is left of a wait runs out: the message names the caller\'s deadline, not a Redis that did not answer',
  );
  t.ok(redisUsable(redis), 'the client still counts as usable: the deadline was the caller\'s');
  await t.rejects(withinRedis(redis, never), { code: 'REDIS_TIMEOUT', message: 'Redis did not answer within 300 ms (REDIS_TIMEOUT)' }, 'the client\'s own bound runs out');
  t.notOk(redisUsable(redis), 'now Redis counts as not answering');
  // Redis answers the PING sent behind the "unanswered" command (here: none was sent), so it is usable again.
  for (let i = 0; i < 100 && !redisUsable(redis); i++) await new Promise((r) => setTimeout(r, 10));
  t.ok(redisUsable(redis), 'usable again once Redis answers a PING');
});
