/**
 * history: the status history at scale. 1,000 stations (a quarter with opening hours) and 7 days of
 * one-minute availability and usage readings (about 20 million, generated set-based in PostgreSQL,
 * each station silent for one hour a day at its own time, nozzles changing now and then), turned into
 * intervals by the history worker's own materialiser (workers/history/jobs.ts), rolled up by the hour.
 * Then, over HTTP against the platform: the 30-day reliability of one station and one day's history
 * page (export v2's extension), each asked for random stations in turn; the hourly roll-up job run
 * again for one hour; the tables' and indexes' size per million readings.
 * Goals: reliability p99 under 50 ms, a day's history page p99 under 100 ms, the hourly roll-up under
 * 10 s.
 */
import { connect, ensureDatabase, type Sql } from '../../db/connect.js';
import { migrate } from '../../db/migrate.js';
import { readRegistryRows } from '../../db/queries/registry.js';
import { createPartitions, setProgress } from '../../db/queries/history.js';
import { freshnessPolicies } from '../../src/domain/categories/index.js';
import { Registry } from '../../src/registry/registry.js';
import { materialize, rollUpHours, type HistoryJobs } from '../../workers/history/jobs.js';
import { TOKENS } from '../helpers/fixtures.js';
import { Child } from './lib/child.js';
import type { BenchOptions, Scenario } from './lib/scenario.js';
import { benchHrsId, seedRegistry } from './lib/seed.js';
import { fixed, integer, table } from './lib/table.js';
import { tearDown, workspace } from './lib/workspace.js';
import { printGoals } from './lib/cpu-report.js';

const STATIONS = 1000;
const DAYS = 7;
const HOUR = 3_600_000;
const MIN = 60_000;
const REQUESTS = 300;
const GOALS = { reliabilityP99Ms: 50, historyP99Ms: 100, rollUpMs: 10_000 };

/** One-minute availability and usage readings of every station over [from, to), set-based. */
async function generateReadings(sql: Sql, from: number, to: number): Promise<number> {
  return sql.begin(async (tx) => {
    // The rows are generated consistent: no foreign-key check per row (a superuser skips them).
    const [role] = await tx<{ rolsuper: boolean }[]>`SELECT rolsuper FROM pg_roles WHERE rolname = current_user`;
    if (role?.rolsuper) await tx`SET LOCAL session_replication_role = replica`;
    await tx`SET LOCAL synchronous_commit = off`;
    const [row] = await tx<{ n: number }[]>`
      WITH minutes AS (
        SELECT m FROM generate_series(${new Date(from)}::timestamptz, ${new Date(to - MIN)}::timestamptz, interval '1 minute') AS m
      ), stations AS (
        SELECT hrs_id, row_number() OVER (ORDER BY hrs_id) AS i FROM stations WHERE operator_id = 'bench-operator'
      ), readings AS (
        SELECT s.hrs_id, c.category, m.m, s.i
        FROM stations s CROSS JOIN minutes m CROSS JOIN (VALUES ('availability'), ('usage')) AS c(category)
        -- Each station is silent for one hour a day, at an hour of its own.
        WHERE extract(hour FROM m.m AT TIME ZONE 'UTC') <> s.i % 24
      ), inserted AS (
        INSERT INTO signal_history (hrs_id, category, originator_id, measured_at, received_at, transmission_id, payload)
        SELECT hrs_id, category, 'bench-monitor', m, m + interval '1 second', NULL,
          CASE WHEN category = 'availability' THEN jsonb_build_object(
            'station', jsonb_build_object('maintenance', false, 'limitedly_available', false),
            'nozzles', jsonb_build_array(
              jsonb_build_object('id', 'N1', 'available', (extract(epoch FROM m)::bigint / 60 + i) % 97 <> 0),
              jsonb_build_object('id', 'N2', 'available', (extract(epoch FROM m)::bigint / 60 + i) % 89 > 3)))
          ELSE jsonb_build_object('nozzles', jsonb_build_array(jsonb_build_object('dispenser_id', 'D1', 'usage_status',
            CASE WHEN (extract(epoch FROM m)::bigint / 60 + i) % 7 = 0 THEN 'in-use' ELSE 'free' END))) END
        FROM readings
        RETURNING 1
      )
      SELECT count(*)::int AS n FROM inserted`;
    return row!.n;
  });
}

