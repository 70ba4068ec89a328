/**
 * actors: what the live status costs at start for a large registry. A throwaway database gets 100,000
 * stations (each with a confirmed layout: dispenser D1 with nozzles N1 and N2, storage S1, products
 * P700 and P350), an operator, an originator live for all four signal types at every station, and one
 * published snapshot per station and category (400,000 `published_signals` rows in the shape import
 * v2 stores them), all written with set-based SQL. Availability, usage and hydrogen-storage readings
 * are dated over the last 40 minutes, so fresh, stale and unknown all occur; pricing readings over the
 * last 26 hours (a daily heartbeat), so some are stale too.
 *
 * A child process (./lib/actors-restore.ts, with --expose-gc) then starts the live status as the
 * platform does: the registry read into memory, then every actor restored from PostgreSQL. Reported:
 * registry load time, restore time, actors restored and their freshness per category, and the
 * process's resident memory and V8 heap after a forced full GC at three points of the same run:
 * before loading anything (the baseline), with the registry loaded, and with every actor restored.
 *
 * Goals: resident memory under 1.5 GB (1,500,000,000 bytes) with every actor restored, and the
 * restore under 20 s.
 */
import { availableParallelism, cpus } from 'node:os';
import { connect, ensureDatabase, type Sql } from '../../db/connect.js';
import { migrate } from '../../db/migrate.js';
import { CATEGORIES } from '../../src/domain/import-v2/schemas.js';
import { dropDatabase } from '../helpers/platform.js';
import { Child, type ChildMessage } from './lib/child.js';
import type { BenchOptions, Scenario } from './lib/scenario.js';
import { fixed, integer, table } from './lib/table.js';
import type { MemoryPoint } from './lib/actors-restore.js';

const ROOT_URL = process.env.TEST_DATABASE_ROOT ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const STATIONS = 100_000;
const GOAL_RSS_BYTES = 1.5e9;
const GOAL_RESTORE_MS = 20_000;
/** Ages of the readings: up to 40 minutes, pricing up to 26 hours (milliseconds). */
const SPREAD_MS = 40 * 60_000;
const PRICING_SPREAD_MS = 26 * 3_600_000;

const MB = 1e6;
const mb = (bytes: number) => integer(bytes / MB);
const seconds = (ms: number) => fixed(ms / 1000, 2);

/**
 * The whole data set, statement by statement, in one transaction. Triggers (the station-set stamp and
 * the foreign-key checks) are off while it runs: the rows are generated consistent, and a row-level
 * trigger that updates one row 100,000 times in one transaction would take minutes on its own.
 */
