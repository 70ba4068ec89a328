import { connect as netConnect, createServer, type AddressInfo, type Socket } from 'node:net';
import t, { type Test } from 'tap';
import { connect, DatabaseTimeoutError, isDatabaseUnavailable } from '../../db/connect.js';
import { unbounded } from '../../db/deadline.js';
import { migrate } from '../../db/migrate.js';
import { SignalWriter, type StoredTransmission } from '../../db/queries/signals.js';
import { classifyUnavailable } from '../../src/api/unavailable.js';
import { TokenStore } from '../../src/registry/tokens.js';
import { loadFixture } from '../../src/registry/file/load.js';
import { baseFixture, TOKENS } from '../helpers/fixtures.js';
import { freshDatabase } from '../helpers/platform.js';
import { blackhole, privatePostgres } from '../helpers/private-services.js';

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

/** A TCP proxy to PostgreSQL that can hold what passes, as a frozen server or network would: per direction. */
async function holdingProxy(t: Test, port: number) {
  const pairs: { client: Socket; server: Socket }[] = [];
  const held = { up: false, down: false };
  const queues = new Map<Socket, { chunks: Buffer[]; ended: boolean }>();
  const pipe = (from: Socket, to: Socket, direction: 'up' | 'down') => {
    const queue = { chunks: [] as Buffer[], ended: false };
    queues.set(to, queue);
    from.on('data', (chunk: Buffer) => (held[direction] ? queue.chunks.push(chunk) : to.write(chunk)));
    from.on('end', () => (held[direction] ? (queue.ended = true) : to.end()));
    from.on('error', () => to.destroy());
  };
  const server = createServer((client) => {
    const upstream = netConnect({ host: '127.0.0.1', port });
    pairs.push({ client, server: upstream });
    pipe(client, upstream, 'up');
    pipe(upstream, client, 'down');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.teardown(() => {
    for (const pair of pairs) (pair.client.destroy(), pair.server.destroy());
    server.close();
  });
  return {
    port: (server.address() as AddressInfo).port,
    hold(direction: 'up' | 'down' | 'both') {
      if (direction !== 'down') held.up = true;
      if (direction !== 'up') held.down = true;
    },
    /** Closes every connection through it at once, as a server machine lost. */
    drop() {
      for (const pair of pairs.splice(0)) (pair.client.destroy(), pair.server.destroy());
    },
    release() {
      held.up = held.down = false;
      for (const [to, queue] of queues) {
        for (const chunk of queue.chunks.splice(0)) to.write(chunk);
        if (queue.ended) to.end();
      }
    },
  };
}

t.test('a transaction whose server stops answering before COMMIT: 503 as not applied, and it never commits', async (t) => {
  const { config, sql: direct } = await freshDatabase(t);
  await direct`CREATE TABLE frozen_rows (id int)`;
  const proxy = await holdingProxy(t, Number(new URL(config.databaseUrl).port));
  const url = new URL(config.databaseUrl);
  url.port = String(proxy.port);
  const sql = connect(url.toString(), { timeoutMs: BOUND_MS, max: 2 });
  t.teardown(() => sql.end({ timeout: 0 }));
  await sql`SELECT 1`;
  const { ms, err } = await timed(
    sql.begin(async (tx) => {
      await tx`SELECT 1`;
      proxy.hold('both');
      await tx`INSERT INTO frozen_rows VALUES (1)`;
    }),
  );
  t.ok(err instanceof DatabaseTimeoutError && !err.mayHaveApplied, `fails as not applied (${String(err)})`);
  t.ok(ms < BOUND_MS + 700, `within the bound (${Math.round(ms)} ms)`);
  t.equal(classifyUnavailable(err)?.detail, 'The database is unavailable; try again later.');
  proxy.release();
  await new Promise((resolve) => setTimeout(resolve, 500));
  t.same(await direct`SELECT id FROM frozen_rows`, [], 'the server read the INSERT and the closed connection, and rolled back');
});

t.test('a transaction whose COMMIT was sent and not confirmed: 503 saying it may have been applied', async (t) => {
  const { config, sql: direct } = await freshDatabase(t);
  await direct`CREATE TABLE frozen_rows (id int)`;
  const proxy = await holdingProxy(t, Number(new URL(config.databaseUrl).port));
  const url = new URL(config.databaseUrl);
  url.port = String(proxy.port);
  const sql = connect(url.toString(), { timeoutMs: BOUND_MS, max: 1 });
  t.teardown(() => sql.end({ timeout: 0 }));
  // Connected before the bound starts: on a loaded machine opening a session alone can take the bound.
  await sql`SELECT 1`;
  const { ms, err } = await timed(
    sql.begin(async (tx) => {
      await tx`INSERT INTO frozen_rows VALUES (2)`;
      // The COMMIT reaches the server; its answer does not come back.
      proxy.hold('down');
    }),
  );
  t.ok(err instanceof DatabaseTimeoutError && err.mayHaveApplied, `fails as may have been applied (${String(err)})`);
  t.ok(ms < BOUND_MS + 700, `within the bound (${Math.round(ms)} ms)`);
  t.match(classifyUnavailable(err), { status: 503, detail: /may have been applied/ }, 'the answer says so');
  t.same(await direct`SELECT id FROM frozen_rows`, [{ id: 2 }], 'and it was: the answer was truthful');
  proxy.release();
});

t.test('every connection stuck: a statement waiting for one fails within the bound, unsent, and never runs', async (t) => {
  const { config, sql: direct } = await freshDatabase(t);
  await direct`CREATE TABLE frozen_rows (id int)`;
  const proxy = await holdingProxy(t, Number(new URL(config.databaseUrl).port));
  const url = new URL(config.databaseUrl);
  url.port = String(proxy.port);
  const sql = connect(url.toString(), { timeoutMs: BOUND_MS, max: 1 });
  t.teardown(() => sql.end({ timeout: 0 }));
  await sql`SELECT 1`;
  // The only connection is taken by a transaction that gets no answer; a write waits for a connection.
  const stuck = timed(
    sql.begin(async (tx) => {
      proxy.hold('both');
      await tx`SELECT 1`;
    }),
  );
  const queued = timed(sql`INSERT INTO frozen_rows VALUES (3)`);
  const [first, second] = await Promise.all([stuck, queued]);
  t.ok(first.err instanceof DatabaseTimeoutError && !first.err.mayHaveApplied, 'the stuck transaction fails as not applied');
  t.ok(second.err instanceof DatabaseTimeoutError && !second.err.mayHaveApplied, `the queued write fails as not applied (${String(second.err)})`);
  t.ok(Math.max(first.ms, second.ms) < BOUND_MS + 700, `both within the bound (${Math.round(first.ms)}, ${Math.round(second.ms)} ms)`);
  proxy.release();
  await new Promise((resolve) => setTimeout(resolve, 500));
  t.same(await direct`SELECT id FROM frozen_rows`, [], 'the queued write was never sent');
});

t.test('a write pipelined behind a stuck statement on the same connection: its 503 says it may have been applied', async (t) => {
  const { config, sql: direct } = await freshDatabase(t);
  await direct`CREATE TABLE frozen_rows (id int)`;
  const proxy = await holdingProxy(t, Number(new URL(config.databaseUrl).port));
  const url = new URL(config.databaseUrl);
  url.port = String(proxy.port);
  const sql = connect(url.toString(), { timeoutMs: BOUND_MS, max: 1 });
  t.teardown(() => sql.end({ timeout: 0 }));
  await sql`SELECT 1`;
  proxy.hold('both');
  const [read, write] = await Promise.all([timed(sql`SELECT 1`), timed(sql`INSERT INTO frozen_rows VALUES (4)`)]);
  t.ok(read.err instanceof DatabaseTimeoutError && !read.err.mayHaveApplied, 'the read fails as unavailable');
  t.ok(write.err instanceof DatabaseTimeoutError && write.err.mayHaveApplied, `the write fails as may have been applied (${String(write.err)})`);
  t.match(classifyUnavailable(write.err), { status: 503, detail: /may have been applied/ });
  proxy.release();
});

t.test('a transaction whose connection the server closes under it: an error answer, nothing thrown outside it', async (t) => {
  const { config } = await freshDatabase(t);
  const sql = connect(config.databaseUrl, { timeoutMs: 2000 });
  t.teardown(() => sql.end({ timeout: 1 }));
  const { err } = await timed(sql.begin(async (tx) => void (await tx`SELECT pg_terminate_backend(pg_backend_pid())`)));
  t.ok(isDatabaseUnavailable(err), `fails as unavailable (${(err as { code?: string }).code})`);
  // Its ROLLBACK would be written to the closed socket on the next turn of the event loop.
  await new Promise((resolve) => setTimeout(resolve, 300));
  t.equal((await sql`SELECT 1 AS one`)[0]?.one, 1, 'the pool goes on');
});

t.test('a failover while a change is out: its 503 says whether it may have been applied', async (t) => {
  const { config, sql: direct } = await freshDatabase(t);
  await direct`CREATE TABLE lost_rows (id int)`;
  const proxy = await holdingProxy(t, Number(new URL(config.databaseUrl).port));
  const url = new URL(config.databaseUrl);
  url.port = String(proxy.port);
  const sql = connect(url.toString(), { timeoutMs: 5000, max: 1 });
  t.teardown(() => sql.end({ timeout: 0 }));
  await sql`SELECT 1`;
  const dropSoon = () => setTimeout(() => proxy.drop(), 200);

  // A statement that commits by itself reaches the server; the connection is lost before its answer.
  proxy.hold('down');
  dropSoon();
  const single = await timed(sql`INSERT INTO lost_rows VALUES (1)`);
  t.ok(single.err instanceof DatabaseTimeoutError && single.err.mayHaveApplied, `a single change: may have been applied (${String(single.err)})`);
  t.match(classifyUnavailable(single.err), { status: 503, detail: /may have been applied/ });

  // A transaction whose COMMIT was sent.
  proxy.release();
  const committed = await timed(
    sql.begin(async (tx) => {
      await tx`INSERT INTO lost_rows VALUES (2)`;
      proxy.hold('down');
      dropSoon();
    }),
  );
  t.ok(committed.err instanceof DatabaseTimeoutError && committed.err.mayHaveApplied, `a sent COMMIT: may have been applied (${String(committed.err)})`);

  // A transaction lost before its COMMIT: nothing of it was applied, and the answer says so.
  proxy.release();
  const open = await timed(
    sql.begin(async (tx) => {
      await tx`INSERT INTO lost_rows VALUES (3)`;
      proxy.drop();
      await tx`SELECT 1`;
    }),
  );
  t.ok(isDatabaseUnavailable(open.err) && !(open.err instanceof DatabaseTimeoutError && open.err.mayHaveApplied), `before COMMIT: unavailable, not applied (${String(open.err)})`);
  t.equal(classifyUnavailable(open.err)?.detail, 'The database is unavailable; try again later.');
  proxy.release();
  await new Promise((resolve) => setTimeout(resolve, 300));
  t.same((await direct<{ id: number }[]>`SELECT id FROM lost_rows ORDER BY id`).map((r) => r.id), [1, 2], 'the answers were truthful: 1 and 2 applied, 3 not');
});
