/**
 * Redis: opening, configuration, clean-up, scripts, outage logs and namespaces.
 *
 * One file, one process: its parts share the loaded platform code. Each part is a subtest named after
 * what it covers.
 */
import { createHash, randomUUID } from 'node:crypto';
import type { EventEmitter } from 'node:events';
import { readFileSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import { createClient } from '@redis/client';
import t, { type Test } from 'tap';
import type { StatusChange } from '../../machines/live-status.js';
import { MAP_STREAM_PATH } from '../../src/api/map/stream.js';
import { serversInUseLines } from '../../src/cli/servers.js';
import { ConfigError, loadConfig } from '../../src/config/config.js';
import { createLogger } from '../../src/config/log.js';
import { describeSentinels } from '../../src/config/redis-settings.js';
import { NAMESPACE_STEM } from '../../src/infra/namespace.js';
import { Bus } from '../../src/infra/bus.js';
import { redisFailed, watchRedis } from '../../src/infra/redis-outage.js';
import { masterOptionsOf } from '../../src/infra/redis-sentinel.js';
import { closeRedis, openRedis, type Redis, REDIS_LISTENERS, RedisDeadlineError, RedisUnavailableError, redisUsable, withinRedis } from '../../src/infra/redis.js';
import { acknowledged } from '../../src/infra/registry-acks.js';
import { loadScript, runScript, scriptOf } from '../../src/infra/scripts.js';
import { startPlatform } from '../../src/platform.js';
import { STREAM_PATH } from '../../src/push/subscriptions.js';
import { loadFixture } from '../../src/registry/file/load.js';
import { bullConnection, openQueue, QUEUES } from '../../workers/queues.js';
import { baseFixture, berlaAssignments, TOKENS } from '../helpers/fixtures.js';
import { ADMIN_TOKEN, freePort, get, logCapture, postSignals, redisKeys, startTestPlatform, testConfig, type TestPlatform } from '../helpers/platform.js';
import { privateRedis } from '../helpers/private-services.js';
import { TEST_REDIS_URL, testRedisDatabase } from '../helpers/services.js';
import { until } from '../helpers/wait.js';
import { WsClient } from '../helpers/ws.js';

t.test('redis-cleanup', async (t) => {
  /**
   * The test suite leaves nothing behind in Redis: a test that started a platform, made it write rate
   * limits and call-log jobs, and stopped it, finds no key under its REDIS_PREFIX once it is over.
   */
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
});

t.test('redis-config', async (t) => {
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
});

t.test('redis-open', async (t) => {
  /** Opening Redis at start: an unreachable server and a refused connection are told apart, by their cause. */
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

  t.test('closing while Redis is down, a command waiting: at once, and the command fails', async (t) => {
    // node-redis's own close() waits for the waiting command's answer, which no socket brings: it never settled.
    const redis = await privateRedis(t);
    const client = await openRedis(redis.url, 'test');
    await redis.stop();
    await until('the client has seen Redis go', () => (client.isReady ? undefined : true));
    const waiting = client.get('a key').then(
      () => 'answered',
      (err: Error) => err.constructor.name,
    );
    const closed = await Promise.race([closeRedis(client).then(() => 'closed'), sleep(5000, 'still closing after 5 s', { ref: false })]);
    t.equal(closed, 'closed');
    t.equal(await waiting, 'DisconnectsClientError', 'the waiting command failed');
    t.notOk(client.isOpen);
  });

  t.test('closing while Redis answers: the commands sent are answered first', async (t) => {
    const redis = await privateRedis(t);
    const client = await openRedis(redis.url, 'test');
    const sent = [client.set('k', 'v'), client.get('k')];
    await closeRedis(client);
    t.same(await Promise.all(sent), ['OK', 'v']);
    t.notOk(client.isOpen);
  });

  t.test('hrs serve\'s Redis client carries one BullMQ wrapper for every queue and worker', async (t) => {
    // A wrapper per queue and worker loaded BullMQ's Lua scripts again on the shared connection each
    // (some 2,000 SCRIPT LOADs at start, ahead of the readiness check's PING) and added an 'error'
    // listener each to the client (past Node's default of ten, a MaxListenersExceededWarning).
    const warnings: Error[] = [];
    const onWarning = (warning: Error) => warnings.push(warning);
    process.on('warning', onWarning);
    t.teardown(() => void process.off('warning', onWarning));
    // As `hrs serve` runs by default: the workers in the process, the sandbox on.
    const platform = await startPlatform(testConfig(t, { SANDBOX: 'on' }), createLogger('silent'), { workers: true });
    t.teardown(() => platform.stop('test over'));
    const redis = platform.parts.redis;
    const errorListeners = () => (redis as unknown as EventEmitter).listenerCount('error');
    const before = errorListeners();
    t.ok(before <= 5, `the queues and workers of the process: ${before} 'error' listeners on the client`);
    const more = [QUEUES.mail, QUEUES.history, QUEUES.callLog].map((name) => openQueue(name, redis, platform.parts.config.redisPrefix));
    t.teardown(() => Promise.all(more.map((q) => q.close())));
    await Promise.all(more.map((q) => q.waitUntilReady()));
    t.equal(errorListeners(), before, 'three queues more add none');
    const wrappers = new Set(more.map((q) => q.opts.connection));
    t.equal(wrappers.size, 1, 'they share one wrapper');
    t.ok(wrappers.has(bullConnection(redis)), 'the one every queue and worker of the client has');
    t.ok(before <= REDIS_LISTENERS / 2, `room under the bound (${REDIS_LISTENERS})`);
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
});

t.test('redis-outage-logs', async (t) => {
  /**
   * One Redis outage is one warning per process (and one info line when it ends), whatever in the process
   * meets it: the rate limits and the failed-authentication limit, the status and map streams' slots, the
   * announcements of readings, token and registry changes, the call log's queue, BullMQ's workers (the
   * promise of docs/operations.md). `hrs serve` with its workers against a Redis of this file's own that
   * is killed and started again, then frozen and thawed, every kind of request sent meanwhile. And a wait
   * that only ran out of its caller's own deadline is said as such, and is no outage.
   */
  const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
  /** pino's levels: info 30, warn 40. */
  const INFO = 30;
  const WARN = 40;
  const STREAM_TOKEN = 'test-export-v2-token-0002';

  t.test('one warning per outage however many parts of the process meet it: Redis killed, then frozen', async (t) => {
    const redis = await privateRedis(t);
    const config = testConfig(t, {
      REDIS_URL: redis.url,
      // A frozen Redis counts as down after a command waited this long.
      REDIS_TIMEOUT: '1',
      LOG_LEVEL: 'info',
      WEBHOOK_SECRET_KEY: '0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef',
    });
    const logs = logCapture();
    const platform = await startPlatform(config, createLogger('info', logs.stream));
    t.teardown(() => platform.stop('test over'));
    const fixture = baseFixture();
    // A token for the streams, and one to revoke per round of requests.
    fixture.tokens.push({ generation: 'export_v2', user: 'alice', name: 'streams', value: STREAM_TOKEN, expires_at: '2099-06-01T00:00:00Z' });
    for (let i = 0; i < 10; i++) fixture.tokens.push({ generation: 'export_v1', name: `victim-${i}`, value: `test-victim-token-${String(i).padStart(4, '0')}` });
    await loadFixture(platform.parts.sql, fixture, { baseDir: process.cwd() });
    platform.parts.tokens.invalidate();
    await platform.parts.registry.reload();
    const url = `http://127.0.0.1:${platform.port}`;
    const admin = { Authorization: `Bearer ${ADMIN_TOKEN}` };
    const listed = (await (await fetch(`${url}/admin/v1/tokens?generation=export_v1`, { headers: admin })).json()) as { tokens: { id: string; name: string }[] };
    const victims = listed.tokens.filter((token) => token.name.startsWith('victim-')).map((token) => token.id);
    t.equal(victims.length, 10, 'tokens to revoke');
    let n = 0;

    /** Every kind of request that uses Redis; the statuses it got. */
    const traffic = async (): Promise<number[]> => {
      const reading = [{ hrs: 'BERLA', datetime: new Date().toISOString(), transmission_id: `o-${n++}`, nozzles: [{ id: 'N1', available: true }], station: { maintenance: false, limitedly_available: false } }];
      const answers = await Promise.all([
        // Rate limited, announced, call-logged.
        fetch(`${url}/import/v2/signal/availability/`, { method: 'POST', headers: { Authorization: `Bearer ${TOKENS.import_v2}`, 'Content-Type': 'application/json' }, body: JSON.stringify(reading) }),
        fetch(`${url}/v2/hrs/status`, { headers: { Authorization: `Bearer ${TOKENS.export_v2}` } }),
        // A failed authentication (its limit), the public map's limit.
        fetch(`${url}/v2/hrs/status`, { headers: { Authorization: 'Bearer no-such-token-0123456789' } }),
        fetch(`${url}/map/v1/stations.geojson`),
        // A registry change (announced, acknowledged).
        fetch(`${url}/admin/v1/originators/mon-1`, { method: 'PATCH', headers: { ...admin, 'Content-Type': 'application/json' }, body: JSON.stringify({ call_log_mode: 'always' }) }),
      ]);
      for (const a of answers) await a.arrayBuffer();
      // Streams (their slots), a revocation (announced).
      const streams = await Promise.all([
        WsClient.connect(`ws://127.0.0.1:${platform.port}${STREAM_PATH}`, { Authorization: `Bearer ${STREAM_TOKEN}` }).catch(() => undefined),
        WsClient.connect(`ws://127.0.0.1:${platform.port}${MAP_STREAM_PATH}`).catch(() => undefined),
      ]);
      for (const s of streams) s?.close();
      const revoked = await fetch(`${url}/admin/v1/tokens/${victims.pop()}/revoke`, { method: 'POST', headers: admin });
      await revoked.arrayBuffer();
      return [...answers.map((a) => a.status), revoked.status];
    };

    t.same(await traffic(), [204, 200, 401, 200, 200, 200], 'with Redis up, every request answered');
    await sleep(300);

    const outage = async (what: string, stop: () => Promise<void> | void, start: () => Promise<void> | void) => {
      const from = logs.lines.length;
      await stop();
      for (let i = 0; i < 2; i++) {
        const statuses = await traffic();
        t.ok(statuses.every((s) => s < 500), `${what}: requests answered without a 5xx (${statuses.join(' ')})`);
        await sleep(300);
      }
      const ready = await fetch(`${url}/readyz`);
      t.equal(ready.status, 503, `${what}: readiness says not ready`);
      await ready.arrayBuffer();
      await until(`${what}: the outage seen`, () => (logs.lines.slice(from).some((l) => /^Redis unavailable: /.test(String(l.msg))) ? true : undefined), 10_000);
      await traffic();
      await start();
      await until(`${what}: Redis back`, () => (logs.lines.slice(from).some((l) => l.msg === 'Redis available again') ? true : undefined), 15_000);
      await traffic();
      // Lines that come late (a queued command's own timeout) come within this.
      await sleep(1500);
      const lines = logs.lines.slice(from).filter((l) => (l.level as number) >= INFO && l.msg !== 'request');
      const warnings = lines.filter((l) => (l.level as number) >= WARN);
      t.same(
        warnings.map((l) => String(l.msg).replace(/:.*/, '')),
        ['Redis unavailable'],
        `${what}: one warning (${warnings.length}: ${[...new Set(warnings.map((l) => l.msg))].join(' | ')})`,
      );
      t.equal(lines.filter((l) => l.msg === 'Redis available again').length, 1, `${what}: one info line when it ends`);
      t.ok(
        lines.some((l) => l.level === INFO && /^token change not announced/.test(String(l.msg))),
        `${what}: a revocation that was not announced is an info line under the outage's warning`,
      );
      t.same(logs.lines.slice(from).filter((l) => l.msg === 'request' && (l.level as number) >= WARN).map((l) => [l.path, l.status]), [], `${what}: no request logged as failed`);
      t.ok(
        logs.lines.slice(from).some((l) => l.msg === 'request' && l.path === '/readyz' && l.status === 503 && l.level === INFO),
        `${what}: readiness's 503 (working as designed) is an info line`,
      );
    };
    await outage('killed', () => redis.stop(), () => redis.start());
    await outage('frozen', () => redis.freeze(), () => redis.thaw());
  });

  t.test("a caller's deadline passing is said as such and is no outage", async (t) => {
    const client = await openRedis(TEST_REDIS_URL, 'test-deadline', { waitMs: 5000 });
    t.teardown(() => closeRedis(client));
    const logs = logCapture();
    const log = createLogger('debug', logs.stream);
    watchRedis(client, log);
    const never = new Promise<never>(() => {});

    const err = await withinRedis(client, never, 3).then(
      () => undefined,
      (e: unknown) => e,
    );
    t.type(err, RedisDeadlineError);
    t.equal((err as Error).message, "the caller's deadline (3 ms) passed before Redis answered; not an outage (REDIS_TIMEOUT is 5000 ms)");
    t.notMatch((err as Error).message, /did not answer within/, 'not "Redis did not answer within 3 ms"');
    t.equal(redisFailed(client, log, err, 'something not done'), 'wait', 'reported as a wait that ran out');
    // Redis is asked (a PING within REDIS_TIMEOUT) whether it is down: it answers.
    await sleep(200);
    t.ok(redisUsable(client), 'Redis still counts as answering');
    t.same(
      logs.lines.filter((l) => (l.level as number) >= WARN).map((l) => l.msg),
      [],
      'no warning: no outage',
    );
    t.same(logs.lines.map((l) => [l.level, l.msg]), [[20, 'something not done']], 'the caller\'s own line is a debug line');
    // Redis answering with an error is no outage either, but a fault: a warning of its own.
    const refused = await client.sendCommand(['NO-SUCH-COMMAND']).then(
      () => undefined,
      (e: unknown) => e,
    );
    t.equal(redisFailed(client, log, refused, 'something refused'), 'fault');
    t.same(logs.lines.filter((l) => (l.level as number) >= WARN).map((l) => l.msg), ['something refused'], 'a warning of its own, not the outage\'s');

    // Waiting for acknowledgements that do not come ends with the count, not an error that reads like an outage.
    const silent = { isReady: true, sCard: () => never } as unknown as Redis;
    const started = performance.now();
    t.equal(await acknowledged(silent, 'p', 'change', 2, 40), 0, 'the wait for acknowledgements ends with how many came');
    t.ok(performance.now() - started < 1000, 'at its own timeout');
  });
});

t.test('redis-scripts', async (t) => {
  /** Whether Redis holds the script with this SHA1 (SCRIPT EXISTS). */
  const held = async (redis: Awaited<ReturnType<typeof openRedis>>, sha: string) => {
    const [exists] = (await redis.sendCommand(['SCRIPT', 'EXISTS', sha])) as number[];
    return exists === 1;
  };

  t.test('every script is read from its .lua file beside the modules, named by its SHA1', async (t) => {
    for (const file of ['rate-limit.lua', 'stream-slot-take.lua', 'stream-slot-renew.lua']) {
      const script = loadScript(file);
      const text = readFileSync(new URL(`../../src/infra/${file}`, import.meta.url), 'utf8');
      t.equal(script.source, text, `${file}: its text`);
      t.equal(script.sha, createHash('sha1').update(text).digest('hex'), `${file}: its SHA1`);
    }
    t.throws(() => loadScript('no-such-script.lua'), { code: 'ENOENT' }, 'a missing file fails at once');
  });

  t.test('a script Redis does not hold (NOSCRIPT) is sent whole once, then run by its SHA1', async (t) => {
    const redis = await openRedis(TEST_REDIS_URL, 'scripts-test');
    t.teardown(() => redis.close());
    // A text no other run has sent: Redis cannot hold it yet.
    const script = scriptOf('echo', `-- ${randomUUID()}\nreturn {KEYS[1], ARGV[1]}`);
    t.notOk(await held(redis, script.sha), 'not held before');
    t.strictSame(await runScript(redis, script, ['k'], ['a']), ['k', 'a'], 'the first run answers');
    t.ok(await held(redis, script.sha), 'held after the first run');
    t.strictSame(await runScript(redis, script, ['k2'], ['b']), ['k2', 'b'], 'the next run answers by its SHA1');
  });

  t.test('a script\'s own failure is thrown to the caller, whether it was sent whole or by its SHA1', async (t) => {
    const redis = await openRedis(TEST_REDIS_URL, 'scripts-test');
    t.teardown(() => redis.close());
    const script = scriptOf('broken', `-- ${randomUUID()}\nreturn redis.call('NO-SUCH-COMMAND')`);
    await t.rejects(runScript(redis, script, [], []), /unknown command|Unknown Redis command/i, 'the failure of the first run (EVAL)');
    t.ok(await held(redis, script.sha), 'held all the same');
    await t.rejects(runScript(redis, script, [], []), /unknown command|Unknown Redis command/i, 'and of a run by its SHA1');
  });
});

t.test('platform-namespaces', async (t) => {
  /**
   * Two platforms on one Redis server, each with its own PostgreSQL database and no REDIS_PREFIX: their
   * namespaces differ (src/infra/namespace.ts), so neither hears the other's signals, registry changes or
   * token revocations, whether they use different Redis database numbers or the same one (pub/sub ignores
   * the number). A registry change waits only for its own platform's instances. A message forged with
   * another platform id on a platform's own channels is dropped, and the first one is reported once.
   *
   * "Heard" is checked after a marker: a registry change of the listening platform, which returns once its
   * own instance has acknowledged it. Redis hands one subscriber connection its messages in the order it
   * took the publishes, so by then that instance has read everything published before the marker.
   */
  const FOREIGN_WARNING = /^another platform is on this Redis bus/;

  function fixture() {
    const f = baseFixture();
    f.assignments = berlaAssignments();
    return f;
  }

  /** Every key under `prefix:` in the Redis database `url` names (SCAN, never KEYS); with `drop`, deleted. */
  async function keysAt(url: string, prefix: string, drop = false): Promise<string[]> {
    const redis = createClient({ url });
    await redis.connect();
    try {
      const keys: string[] = [];
      for await (const found of redis.scanIterator({ MATCH: `${prefix}:*`, COUNT: 1000 })) keys.push(...((Array.isArray(found) ? found : [found]) as string[]));
      if (drop && keys.length > 0) await redis.del(keys);
      return keys;
    } finally {
      await redis.quit();
    }
  }

  /** One platform with the default namespace (REDIS_PREFIX unset) on `redisUrl`, and what its instance hears. */
  async function platform(t: Test, redisUrl: string, sameStoreAs?: TestPlatform) {
    const p = sameStoreAs
      ? await startTestPlatform(t, { sameStoreAs })
      : await startTestPlatform(t, { fixture: fixture(), env: { REDIS_PREFIX: '', REDIS_URL: redisUrl, LOG_LEVEL: 'info' } });
    const prefix = p.parts.config.redisPrefix;
    // Stopped (the later teardown is then a no-op) before the namespace's keys go.
    if (!sameStoreAs) t.teardown(async () => {
      await p.stop('test over');
      await keysAt(redisUrl, prefix, true);
    });
    const heard = { status: [] as StatusChange[], reloads: 0, tokenChanges: 0 };
    p.parts.status.onChange((change) => heard.status.push(change));
    p.parts.registry.onReload(() => heard.reloads++);
    p.parts.announcements.onTokensChanged(() => heard.tokenChanges++);
    return { p, heard };
  }

  /** A registry change of `p`'s own (nothing to reload): once answered, `p` has read every message published before it. */
  async function marker(t: Test, p: TestPlatform, instances = 1): Promise<void> {
    const ack = await p.parts.announcements.registryChanged({ hrsIds: [] });
    t.match(ack, { receivers: instances, acknowledged: instances, timedOut: false }, 'the marker is acknowledged by the platform\'s own instance(s)');
  }

  async function availabilityOf(p: TestPlatform): Promise<unknown> {
    const res = await get(`${p.url}/v2/hrs/BERLA/status`, TOKENS.export_v2);
    if (res.status !== 200) throw new Error(`status answered ${res.status}`);
    return ((await res.json()) as { availability: unknown }).availability;
  }

  /** Waits until a message of `channel` has gone through Redis (so every subscriber has it queued). */
  async function published(channel: string, act: () => Promise<unknown>): Promise<void> {
    const listener = createClient({ url: TEST_REDIS_URL });
    await listener.connect();
    let seen = false;
    await listener.subscribe(channel, () => (seen = true));
    try {
      await act();
      await until(`a message on ${channel}`, () => (seen ? true : undefined), 10_000, 5);
    } finally {
      await listener.quit();
    }
  }

  t.test('two platforms on one Redis server, with different and with the same database number: neither hears the other', async (t) => {
    const urlA = testRedisDatabase(3);
    // B on another database number of the same server, C on A's.
    const [{ p: a }, b, c] = await Promise.all([platform(t, urlA), platform(t, testRedisDatabase(4)), platform(t, urlA)]);
    const { p: a2 } = await platform(t, urlA, a);
    const others = [
      { name: 'B (another database number)', ...b },
      { name: 'C (the same database number)', ...c },
    ];

    t.equal(new Set([a, ...others.map((o) => o.p)].map((p) => p.parts.config.redisPrefix)).size, 3, 'each platform has a namespace of its own');
    for (const p of [a, ...others.map((o) => o.p)]) {
      t.match(p.parts.config.redisPrefix, new RegExp(`^${NAMESPACE_STEM}-[0-9a-f]{16}$`), 'derived from the database: "hrs-" and the platform id');
      t.match(p.logs.lines.find((l) => l.msg === 'redis namespace'), { redis_namespace: p.parts.config.redisPrefix, platform: p.parts.config.platformId }, 'the start says which');
    }
    t.equal(a2.parts.config.redisPrefix, a.parts.config.redisPrefix, 'a second instance of one platform derives the same');

    // A signal A accepted: its second instance serves it, the others do not.
    await published(a.parts.bus.channel('signals'), () => postSignals(a, 'availability', [{ hrs: 'BERLA', datetime: new Date(Date.now() - 5000).toISOString(), nozzles: [{ id: 'N1', available: true }], station: { maintenance: false, limitedly_available: false } }]));
    await until('A\'s second instance to serve A\'s signal', async () => ((await availabilityOf(a2)) !== null ? true : undefined));

    // A registry change and a token revocation on A: acknowledged by A's two instances only, at once.
    const ack = await a.parts.announcements.registryChanged({ hrsIds: ['BERLA'], tokens: true });
    t.match(ack, { receivers: 2, acknowledged: 2, timedOut: false }, 'the edit waited for A\'s two instances only, and both acknowledged it');
    t.equal(ack?.subscribers, 2, 'Redis counted A\'s two instances on A\'s channel, no other platform\'s');
    await a.parts.announcements.tokensChanged();
    t.notOk(a.logs.lines.some((l) => /not acknowledged/.test(String(l.msg))), 'no edit of A waited for an instance that never answers');

    for (const { name, p, heard } of others) {
      await marker(t, p);
      t.same(heard.status, [], `${name}: its live status (its status, map feed, push streams and webhooks feed on it) heard nothing of A's signal`);
      t.equal(await availabilityOf(p), null, `${name} serves no availability for BERLA: its database has none`);
      t.equal(heard.reloads, 0, `${name} did not reload its registry for A's change`);
      t.equal(heard.tokenChanges, 0, `${name} heard of no token change (A's revocation)`);
      t.notOk(p.logs.lines.some((l) => FOREIGN_WARNING.test(String(l.msg))), `${name} found no other platform on its own bus`);
    }

    // Keys, channels and queues: each platform's under its own namespace.
    const keysA = await keysAt(urlA, a.parts.config.redisPrefix);
    t.ok(keysA.some((k) => k.startsWith(`${a.parts.config.redisPrefix}:bull:`)), 'A\'s queues are under A\'s namespace');
    t.ok(keysA.some((k) => k.startsWith(`${a.parts.config.redisPrefix}:listeners:${a.parts.config.platformId}`)), 'so is A\'s presence');
  });

  t.test('a message of another platform on a platform\'s own channels (forged, or from a platform given its namespace) is dropped, and reported once', async (t) => {
    const { p: b, heard } = await platform(t, TEST_REDIS_URL);
    const redis = b.parts.redis;
    const other = '0123456789abcdef';
    const reading = { hrs_id: 'BERLA', category: 'availability', originator_id: 'mon-1', measured_at: new Date(Date.now() - 5000).toISOString(), received_at: new Date().toISOString(), payload: { nozzles: [{ id: 'N1', available: true }], station: { maintenance: false } } };
    const forged = [
      ['signals', { type: 'signals', from: 'elsewhere', platform: other, signals: [reading] }],
      ['signals', { type: 'signals', from: 'elsewhere', platform: other, signals: [reading] }],
      ['registry', { type: 'registry', platform: other, hrs_ids: ['BERLA'], tokens: true, registry: true }],
      // One of no platform at all (an earlier version's): dropped alike.
      ['signals', { type: 'signals', from: 'elsewhere', signals: [reading] }],
    ] as const;
    for (const [type, message] of forged) await redis.publish(b.parts.bus.channel(type), JSON.stringify(message));
    await marker(t, b);
    t.same(heard.status, [], 'no forged reading reached the live status');
    t.equal(await availabilityOf(b), null);
    t.equal(heard.reloads + heard.tokenChanges, 0, 'the forged registry change was not applied');
    t.equal(b.parts.bus.foreignMessages, forged.length, 'every forged message was dropped');
    const warnings = b.logs.lines.filter((l) => FOREIGN_WARNING.test(String(l.msg)));
    t.equal(warnings.length, 1, 'the other platform is reported once, not once per message');
    t.match(warnings[0], { level: 40, namespace: b.parts.config.redisPrefix, platform: b.parts.config.platformId, other_platform: other });

    // Another platform given B's namespace as its REDIS_PREFIX: B drops what it says (reported already),
    // and its edit waits only for its own instance although Redis counts B among the subscribers.
    const d = await startTestPlatform(t, { fixture: fixture(), env: { REDIS_PREFIX: b.parts.config.redisPrefix, LOG_LEVEL: 'info' } });
    t.equal(d.parts.config.redisPrefix, b.parts.config.redisPrefix, 'REDIS_PREFIX wins over the derived namespace');
    t.not(d.parts.config.platformId, b.parts.config.platformId, 'the platform id is still the database\'s');
    const ack = await d.parts.announcements.registryChanged({ hrsIds: ['BERLA'], tokens: true });
    t.match(ack, { subscribers: 2, receivers: 1, acknowledged: 1, timedOut: false }, 'the edit counted its own platform\'s listener only, and was acknowledged');
    await marker(t, b);
    t.equal(heard.reloads + heard.tokenChanges, 0, 'B applied nothing of the other platform\'s change');
    t.equal(b.parts.bus.foreignMessages, forged.length + 1, 'and dropped it');
    t.equal(b.logs.lines.filter((l) => FOREIGN_WARNING.test(String(l.msg))).length, 1, 'still one warning');

    // The platform's own messages still go through.
    const control = { type: 'signals' as const, from: 'another-instance', signals: [reading] };
    await b.parts.bus.publish(control);
    await until('B to apply its own platform\'s reading', () => (heard.status.length > 0 ? true : undefined));
    t.not(await availabilityOf(b), null, 'a message carrying B\'s own platform id is applied');
  });

  t.test('hrs demo\'s lines on its servers: which PostgreSQL and Redis, named, started or found running, and the namespace', async (t) => {
    const found = loadConfig({});
    const resolved = { ...found, redisPrefix: 'hrs-0123456789abcdef' };
    t.same(serversInUseLines({}, {}, resolved), [
      '  PostgreSQL: postgres://postgres@127.0.0.1:5432/hrs, found running on its default port (DATABASE_URL is not set)',
      '  Redis: redis://127.0.0.1:6379, found running on its default port (REDIS_URL is not set); namespace hrs-0123456789abcdef (derived from the database; REDIS_PREFIX overrides it)',
    ]);
    const started = { databaseUrl: 'postgres://hrs:secret@127.0.0.1:54321/hrs', redisUrl: 'redis://:secret@127.0.0.1:63790' };
    t.same(serversInUseLines({}, started, { ...resolved, ...started }), [
      '  PostgreSQL: postgres://hrs:***@127.0.0.1:54321/hrs, started by this process (data in the state folder)',
      '  Redis: redis://:***@127.0.0.1:63790, started by this process (data in the state folder); namespace hrs-0123456789abcdef (derived from the database; REDIS_PREFIX overrides it)',
    ], 'started: passwords replaced');
    const env = { DATABASE_URL: 'postgres://app:pw@db1,db2/hrs?target_session_attrs=read-write', REDIS_SENTINELS: 's1:26379,s2', REDIS_PREFIX: 'prod' };
    const named = loadConfig(env);
    t.same(serversInUseLines(env, {}, named), [
      '  PostgreSQL: postgres://app:***@db1,db2/hrs?target_session_attrs=read-write, named by DATABASE_URL',
      '  Redis: the master "mymaster" of the Sentinels s1:26379,s2:26379, named by REDIS_SENTINELS; namespace prod (REDIS_PREFIX)',
    ]);
  });
});

t.test('bus-hearing', async (t) => {
  /**
   * An instance whose bus subscriber hears nothing (connected, but not where announcements go, as one
   * left with the old master after a failover) finds it so with the hearing check, opens it again, and
   * reads again from the stores what it missed; one whose subscriber lost its connection and is back
   * does the same. The checks are stepped here (Bus.checkHearing), not waited for.
   */
  const reading = (datetime: string, available: boolean) => ({
    hrs: 'BERLA',
    datetime,
    station: { maintenance: false, limitedly_available: false },
    nozzles: [{ id: 'N1', available }, { id: 'N2', available }],
  });

  t.test('a subscriber that hears nothing is opened again, and the readings it missed are read from the store', async (t) => {
    const fixture = baseFixture();
    fixture.assignments = berlaAssignments();
    const a = await startTestPlatform(t, { fixture });
    const b = await startTestPlatform(t, { sameStoreAs: a });
    const bus = b.parts.bus;
    const heldOnB = () => b.parts.status.published('BERLA', 'availability')?.reading.datetime;
    t.equal(await bus.checkHearing(), 'hearing', 'a subscriber that hears: nothing to do');

    // What A announces, heard by a listener of the test's own on the same Redis.
    const listener = a.parts.redis.duplicate();
    await listener.connect();
    t.teardown(() => listener.close());
    const announced: string[] = [];
    await listener.subscribe(a.parts.bus.channel('signals'), (raw) => announced.push(raw));

    // B's subscriber left connected but subscribed to nothing.
    await (bus as unknown as { subscriber: Redis }).subscriber.unsubscribe();
    const missed = new Date(Date.now() - 3000).toISOString();
    await postSignals(a, 'availability', [reading(missed, false)]);
    await until("A's announcement on the bus", () => (announced.some((raw) => raw.includes(missed)) ? true : undefined));
    t.not(heldOnB(), Date.parse(missed), 'B did not hear it');

    const found: string[] = [];
    for (let i = 0; i < 3 && !found.includes('reopened'); i++) found.push(await bus.checkHearing());
    t.ok(found.includes('reopened'), `found deaf and opened again within three checks (${found.join(', ')})`);
    t.equal(await until('B to hold the reading it missed', () => (heldOnB() === Date.parse(missed) ? heldOnB() : undefined)), Date.parse(missed), 'read again from the store');
    t.match(b.logs.lines.find((line) => line.msg === 'caught up with what the bus may have missed'), { level: 30, why: 'deaf', applied: 1 }, 'said, with what it applied');
    t.ok(b.logs.lines.some((line) => line.level === 40 && /^the bus subscriber hears nothing published/.test(String(line.msg))), 'a warning says the subscriber was deaf');

    const heard = new Date(Date.now() - 1000).toISOString();
    await postSignals(a, 'availability', [reading(heard, true)]);
    t.equal(await until('B to hear the next reading', () => (heldOnB() === Date.parse(heard) ? heldOnB() : undefined)), Date.parse(heard), 'the reopened subscriber hears the bus');
    t.equal(await bus.checkHearing(), 'hearing', 'and the check finds it hearing');
  });

  t.test('a subscriber that lost its connection and is back calls the rejoin listeners', async (t) => {
    const publisher = await openRedis(TEST_REDIS_URL, 'hrs-test-bus');
    t.teardown(() => closeRedis(publisher));
    const prefix = `hrs-test-bus-${randomUUID()}`;
    // The subscriber's connection id, read before it subscribes (a subscribed connection takes no CLIENT ID).
    const ids: number[] = [];
    const duplicate = publisher.duplicate.bind(publisher);
    Object.assign(publisher, {
      duplicate: () => {
        const copy = duplicate();
        const connect = copy.connect.bind(copy);
        return Object.assign(copy, { connect: async () => (await connect(), ids.push(await copy.clientId()), copy) });
      },
    });
    const logs = logCapture();
    const bus = new Bus(publisher, prefix, 'platform-test', createLogger('debug', logs.stream));
    t.teardown(() => bus.close());
    const rejoined: string[] = [];
    bus.onRejoined((why) => rejoined.push(why));
    const heard: string[] = [];
    await bus.on('tokens', (message) => heard.push(JSON.stringify(message)));
    t.equal(ids.length, 1, 'one subscriber');
    t.equal(await bus.checkHearing(), 'hearing', 'it hears');
    t.same(rejoined, [], 'nothing missed at the start');

    await publisher.sendCommand(['CLIENT', 'KILL', 'ID', String(ids[0])]);
    await until('the subscriber back', () => (rejoined.length > 0 ? true : undefined));
    t.same(rejoined, ['reconnected'], 'the listeners told once, why');
    t.ok(logs.lines.some((line) => line.level === 20 && /^the bus subscriber is connected again/.test(String(line.msg))), 'said in a debug line (the outage has its own warning and info line)');
    await bus.publish({ type: 'tokens', events: [] });
    await until('the message heard', () => (heard.length > 0 ? true : undefined));
    t.equal(heard.length, 1, 'subscribed again: it hears the bus');
    t.equal(await bus.checkHearing(), 'hearing', 'and the check finds it hearing');
  });
});