const percentile = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.floor((sorted.length * p) / 100))]!;

async function latencies(base: string, paths: string[]): Promise<{ p50: number; p99: number; max: number; bytes: number }> {
  const times: number[] = [];
  let bytes = 0;
  for (const path of paths) {
    const started = performance.now();
    const res = await fetch(`${base}${path}`, { headers: { Authorization: `Bearer ${TOKENS.export_v2}` } });
    const body = await res.arrayBuffer();
    times.push(performance.now() - started);
    if (res.status !== 200) throw new Error(`${path} answered ${res.status}: ${Buffer.from(body).toString()}`);
    bytes += body.byteLength;
  }
  times.sort((a, b) => a - b);
  return { p50: percentile(times, 50), p99: percentile(times, 99), max: times.at(-1)!, bytes: bytes / paths.length };
}

async function sizes(sql: Sql) {
  return sql<{ name: string; table_bytes: number; index_bytes: number; rows: number }[]>`
    SELECT parent.relname AS name,
      sum(pg_table_size(child.oid))::float8 AS table_bytes, sum(pg_indexes_size(child.oid))::float8 AS index_bytes,
      sum(child.reltuples)::float8 AS rows
    FROM pg_inherits JOIN pg_class parent ON parent.oid = inhparent JOIN pg_class child ON child.oid = inhrelid
    WHERE parent.relname IN ('signal_history', 'status_intervals')
    GROUP BY parent.relname
    UNION ALL
    SELECT relname, pg_table_size(oid)::float8, pg_indexes_size(oid)::float8, reltuples::float8 FROM pg_class WHERE relname = 'history_hourly'`;
}