async function seed(sql: Sql): Promise<void> {
  const [role] = await sql<{ rolsuper: boolean }[]>`SELECT rolsuper FROM pg_roles WHERE rolname = current_user`;
  await sql.begin(async (tx) => {
    await tx`SET LOCAL synchronous_commit = off`;
    // Superusers skip every trigger, foreign-key checks included; others at least the station-set stamp.
    if (role?.rolsuper) await tx`SET LOCAL session_replication_role = replica`;
    await tx`ALTER TABLE stations DISABLE TRIGGER stations_set_changed`;
    // Station i's hrs_id: i in base 26, five letters (AAAAA, AAAAB, ...).
    await tx`
      CREATE FUNCTION pg_temp.bench_hrs_id(i integer) RETURNS text IMMUTABLE LANGUAGE sql AS $$
        SELECT chr(65 + (i / 456976) % 26) || chr(65 + (i / 17576) % 26) || chr(65 + (i / 676) % 26)
            || chr(65 + (i / 26) % 26) || chr(65 + i % 26)
      $$`;
    await tx`INSERT INTO operators (id, name, email) VALUES ('bench-operator', 'Bench Hydrogen GmbH', 'ops@bench.example')`;
    await tx`INSERT INTO originators (id, name, call_log_mode) VALUES ('bench-monitor', 'Bench Monitoring', 'errors')`;
    await tx`
      INSERT INTO stations (hrs_id, operator_id, name, heavy_duty, opening_hours, details)
      SELECT pg_temp.bench_hrs_id(i), 'bench-operator', 'Bench station ' || (i + 1), i % 10 = 0, '24/7',
             jsonb_build_object('city', 'City ' || (i % 997), 'vehicle_types', jsonb_build_array('M1'))
      FROM generate_series(0, ${STATIONS - 1}::integer) AS i`;
    await tx`
      INSERT INTO layouts (hrs_id, kind, version, content_hash, confirmed_at)
      SELECT hrs_id, 'confirmed', 1, sha256(convert_to(hrs_id, 'UTF8')), now() FROM stations`;
    await tx`
      INSERT INTO dispensers (layout_id, external_id, is_certified, position)
      SELECT id, 'D1', true, 1 FROM layouts`;
    await tx`
      INSERT INTO nozzles (layout_id, dispenser_id, external_id, connector_type, vehicle_side, is_certified, position)
      SELECT d.layout_id, d.id, n.external_id, n.connector_type, n.vehicle_side, n.is_certified, n.position
      FROM dispensers d
      CROSS JOIN (VALUES ('N1', 'H70', 'left', true, 1), ('N2', 'H35', 'right', false, 2))
        AS n (external_id, connector_type, vehicle_side, is_certified, position)`;
    await tx`
      INSERT INTO nozzle_fuelling_options (nozzle_id, fuelling_option, position)
      SELECT id, CASE external_id WHEN 'N1' THEN '700ld' ELSE '350ld' END, 1 FROM nozzles`;
    await tx`
      INSERT INTO storages (layout_id, external_id, nominal_capacity_kg, position)
      SELECT id, 'S1', 500, 1 FROM layouts`;
    await tx`
      INSERT INTO storage_dispensers (storage_id, dispenser_id, position)
      SELECT s.id, d.id, 1 FROM storages s JOIN dispensers d ON d.layout_id = s.layout_id`;
    await tx`
      INSERT INTO products (layout_id, external_id, pressure_stage, green_hydrogen_share, position)
      SELECT l.id, p.external_id, p.pressure_stage, p.green_hydrogen_share, p.position
      FROM layouts l CROSS JOIN (VALUES ('P700', 700, NULL::numeric, 1), ('P350', 350, 50::numeric, 2))
        AS p (external_id, pressure_stage, green_hydrogen_share, position)`;
    await tx`
      INSERT INTO product_nozzles (product_id, nozzle_id, position)
      SELECT p.id, n.id, 1
      FROM products p JOIN nozzles n ON n.layout_id = p.layout_id
        AND n.external_id = CASE p.external_id WHEN 'P700' THEN 'N1' ELSE 'N2' END`;
    await tx`
      INSERT INTO assignments (originator_id, hrs_id, signal_type, state)
      SELECT 'bench-monitor', s.hrs_id, t.signal_type, 'live'
      FROM stations s CROSS JOIN unnest(${tx.array([...CATEGORIES])}::text[]) AS t (signal_type)`;
    // One reading per station and category. Station i's reading of category k is (i * 7919 + k * 104729)
    // mod the spread milliseconds old: spread evenly, the same on every run, different per category.
    await tx`
      WITH readings AS (
        SELECT i, k, category,
               now() - make_interval(secs => ((i::bigint * 7919 + k * 104729) % (CASE category WHEN 'pricing'
                 THEN ${PRICING_SPREAD_MS}::bigint ELSE ${SPREAD_MS}::bigint END)) / 1000.0) AS measured_at
        FROM generate_series(0, ${STATIONS - 1}::integer) AS i
        CROSS JOIN unnest(${tx.array([...CATEGORIES])}::text[]) WITH ORDINALITY AS c (category, k)
      )
      INSERT INTO published_signals (hrs_id, category, originator_id, measured_at, received_at, transmission_id, payload)
      SELECT pg_temp.bench_hrs_id(i), category, 'bench-monitor', measured_at,
             measured_at + make_interval(secs => 0.2 + (i % 40) / 10.0),
             CASE WHEN i % 3 = 0 THEN 'tx-' || i || '-' || k END,
             CASE category
               WHEN 'availability' THEN jsonb_build_object(
                 'station', jsonb_build_object('maintenance', i % 97 = 0, 'limitedly_available', i % 13 = 0),
                 'nozzles', jsonb_build_array(
                   jsonb_build_object('id', 'N1', 'available', i % 7 <> 0),
                   jsonb_build_object('id', 'N2', 'available', i % 11 <> 0)),
                 'fuelling_options', jsonb_build_object('700ld', i % 7 <> 0, '350ld', i % 11 <> 0))
               WHEN 'usage' THEN jsonb_build_object(
                 'nozzles', jsonb_build_array(
                   jsonb_build_object('id', 'N1', 'usage_status', (ARRAY['free', 'in-use', 'reserved', 'free'])[1 + i % 4]),
                   jsonb_build_object('id', 'N2', 'usage_status', (ARRAY['free', 'free', 'in-use'])[1 + i % 3])))
               WHEN 'hydrogen-storage' THEN jsonb_build_object(
                 'storages', jsonb_build_array(jsonb_build_object(
                   'id', 'S1',
                   'remaining_kg', to_char((i * 37 % 50000) / 100.0, 'FM99990.00'),
                   'low_h2_storage', (i * 37 % 50000) < 10000)))
               ELSE jsonb_build_object(
                 'products', jsonb_build_array(
                   jsonb_build_object('id', 'P700', 'gross_price', to_char(12.5 + (i % 300) / 100.0, 'FM990.000'),
                     'net_price', to_char((12.5 + (i % 300) / 100.0) / 1.19, 'FM990.000'), 'currency', 'EUR'),
                   jsonb_build_object('id', 'P350', 'gross_price', to_char(10.5 + (i % 200) / 100.0, 'FM990.000'),
                     'net_price', NULL, 'currency', 'EUR')))
             END
      FROM readings`;
    await tx`ALTER TABLE stations ENABLE TRIGGER stations_set_changed`;
    await tx`UPDATE station_set SET modified_at = clock_timestamp()`;
  });
  await sql`ANALYZE`;
}

