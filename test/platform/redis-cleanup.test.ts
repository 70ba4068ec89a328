/**
 * The test suite leaves nothing behind in Redis: a test that started a platform, made it write rate
 * limits and call-log jobs, and stopped it, finds no key under its REDIS_PREFIX once it is over.
 */
import t from 'tap';
import { closeRedis, openRedis } from '../../src/infra/redis.js';
import { baseFixture, TOKENS } from '../helpers/fixtures.js';
import { get, redisKeys, startTestPlatform } from '../helpers/platform.js';
import { until } from '../helpers/wait.js';
import { TEST_REDIS_URL } from '../helpers/services.js';

const REDIS_URL = TEST_REDIS_URL;

t.test('a test that ran a platform leaves no key under its Redis prefix', async (t) => {
  let prefix = '';
  await t.test('a platform that writes to Redis', async (t) => {
    const p = await startTestPlatform(t, { fixture: baseFixture() });
    prefix = p.parts.config.redisPrefix;
    t.equal((await get(`${p.url}/v2/hrs`, TOKENS.export_v2)).status, 200, 'an export request spends a rate-limit budget');
    const refused = await fetch(`${p.url}/import/v2/signal/availability/`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${TOKENS.import_v2}`, 'Content-Type': 'application/json' },
      body: '[{}]',
    });
    t.equal(refused.status, 400, 'a refused import is a call-log job');
    const keys = await until('the call-log job', async () => {
      const found = await redisKeys(prefix);
      return found.some((key) => key.includes(':bull:call-log:')) ? found : undefined;
    });
    t.ok(keys.some((key) => key.includes(':rl:')), 'rate-limit keys exist while the test runs');
  });
  t.ok(prefix.startsWith('hrs_test_'), `the prefix was the test's own (${prefix})`);
  t.same(await redisKeys(prefix), [], 'nothing is left once the test is over');
});

t.test('a key prefix of another test is left alone', async (t) => {
  const redis = await openRedis(REDIS_URL, 'redis-cleanup-test');
  t.teardown(() => closeRedis(redis));
  let prefix = '';
  await t.test('a platform', async (t) => {
    const p = await startTestPlatform(t);
    prefix = p.parts.config.redisPrefix;
    await redis.set(`${prefix}_other:kept`, '1', { EX: 60 });
  });
  t.equal(await redis.get(`${prefix}_other:kept`), '1', 'a longer prefix is another test\'s');
  await redis.del(`${prefix}_other:kept`);
});
