/**
 * One Redis outage is one warning per process (and one info line when it ends), whatever in the process
 * meets it: the rate limits and the failed-authentication limit, the status and map streams' slots, the
 * announcements of readings, token and registry changes, the call log's queue, BullMQ's workers (the
 * promise of docs/operations.md). `hrs serve` with its workers against a Redis of this file's own that
 * is killed and started again, then frozen and thawed, every kind of request sent meanwhile. And a wait
 * that only ran out of its caller's own deadline is said as such, and is no outage.
 */
import t from 'tap';
import { createLogger } from '../../src/config/log.js';
import { startPlatform } from '../../src/platform.js';
import { closeRedis, openRedis, RedisDeadlineError, redisUsable, withinRedis, type Redis } from '../../src/infra/redis.js';
import { redisFailed, watchRedis } from '../../src/infra/redis-outage.js';
import { acknowledged } from '../../src/infra/registry-acks.js';
import { MAP_STREAM_PATH } from '../../src/api/map/stream.js';
import { STREAM_PATH } from '../../src/push/subscriptions.js';
import { loadFixture } from '../../src/registry/file/load.js';
import { baseFixture, TOKENS } from '../helpers/fixtures.js';
import { ADMIN_TOKEN, logCapture, testConfig } from '../helpers/platform.js';
import { privateRedis } from '../helpers/private-services.js';
import { TEST_REDIS_URL } from '../helpers/services.js';
import { until } from '../helpers/wait.js';
import { WsClient } from '../helpers/ws.js';

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
