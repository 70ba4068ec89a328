/** Opening Redis at start: an unreachable server and a refused connection are told apart, by their cause. */
import t from 'tap';
import { openRedis, RedisUnavailableError } from '../src/infra/redis.js';
import { freePort } from './helpers/platform.js';
import { testRedisDatabase } from './helpers/services.js';

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
