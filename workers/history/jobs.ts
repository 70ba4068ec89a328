import type { Sql } from '../../db/connect.js';
import {
  createPartitions,
  dropBefore,
  dropOrphans,
  dueStations,
  firstReceipt,
  lockHistory,
  markPublished,
  progress,
  readingsReceived,
  rollUp,
  seriesOf,
  setProgress,
  storeReplay,
} from '../../db/queries/history.js';
import { freshnessPolicies, type FreshnessPolicy } from '../../src/domain/categories/index.js';
import { replay, type HistoryReading } from '../../src/domain/history/timeline.js';
import type { Config } from '../../src/config/config.js';
import type { StationLookup } from '../../src/domain/stations.js';
import type { Category } from '../../src/domain/categories/index.js';

/**
 * The status history's three jobs (workers/history/processor.ts runs them on a schedule):
 * - `materialize`: replays the readings received since the last run into intervals
 *   (src/domain/history/timeline.ts), up to HISTORY_LAG before now;
 * - `rollUpHours`: the hourly roll-ups of every complete hour materialised since, which publishes them;
 * - `maintainPartitions`: weekly partitions four weeks ahead, those past the retention dropped, the
 *   readings of a station or originator removed while they were being stored deleted.
 * Each step is one transaction under one advisory lock, so workers on several machines take turns and
 * a step that fails leaves nothing half done; the next run starts where the last one committed.
 */

export interface HistoryJobs {
  sql: Sql;
  /** The registry as it is now (opening hours, layouts, fuelling options). */
  stations: () => StationLookup | Promise<StationLookup>;
  policies: Record<Category, FreshnessPolicy>;
  lagMs: number;
  retentionDays: number;
  now?: () => number;
}

/** The jobs' settings from the platform's configuration (the worker, `hrs history run` and the tests). */
export function historyJobs(
  sql: Sql,
  stations: HistoryJobs['stations'],
  config: Pick<Config, 'statusStaleAfterMs' | 'statusUnknownAfterMs' | 'statusPricingStaleAfterMs' | 'historyLagMs' | 'historyRetentionDays'>,
): HistoryJobs {
  return {
    sql,
    stations,
    policies: freshnessPolicies({
      staleAfterMs: config.statusStaleAfterMs,
      unknownAfterMs: config.statusUnknownAfterMs,
      pricingStaleAfterMs: config.statusPricingStaleAfterMs,
    }),
    lagMs: config.historyLagMs,
    retentionDays: config.historyRetentionDays,
  };
}

const HOUR_MS = 3_600_000;
/** At most this much receipt time per transaction: a backlog is worked off in steps. */
const STEP_MS = HOUR_MS;
const floorHour = (ms: number) => Math.floor(ms / HOUR_MS) * HOUR_MS;

export interface MaterializeResult {
  from: Date | null;
  until: Date | null;
  readings: number;
  intervals: number;
  steps: number;
}

/** Brings the intervals up to `now - lagMs`; resolves to what it did. */
export async function materialize(jobs: HistoryJobs, maxSteps = 1000): Promise<MaterializeResult> {
  const target = (jobs.now ?? Date.now)() - jobs.lagMs;
  const out: MaterializeResult = { from: null, until: null, readings: 0, intervals: 0, steps: 0 };
  const stations = await jobs.stations();
  while (out.steps < maxSteps) {
    const done = await jobs.sql.begin(async (tx) => {
      await lockHistory(tx);
      let from = (await progress(tx, 'materialized'))?.getTime();
      // A first run starts just before the first reading, or at the target when that is later: the
      // history is then materialised (empty) up to the target, and published once rolled up.
      if (from === undefined) from = Math.min((await firstReceipt(tx))?.getTime() ?? target, target) - 1;
      if (from >= target) return true;
      const to = Math.min(from + STEP_MS, target);
      const readings = await readingsReceived(tx, new Date(from), new Date(to));
      const byStation = new Map<string, HistoryReading[]>();
      for (const reading of readings) {
        const list = byStation.get(reading.hrsId);
        if (list) list.push(reading);
        else byStation.set(reading.hrsId, [reading]);
      }
      const ids = new Set([...byStation.keys(), ...(await dueStations(tx, new Date(to)))]);
      const states = await seriesOf(tx, [...ids]);
      const result = replay(stations, jobs.policies, states, byStation, to);
      await storeReplay(tx, result);
      await setProgress(tx, 'materialized', new Date(to));
      out.from ??= new Date(from);
      out.until = new Date(to);
      out.readings += readings.length;
      out.intervals += result.intervals.length;
      return to >= target;
    });
    out.steps++;
    if (done) break;
  }
  return out;
}

export interface RollUpResult {
  from: Date | null;
  until: Date | null;
  rows: number;
}

/**
 * Rolls up every complete hour materialised and not yet rolled up (a day at most per transaction).
 * This is what publishes the history: export v2 and the portal's figures end at the last hour rolled
 * up, and each step that rolls up hours moves the published history's `changed_at` (its Last-Modified).
 */
export async function rollUpHours(jobs: HistoryJobs, maxSteps = 1000): Promise<RollUpResult> {
  const out: RollUpResult = { from: null, until: null, rows: 0 };
  for (let step = 0; step < maxSteps; step++) {
    const done = await jobs.sql.begin(async (tx) => {
      await lockHistory(tx);
      const materialized = await progress(tx, 'materialized');
      if (materialized === null) return true;
      const end = floorHour(materialized.getTime());
      const rolled = (await progress(tx, 'rolled_up'))?.getTime();
      const from = rolled ?? floorHour((await firstReceipt(tx))?.getTime() ?? end);
      if (from >= end) {
        // Nothing received before the last complete hour: the history up to it is published, empty
        // (all unknown), rather than nothing at all.
        if (rolled === undefined) {
          await setProgress(tx, 'rolled_up', new Date(end));
          await markPublished(tx);
          out.until = new Date(end);
        }
        return true;
      }
      const to = Math.min(end, from + 24 * HOUR_MS);
      out.rows += await rollUp(tx, new Date(from), new Date(to));
      await setProgress(tx, 'rolled_up', new Date(to));
      // What export v2 publishes has changed: its Last-Modified moves.
      await markPublished(tx);
      out.from ??= new Date(from);
      out.until = new Date(to);
      return to >= end;
    });
    if (done) break;
  }
  return out;
}

export interface PartitionResult {
  created: number;
  dropped: string[];
  /** Readings of the last day whose station or originator was removed meanwhile, deleted. */
  orphans: number;
}

/**
 * Creates the partitions from a week back to four weeks ahead; drops what the retention lets go;
 * deletes the readings of the last day left of a removed station or originator (see dropOrphans).
 */
export async function maintainPartitions(jobs: HistoryJobs): Promise<PartitionResult> {
  const now = (jobs.now ?? Date.now)();
  return jobs.sql.begin(async (tx) => {
    await lockHistory(tx);
    const created = await createPartitions(tx, new Date(now - 7 * 24 * HOUR_MS), new Date(now + 28 * 24 * HOUR_MS));
    const { dropped, deleted } = await dropBefore(tx, new Date(now - jobs.retentionDays * 24 * HOUR_MS));
    const orphans = await dropOrphans(tx, new Date(now - 24 * HOUR_MS));
    // Rows gone from the published history (a 30-day figure under a shorter retention, an old page).
    if (dropped.length > 0 || deleted > 0 || orphans > 0) await markPublished(tx);
    return { created, dropped, orphans };
  });
}
