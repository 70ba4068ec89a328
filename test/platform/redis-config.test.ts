import t from 'tap';
import { ConfigError, loadConfig } from '../../src/config/config.js';
import { masterOptionsOf } from '../../src/infra/redis-sentinel.js';
import { describeSentinels } from '../../src/config/redis-settings.js';

/**
 * REDIS_SENTINELS and REDIS_SENTINEL_NAME: Sentinels as host:port (Sentinel's own port when left out,
 * IPv6 in brackets), the group name `mymaster` unless set, refused with the variable named when a
 * Sentinel is not an address; REDIS_URL then still gives the master's credentials, database and TLS.
 */

const load = (env: Record<string, string>) => loadConfig({ REDIS_URL: 'redis://127.0.0.1:6379', ...env });

t.test('no REDIS_SENTINELS (or a blank one): one Redis at REDIS_URL', async (t) => {
  t.equal(load({}).redisSentinel, undefined);
  t.equal(load({ REDIS_SENTINELS: ' ' }).redisSentinel, undefined);
});

t.test('Sentinels as host:port, the port 26379 when left out, IPv6 in brackets; the group mymaster unless named', async (t) => {
  const config = load({ REDIS_SENTINELS: '10.0.0.1:26380, sentinel-b ,[fd00::1]:26381' });
  t.same(config.redisSentinel, {
    nodes: [
      { host: '10.0.0.1', port: 26380 },
      { host: 'sentinel-b', port: 26379 },
      { host: 'fd00::1', port: 26381 },
    ],
    name: 'mymaster',
  }, "without REDIS_SENTINEL_NAME: the group name in the sentinel.conf Redis ships");
  t.equal(describeSentinels(config.redisSentinel!), 'the Redis Sentinels 10.0.0.1:26380,sentinel-b:26379,[fd00::1]:26381 (master group mymaster)');
  t.equal(load({ REDIS_SENTINELS: '10.0.0.1', REDIS_SENTINEL_NAME: 'hrs-redis' }).redisSentinel?.name, 'hrs-redis');
});

t.test('a Sentinel that is not an address, or a bad group name, is a configuration error naming the variable', async (t) => {
  for (const bad of ['10.0.0.1:99999', 'redis://10.0.0.1:26379', '10.0.0.1:26379;10.0.0.2:26379', ',']) {
    t.throws(() => load({ REDIS_SENTINELS: bad }), { constructor: ConfigError, message: /REDIS_SENTINELS must list Sentinels as host:port/ }, bad);
  }
  t.throws(() => load({ REDIS_SENTINELS: '10.0.0.1', REDIS_SENTINEL_NAME: 'my master' }), { message: /REDIS_SENTINEL_NAME must be the master group name/ });
});

t.test("REDIS_URL's user, password, database and rediss: apply to the master the Sentinels name", async (t) => {
  t.same(masterOptionsOf('redis://127.0.0.1:6379'), { tls: false });
  t.same(masterOptionsOf('rediss://hrs:p%40ss@ignored.example:6380/2'), { username: 'hrs', password: 'p@ss', database: 2, tls: true });
  t.same(masterOptionsOf('redis://:secret@x/0'), { password: 'secret', database: 0, tls: false });
});
