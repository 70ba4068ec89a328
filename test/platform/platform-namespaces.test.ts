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
import t, { type Test } from 'tap';
import { createClient } from 'redis';
import type { StatusChange } from '../../machines/live-status.js';
import { serversInUseLines } from '../../src/cli/servers.js';
import { loadConfig } from '../../src/config/config.js';
import { NAMESPACE_STEM } from '../../src/infra/namespace.js';
import { baseFixture, berlaAssignments, TOKENS } from '../helpers/fixtures.js';
import { get, postSignals, startTestPlatform, type TestPlatform } from '../helpers/platform.js';
import { TEST_REDIS_URL, testRedisDatabase } from '../helpers/services.js';
import { until } from '../helpers/wait.js';

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
