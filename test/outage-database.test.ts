import t from 'tap';
import { connect, isDatabaseUnavailable } from '../db/connect.js';
import { unbounded } from '../db/deadline.js';
import { migrate } from '../db/migrate.js';
import { SignalWriter, type StoredTransmission } from '../db/queries/signals.js';
import { classifyUnavailable } from '../src/api/unavailable.js';
import { TokenStore } from '../src/registry/tokens.js';
import { loadFixture } from '../src/registry/file/load.js';
import { baseFixture, TOKENS } from './helpers/fixtures.js';
import { freshDatabase } from './helpers/platform.js';
import { blackhole, privatePostgres } from './helpers/private-services.js';

/** PostgreSQL failures met by the pool, the group-commit writer and the token cache: bounded and classified. */

const BOUND_MS = 300;

async function timed<T>(work: Promise<T>): Promise<{ ms: number; err: unknown }> {
  const started = performance.now();
  let err: unknown;
  await work.catch((e: unknown) => (err = e));
  return { ms: performance.now() - started, err };
}

t.test('a server that accepts and never answers: the query fails within the bound, as unavailable', async (t) => {
  const hole = await blackhole(t);
  const sql = connect(`postgres://postgres@127.0.0.1:${hole.port}/none`, { timeoutMs: BOUND_MS });
  t.teardown(() => sql.end({ timeout: 0 }));
  const { ms, err } = await timed(sql`SELECT 1`);
  t.ok(err, 'it fails');
  t.ok(ms < BOUND_MS + 700, `within the bound (${Math.round(ms)} ms)`);
  t.ok(isDatabaseUnavailable(err), `classified unavailable (${(err as { code?: string }).code})`);
  const answer = classifyUnavailable(err);
  t.equal(answer?.status, 503);
  t.same(answer?.options.headers, { 'Retry-After': '5' });
  t.notMatch(answer?.detail ?? '', /CONNECT_TIMEOUT|127\.0\.0\.1/, 'the detail says nothing internal');
});

t.test('a statement running longer than the bound is cancelled by the server', async (t) => {
  const { config } = await freshDatabase(t);
  const sql = connect(config.databaseUrl, { timeoutMs: BOUND_MS });
  t.teardown(() => sql.end({ timeout: 1 }));
  // Connected first: the server's own cancel then comes a little before the client's deadline (db/deadline.ts).
  await sql`SELECT 1`;
  const { ms, err } = await timed(sql`SELECT pg_sleep(3)`);
  t.equal((err as { code?: string }).code, '57014');
  t.ok(ms < BOUND_MS + 1000, `within the bound (${Math.round(ms)} ms)`);
  t.equal(classifyUnavailable(err)?.status, 503);
  t.equal(classifyUnavailable(new Error('boom')), undefined, 'an unexpected error stays unexpected');
});

t.test('group commit while the server hangs: every write fails within a bounded wait, none waits out the queue', async (t) => {
  const hole = await blackhole(t);
  const sql = connect(`postgres://postgres@127.0.0.1:${hole.port}/none`, { timeoutMs: BOUND_MS });
  t.teardown(() => sql.end({ timeout: 0 }));
  const writer = new SignalWriter(sql);
  const row = (i: number): StoredTransmission => ({
    originatorId: 'mon-1', hrsId: 'BERLA', category: 'availability', state: 'live',
    measuredAt: new Date(), receivedAt: new Date(), transmissionId: `t-${i}`, payload: {},
  });
  const started = performance.now();
  const waits: number[] = [];
  const results = await Promise.allSettled(
    Array.from({ length: 40 }, (_, i) => writer.write([row(i)]).finally(() => waits.push(performance.now() - started))),
  );
  t.ok(results.every((r) => r.status === 'rejected' && isDatabaseUnavailable(r.reason)), 'each failed as unavailable');
  const longest = Math.max(...waits);
  t.ok(longest < 3 * BOUND_MS + 700, `the longest wait is bounded (${Math.round(longest)} ms)`);
});

t.test('tokens: a known token is served past its TTL while PostgreSQL is down; an unknown one fails as unavailable', async (t) => {
  const pg = await privatePostgres(t);
  const sql = connect(pg.url('postgres'), { timeoutMs: BOUND_MS });
  t.teardown(() => sql.end({ timeout: 0 }));
  await migrate(unbounded(sql));
  await loadFixture(unbounded(sql), baseFixture(), { baseDir: '.' });
  let now = 0;
  const tokens = new TokenStore(sql, { cacheTtlMs: 1000, now: () => now });
  const known = await tokens.find(TOKENS.export_v2);
  t.ok(known, 'looked up while the server runs');
  await pg.stop();
  now += 60_000;
  const stale = await timed(tokens.find(TOKENS.export_v2));
  t.equal(stale.err, undefined, 'the known token is still served');
  t.ok(stale.ms < BOUND_MS + 700, `within the bound (${Math.round(stale.ms)} ms)`);
  const again = await timed(tokens.find(TOKENS.export_v2));
  t.ok(again.ms < 50, `at once while lookups are failing (${Math.round(again.ms)} ms)`);
  const unknown = await timed(tokens.find('no-such-token-0123456789abcdef'));
  t.ok(isDatabaseUnavailable(unknown.err), 'an unknown token cannot be checked: unavailable, not absent');
  t.ok(unknown.ms < BOUND_MS + 700, `within the bound (${Math.round(unknown.ms)} ms)`);
  await pg.start();
  now += 60_000;
  t.ok(await tokens.find(TOKENS.export_v2), 'looked up again once the server is back');
});
