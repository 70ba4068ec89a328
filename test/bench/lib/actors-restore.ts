/**
 * The live status's start-up in a process of its own, as `hrs serve` does it (src/platform.ts): the
 * registry read from PostgreSQL, then one freshness actor per station and category restored from
 * `published_signals`. Run by ../actors.bench.ts with --expose-gc (through NODE_OPTIONS) so memory is
 * read after a full collection.
 *
 * BENCH_DATABASE_URL names the (seeded) database. Tells the parent `ready` with the memory of the
 * process before anything is loaded; on `restore` it loads and restores and answers `restored` with
 * the timings, the memory at each step and the actors per category and freshness.
 */
import { connect } from '../../../db/connect.js';
import { publishedSignalBatches } from '../../../db/queries/signals.js';
import { readRegistryRows } from '../../../db/queries/registry.js';
import { CATEGORIES } from '../../../src/domain/categories/index.js';
import { createLogger } from '../../../src/config/log.js';
import { Registry } from '../../../src/registry/registry.js';
import { LiveStatus } from '../../../machines/live-status.js';
import { next, onStop, ready, send } from './ipc.js';

const gc = (globalThis as { gc?: () => void }).gc;
if (typeof gc !== 'function') throw new Error('actors-restore.ts needs --expose-gc (NODE_OPTIONS=--expose-gc)');
const url = process.env.BENCH_DATABASE_URL;
if (!url) throw new Error('BENCH_DATABASE_URL is not set');

/** The platform's defaults (STATUS_STALE_AFTER, STATUS_UNKNOWN_AFTER, STATUS_PRICING_STALE_AFTER). */
const OPTIONS = { staleAfterMs: 5 * 60_000, unknownAfterMs: 30 * 60_000, pricingStaleAfterMs: 25 * 3_600_000 };

export interface MemoryPoint {
  rss: number;
  heapUsed: number;
  heapTotal: number;
  external: number;
}

/** Memory after two full collections (the second picks up what the first's finalisers freed). */
function settled(): MemoryPoint {
  gc!();
  gc!();
  const { rss, heapUsed, heapTotal, external } = process.memoryUsage();
  return { rss, heapUsed, heapTotal, external };
}

const sql = connect(url, { max: 6 });
onStop(() => sql.end({ timeout: 1 }));
await sql`SELECT 1`;
ready({ baseline: settled() });

await next('restore');
const log = createLogger('warn');
const registryStarted = performance.now();
const registry = new Registry(() => readRegistryRows(sql));
await registry.reload();
const registryMs = performance.now() - registryStarted;
const afterRegistry = settled();

const status = new LiveStatus(registry, log, OPTIONS);
onStop(() => status.close());
const restoreStarted = performance.now();
const restored = await status.restore(publishedSignalBatches(sql));
const restoreMs = performance.now() - restoreStarted;
const afterRestore = settled();

let stations = 0;
const states: Record<string, Record<string, number>> = {};
for (const category of CATEGORIES) states[category] = { fresh: 0, stale: 0, unknown: 0, none: 0 };
for (const hrsId of registry.stationIds()) {
  stations++;
  for (const category of CATEGORIES) states[category]![status.freshness(hrsId, category) ?? 'none']!++;
}

send({
  type: 'restored',
  stations,
  registryMs,
  restoreMs,
  restored,
  actors: status.size,
  states,
  afterRegistry,
  afterRestore,
  /** Peak resident set size of the whole run, bytes. */
  peakRss: process.resourceUsage().maxRSS * 1024,
});