interface Restored {
  stations: number;
  registryMs: number;
  restoreMs: number;
  restored: number;
  actors: number;
  states: Record<string, Record<'fresh' | 'stale' | 'unknown' | 'none', number>>;
  afterRegistry: MemoryPoint;
  afterRestore: MemoryPoint;
  peakRss: number;
}

async function run(options: BenchOptions): Promise<void> {
  const database = `hrs_bench_actors_${process.pid}`;
  const databaseUrl = new URL(ROOT_URL);
  databaseUrl.pathname = `/${database}`;
  let sql: Sql | undefined;
  let child: Child | undefined;
  let seedMs = 0;
  let rows = 0;
  let baseline: MemoryPoint;
  let result: Restored;
  try {
    await ensureDatabase(databaseUrl.toString());
    sql = connect(databaseUrl.toString(), { max: 1 });
    await migrate(sql);
    const seedStarted = performance.now();
    await seed(sql);
    seedMs = performance.now() - seedStarted;
    const [count] = await sql<{ n: string }[]>`SELECT count(*) AS n FROM published_signals`;
    rows = Number(count!.n);
    if (rows !== STATIONS * CATEGORIES.length) throw new Error(`seeded ${rows} published_signals rows, not ${STATIONS * CATEGORIES.length}`);

    const started = await Child.start('live status', new URL('./lib/actors-restore.ts', import.meta.url), {
      env: {
        BENCH_DATABASE_URL: databaseUrl.toString(),
        NODE_OPTIONS: [process.env.NODE_OPTIONS, '--expose-gc'].filter(Boolean).join(' '),
      },
    });
    child = started.child;
    baseline = started.ready.baseline as MemoryPoint;
    const reply: ChildMessage = await child.request({ type: 'restore' }, 'restored', 120_000);
    result = reply as unknown as Restored;
  } finally {
    await child?.stop();
    await sql?.end({ timeout: 1 });
    await dropDatabase(database);
  }

  const perActor = (result.afterRestore.rss - result.afterRegistry.rss) / result.restored;
  const perActorHeap = (result.afterRestore.heapUsed - result.afterRegistry.heapUsed) / result.restored;
  options.print(`machine: ${availableParallelism()} CPUs (${cpus()[0]?.model.trim() ?? 'unknown'}), Node.js ${process.version}`);
  options.print(
    `data: ${integer(STATIONS)} stations x ${CATEGORIES.length} categories = ${integer(rows)} published_signals rows, ` +
      `seeded with set-based SQL in ${seconds(seedMs)} s (not part of the measurement); readings up to 40 minutes old ` +
      '(pricing: up to 26 hours)',
  );
  options.print('live status: the platform defaults (stale after 5 min, unknown after 30 min; pricing stale after 25 h)');
  options.print();
  options.print(
    table(
      ['step (one child process, memory after a forced full GC)', 'time s', 'RSS MB', 'heap used MB', 'heap total MB', 'external MB'],
      [
        ['process up, connected, nothing loaded (baseline)', '-', ...memory(baseline!)],
        [`registry loaded (${integer(result.stations)} stations)`, seconds(result.registryMs), ...memory(result.afterRegistry)],
        [`actors restored (${integer(result.restored)})`, seconds(result.restoreMs), ...memory(result.afterRestore)],
      ],
    ),
  );
  options.print();
  options.print(
    `the actors: ${mb(result.afterRestore.rss - result.afterRegistry.rss)} MB RSS over the loaded registry ` +
      `(${integer(perActor)} bytes per actor, ${integer(perActorHeap)} bytes of it V8 heap); ` +
      `peak RSS during the run: ${mb(result.peakRss)} MB`,
  );
  options.print();
  options.print(
    table(
      ['category', 'fresh', 'stale', 'unknown', 'no actor', 'actors'],
      CATEGORIES.map((category) => {
        const s = result.states[category]!;
        return [category, integer(s.fresh), integer(s.stale), integer(s.unknown), integer(s.none), integer(s.fresh + s.stale + s.unknown)];
      }),
    ),
  );
  options.print();
  options.print('MB: 10^6 bytes. RSS: the resident set of the whole process (V8 heap, buffers, code, the runtime itself).');

  const rssMet = result.afterRestore.rss < GOAL_RSS_BYTES;
  const timeMet = result.restoreMs < GOAL_RESTORE_MS;
  options.print();
  options.print(`resident memory with every actor restored: ${mb(result.afterRestore.rss)} MB (goal: under ${mb(GOAL_RSS_BYTES)} MB): ${rssMet ? 'met' : 'NOT met'}`);
  if (result.peakRss >= GOAL_RSS_BYTES) options.print(`Note: the peak during the run (${mb(result.peakRss)} MB) was above the goal.`);
  options.print(`restore time: ${seconds(result.restoreMs)} s (goal: under ${seconds(GOAL_RESTORE_MS)} s): ${timeMet ? 'met' : 'NOT met'}`);

  const failures: string[] = [];
  if (result.restored !== rows) failures.push(`${integer(result.restored)} actors restored from ${integer(rows)} rows`);
  if (result.actors !== rows) failures.push(`${integer(result.actors)} actors held after restoring ${integer(rows)} rows`);
  for (const category of CATEGORIES) {
    const s = result.states[category]!;
    const expected = category === 'availability' || category === 'usage' ? (['fresh', 'stale', 'unknown'] as const) : (['fresh', 'stale'] as const);
    for (const state of expected) if (s[state] === 0) failures.push(`no ${category} actor is ${state}`);
    if (category !== 'availability' && category !== 'usage' && s.unknown > 0) failures.push(`${integer(s.unknown)} ${category} actors are unknown`);
  }
  if (failures.length > 0) throw new Error(`restore check failed:\n  ${failures.join('\n  ')}`);
}

function memory(point: MemoryPoint): string[] {
  return [mb(point.rss), mb(point.heapUsed), mb(point.heapTotal), mb(point.external)];
}

const scenario: Scenario = {
  description: 'live status: 100,000 stations x 4 categories restored from PostgreSQL (resident memory and restore time)',
  run,
};
export default scenario;
