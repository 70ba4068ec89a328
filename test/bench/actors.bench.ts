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
 * Goals: resident memory under 1 GB (10^9 bytes) with every actor restored, and the registry read
 * and the restore together under 5 s (the whole platform's start: the `scale` scenario).
 */
import { availableParallelism, cpus } from 'node:os';
import { connect, ensureDatabase, type Sql } from '../../db/connect.js';
import { migrate } from '../../db/migrate.js';
import { CATEGORIES } from '../../src/domain/categories/index.js';
import { dropDatabase } from '../helpers/platform.js';
import { Child, type ChildMessage } from './lib/child.js';
import type { BenchOptions, Scenario } from './lib/scenario.js';
import { fixed, integer, table } from './lib/table.js';
import type { MemoryPoint } from './lib/actors-restore.js';
import { seedRegistry } from './lib/seed.js';
import { workspace } from './lib/workspace.js';
import { printGoals } from './lib/cpu-report.js';

const STATIONS = 100_000;
const GOAL_RSS_BYTES = 1e9;
const GOAL_RESTORE_MS = 5_000;
/** Ages of the readings: up to 40 minutes, pricing up to 26 hours (milliseconds). */
const SPREAD_MS = 40 * 60_000;
const PRICING_SPREAD_MS = 26 * 3_600_000;

const MB = 1e6;
const mb = (bytes: number) => integer(bytes / MB);
const seconds = (ms: number) => fixed(ms / 1000, 2);

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
  const { database, databaseUrl } = workspace('actors');
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
    await seedRegistry(sql, { stations: STATIONS, readings: { spreadMs: SPREAD_MS, pricingSpreadMs: PRICING_SPREAD_MS } });
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
  const timeMet = result.registryMs + result.restoreMs < GOAL_RESTORE_MS;
  options.print();
  printGoals(options.print, [{ what: 'resident memory with every actor restored', measured: `${mb(result.afterRestore.rss)} MB`, goal: `under ${mb(GOAL_RSS_BYTES)} MB`, met: rssMet }]);
  if (result.peakRss >= GOAL_RSS_BYTES) options.print(`Note: the peak during the run (${mb(result.peakRss)} MB) was above the goal.`);
  printGoals(options.print, [{ what: 'registry read and restore', measured: `${seconds(result.registryMs + result.restoreMs)} s`, goal: `under ${seconds(GOAL_RESTORE_MS)} s`, met: timeMet }]);

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