async function run(options: BenchOptions): Promise<void> {
  const space = workspace('history');
  const { database, databaseUrl } = space;
  const servers: { child: Child; port: number }[] = [];
  const sql = connect(databaseUrl.toString(), { max: 4 });
  try {
    await ensureDatabase(databaseUrl.toString());
    await migrate(sql);
    await seedRegistry(sql, { stations: STATIONS });
    const end = Math.floor((Date.now() - 2 * MIN) / HOUR) * HOUR;
    const start = end - DAYS * 24 * HOUR;
    await createPartitions(sql, new Date(start - 7 * 24 * HOUR), new Date(end + 28 * 24 * HOUR));
    let t0 = performance.now();
    const readings = await generateReadings(sql, start, end);
    await sql`VACUUM ANALYZE signal_history`;
    options.print(`generated ${integer(readings)} readings (${DAYS} days × ${integer(STATIONS)} stations × availability and usage, one a minute) in ${fixed((performance.now() - t0) / 1000, 1)} s`);

    const registry = new Registry(() => readRegistryRows(sql));
    await registry.reload();
    const jobs: HistoryJobs = {
      sql,
      stations: () => registry,
      policies: freshnessPolicies({ staleAfterMs: 5 * MIN, unknownAfterMs: 30 * MIN, pricingStaleAfterMs: 25 * HOUR }),
      lagMs: 0,
      retentionDays: 400,
      now: () => end,
    };
    await setProgress(sql, 'materialized', new Date(start - 1));
    t0 = performance.now();
    const made = await materialize(jobs, 10_000);
    const materializeMs = performance.now() - t0;
    options.print(
      `materialised ${integer(made.readings)} readings into ${integer(made.intervals)} closed intervals in ${made.steps} hourly steps: ` +
        `${fixed(materializeMs / 1000, 1)} s (${integer(made.readings / (materializeMs / 1000))} readings/s, ${fixed(materializeMs / made.steps, 0)} ms an hour of receipts)`,
    );
    t0 = performance.now();
    const rolled = await rollUpHours(jobs, 10_000);
    options.print(`rolled up ${DAYS * 24} hours into ${integer(rolled.rows)} rows in ${fixed((performance.now() - t0) / 1000, 1)} s`);
    await sql`VACUUM ANALYZE status_intervals`;
    await sql`VACUUM ANALYZE history_hourly`;

    // The hourly job, as it runs each hour: the last hour again.
    await setProgress(sql, 'rolled_up', new Date(end - HOUR));
    t0 = performance.now();
    const hourly = await rollUpHours(jobs);
    const rollUpMs = performance.now() - t0;
    if (hourly.until?.getTime() !== end) throw new Error('the hourly roll-up did not reach the end');

    const platform = await Child.start('platform', new URL('./lib/platform-server.ts', import.meta.url), {
      env: {
        BENCH_DATABASE_URL: databaseUrl.toString(),
        BENCH_REDIS_PREFIX: database,
        BENCH_FIXTURE: 'export-token',
        BENCH_PLATFORM_ENV: JSON.stringify({ EXPORT_V2_RATE_LIMIT_MINUTE: '100000000', EXPORT_V2_RATE_LIMIT_DAY: '100000000' }),
      },
      readyTimeoutMs: 180_000,
    });
    servers.push({ child: platform.child, port: platform.ready.port as number });
    const base = `http://127.0.0.1:${servers[0]!.port}`;
    const pick = (k: number) => benchHrsId((k * 7919) % STATIONS);
    // Warm-up: a few of each, unmeasured.
    await latencies(base, Array.from({ length: 20 }, (_, k) => `/v2/hrs/${pick(k + 1000)}/reliability?period=30d`));
    const reliability = await latencies(base, Array.from({ length: REQUESTS }, (_, k) => `/v2/hrs/${pick(k)}/reliability?period=30d`));
    const day = (k: number) => {
      const from = start + ((k % (DAYS - 1)) + 1) * 24 * HOUR;
      return `from=${new Date(from).toISOString()}&to=${new Date(from + 24 * HOUR).toISOString()}`;
    };
    const history = await latencies(base, Array.from({ length: REQUESTS }, (_, k) => `/v2/hrs/${pick(k)}/history?category=availability&${day(k)}`));

    options.print();
    options.print(
      table(
        ['request (sequential, random stations)', 'p50 (ms)', 'p99 (ms)', 'max (ms)', 'body (kB)', 'goal p99'],
        [
          ['GET /v2/hrs/{id}/reliability?period=30d', fixed(reliability.p50, 1), fixed(reliability.p99, 1), fixed(reliability.max, 1), fixed(reliability.bytes / 1024, 1), `< ${GOALS.reliabilityP99Ms} ms`],
          ['GET /v2/hrs/{id}/history (one day of availability)', fixed(history.p50, 1), fixed(history.p99, 1), fixed(history.max, 1), fixed(history.bytes / 1024, 1), `< ${GOALS.historyP99Ms} ms`],
        ],
      ),
    );
    const sized = await sizes(sql);
    const perMillion = (bytes: number) => fixed(bytes / (readings / 1e6) / 1024 / 1024, 1);
    options.print();
    options.print(
      table(
        ['table', 'rows', 'table (MB)', 'indexes (MB)', 'table per million readings (MB)', 'indexes per million readings (MB)'],
        sized.map((s) => [s.name, integer(s.rows), fixed(s.table_bytes / 1024 / 1024, 1), fixed(s.index_bytes / 1024 / 1024, 1), perMillion(s.table_bytes), perMillion(s.index_bytes)]),
      ),
    );
    options.print();
    options.print(`hourly roll-up job (one hour, ${integer(hourly.rows)} rows): ${fixed(rollUpMs, 0)} ms`);
    printGoals(options.print, [
      { what: '30-day reliability p99', measured: `${fixed(reliability.p99, 1)} ms`, goal: `under ${GOALS.reliabilityP99Ms} ms`, met: reliability.p99 < GOALS.reliabilityP99Ms },
      { what: "a day's history page p99", measured: `${fixed(history.p99, 1)} ms`, goal: `under ${GOALS.historyP99Ms} ms`, met: history.p99 < GOALS.historyP99Ms },
      { what: 'the hourly roll-up', measured: `${fixed(rollUpMs / 1000, 2)} s`, goal: `under ${GOALS.rollUpMs / 1000} s`, met: rollUpMs < GOALS.rollUpMs },
    ]);
  } finally {
    await sql.end({ timeout: 5 });
    await tearDown(space, servers);
  }
}

const scenario: Scenario = {
  description: `the status history: ${integer(STATIONS)} stations × ${DAYS} days of one-minute availability and usage readings`,
  run,
};
export default scenario;
