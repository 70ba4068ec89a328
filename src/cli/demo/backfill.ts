import type { Sql, Tx } from '../../../db/connect.js';
import { insertCallLogs, type CallLogRow } from '../../../db/queries/call-logs.js';
import { addCallCounts, type CallCount } from '../../../db/queries/call-stats.js';
import { createPartitions, forgetDerivedHistory, hasReadingsBesides, lockHistory } from '../../../db/queries/history.js';
import { storeTransmissions, type StoredTransmission } from '../../../db/queries/signals.js';
import { unbounded } from '../../../db/deadline.js';
import { historyJobs, materialize, rollUpHours } from '../../../workers/history/jobs.js';
import { SOURCES } from '../../api/legacy-import/signals.js';
import type { Category } from '../../domain/categories/index.js';
import { validateV1Batch } from '../../domain/import-v1/validate.js';
import { validateBatch } from '../../domain/import-v2/validate.js';
import { SANDBOX_ORIGINATOR } from '../../domain/sandbox.js';
import type { PlatformParts } from '../../platform-parts.js';
import { DEMO_LEGACY_ORIGINATOR, DEMO_LEGACY_STATIONS, DEMO_ORIGINATOR } from './fixture.js';
import { DemoSimulation, type Fixture, type Station } from './simulation.js';

/**
 * The week of history a demo starts with, so that every view (the portal's timelines and reliability,
 * export v2's history, the admins' call logs and error rates) has something to show on first start.
 * The demo's originators "were live" for the last 7 days: their readings come from the same simulated
 * world as the live originator's (simulation.ts), pass the import rules (import v2's and v1.1's
 * validation, against the registry) and are stored as the import endpoints store them (signal history,
 * latest and published signals), with their calls counted per hour and the refused ones in the call
 * log. The history jobs then replay them as they replay live readings. Three things happen in it:
 *
 * - a gap: Munich Centre (MUNCE) sends nothing for four hours, 3 days ago from 10:00 UTC, and falls
 *   back to unknown;
 * - a maintenance window: Stuttgart Nord (STUTT) reports maintenance 2 days ago, 08:00–12:00 UTC;
 * - refused calls: once a day, an availability transmission naming a nozzle the station's layout does
 *   not have, answered 400 as import v2 answers it (kept in the call log: the demo originator's mode is
 *   `errors`).
 *
 * Only into an empty history: when no originator but the export sandbox's simulator has a reading. A
 * restart finds the demo's readings (the backfilled and the live ones) and adds nothing.
 */

const MIN = 60_000;
const HOUR = 60 * MIN;
const DAY = 24 * HOUR;
const DAYS = 7;
const SEED = 20261126;
/** Readings are received this long after they were measured. */
const LATENCY_MS = 400;

/** When, relative to 00:00 UTC today, the week's incidents happen. */
export function demoIncidents(now: number) {
  const today = Math.floor(now / DAY) * DAY;
  return {
    gap: { hrsId: 'MUNCE', from: today - 3 * DAY + 10 * HOUR, to: today - 3 * DAY + 14 * HOUR },
    maintenance: { hrsId: 'STUTT', from: today - 2 * DAY + 8 * HOUR, to: today - 2 * DAY + 12 * HOUR },
    refusals: Array.from({ length: DAYS + 1 }, (_, k) => today - k * DAY + (9 + ((k * 5) % 11)) * HOUR + 17 * MIN),
  };
}

export interface BackfillResult {
  /** False: the demo's originators already had readings, nothing was added. */
  backfilled: boolean;
  readings: number;
  refusedCalls: number;
  ms: number;
}

/** Backfills a week of history when the demo's originators have none; resolves to what it did. */
export async function backfillDemoHistory(
  parts: PlatformParts, fixture: Pick<Fixture, 'stations'>, options: { now?: number; say?: (line: string) => void } = {},
): Promise<BackfillResult> {
  const started = performance.now();
  const now = options.now ?? Date.now();
  const sql = unbounded(parts.sql);
  const nothingAdded = (): BackfillResult => ({ backfilled: false, readings: 0, refusedCalls: 0, ms: Math.round(performance.now() - started) });
  if (await hasReadings(sql)) return nothingAdded();
  options.say?.('Filling the history with the week before, so timelines and reliability show something (first start only; seconds here, up to a minute on a busy machine)…');
  const week = await simulateWeek(parts, fixture.stations, now);
  const stored = await sql.begin(async (tx) => {
    await lockHistory(tx);
    // Checked again under the history's lock: two demos starting on one database backfill once.
    if (await hasReadings(tx)) return false;
    await createPartitions(tx, new Date(now - (DAYS + 1) * DAY), new Date(now + 28 * DAY));
    // The history derived so far (minutes of it at most: the sandbox's, say) is derived again from the
    // readings, the backfilled ones included: the materialiser starts again at the first reading.
    await forgetDerivedHistory(tx);
    for (let i = 0; i < week.readings.length; i += 5000) await storeTransmissions(tx, week.readings.slice(i, i + 5000));
    await insertCallLogs(tx, week.calls);
    await addCallCounts(tx, week.counts);
    return true;
  });
  if (!stored) return nothingAdded();
  // Published at once rather than at the history worker's next run.
  const jobs = historyJobs(sql, () => parts.registry, parts.config);
  await materialize(jobs, Number.MAX_SAFE_INTEGER);
  await rollUpHours(jobs, Number.MAX_SAFE_INTEGER);
  const result = { backfilled: true, readings: week.readings.length, refusedCalls: week.calls.length, ms: Math.round(performance.now() - started) };
  parts.log.info(result, 'demo: a week of history backfilled');
  return result;
}

/**
 * Whether the history holds readings besides the export sandbox's simulated ones (which start with the
 * platform, and are replayed with the week): the demo's originators', or anyone's on a database that
 * has served more than a demo, whose history is not the demo's to rewrite.
 */
const hasReadings = (sql: Sql | Tx) => hasReadingsBesides(sql, [SANDBOX_ORIGINATOR]);

interface Week {
  readings: StoredTransmission[];
  calls: CallLogRow[];
  counts: CallCount[];
}

/** Steps simulated between two turns of the event loop (a few hours of the week: some tens of milliseconds). */
const STEPS_PER_SLICE = 60;

/**
 * The week in memory: every step (shorter than STATUS_STALE_AFTER, so the signals stay fresh), each
 * station's readings as the live originators post them, validated by the import rules. About a second
 * of validation for the demo's stations, in slices: the platform, already listening, answers between
 * them (a first start's "event loop blocked" warning was this).
 */
async function simulateWeek(parts: PlatformParts, stations: readonly Station[], now: number): Promise<Week> {
  const step = Math.min(4 * MIN, Math.floor(parts.config.statusStaleAfterMs * 0.8));
  const incidents = demoIncidents(now);
  const world = new DemoSimulation(stations, SEED);
  const registry = parts.registry;
  const week: Week = { readings: [], calls: [], counts: [] };
  const counts = new Map<string, CallCount>();
  const count = (originator: string, at: number, rejected: boolean) => {
    const hour = Math.floor(at / HOUR) * HOUR;
    const key = `${originator}@${hour}`;
    const c = counts.get(key) ?? { originator, hour, calls: 0, rejected: 0, lastCallAt: at, lastRejectedAt: null };
    c.calls++;
    c.lastCallAt = Math.max(c.lastCallAt, at);
    if (rejected) {
      c.rejected++;
      c.lastRejectedAt = Math.max(c.lastRejectedAt ?? 0, at);
    }
    counts.set(key, c);
  };
  const live = (originator: string, hrsId: string, category: string) => registry.assignment(originator, hrsId, category) === 'live';
  const refusals = [...incidents.refusals];
  const end = now - 1000;
  let t = Math.ceil((now - DAYS * DAY) / step) * step;
  for (let tick = 0; t <= end; t += step, tick++) {
    if (tick % STEPS_PER_SLICE === STEPS_PER_SLICE - 1) await new Promise((resolve) => setImmediate(resolve));
    const datetime = new Date(t).toISOString();
    const received = new Date(t + LATENCY_MS);
    const silent = (s: Station) => s.hrs_id === incidents.gap.hrsId && t >= incidents.gap.from && t < incidents.gap.to;
    const reporting = stations.filter((s) => !silent(s));
    const maintenance = (s: Station) => s.hrs_id === incidents.maintenance.hrsId && t >= incidents.maintenance.from && t < incidents.maintenance.to;
    const legacy = reporting.filter((s) => DEMO_LEGACY_STATIONS.includes(s.hrs_id));
    const v2 = reporting.filter((s) => !legacy.includes(s));
    const post = (category: Category, body: unknown[]) => {
      if (body.length === 0) return;
      const result = validateBatch(category, body, registry, received);
      count(DEMO_ORIGINATOR, received.getTime(), !result.ok);
      // Refused as import v2 would refuse it (a registry edited away from the demo file): not stored.
      if (!result.ok) return;
      for (const x of result.transmissions) {
        if (live(DEMO_ORIGINATOR, x.hrsId, category)) week.readings.push(row(DEMO_ORIGINATOR, x.hrsId, category, x.measuredAt, received, x.payload));
      }
    };
    post('availability', v2.map((s) => world.availability(s, datetime, step, maintenance(s))));
    if (legacy.length > 0) {
      const result = validateV1Batch('v1.1', legacy.map((s) => world.legacySignal(s, datetime, step, maintenance(s))), registry, received);
      count(DEMO_LEGACY_ORIGINATOR, received.getTime(), result.kind !== 'checked' || result.body !== null);
      if (result.kind === 'checked') {
        for (const o of result.outcomes) {
          if (o.ok && live(DEMO_LEGACY_ORIGINATOR, o.signal.hrsId, 'v1')) {
            week.readings.push(row(DEMO_LEGACY_ORIGINATOR, o.signal.hrsId, 'availability', o.signal.measuredAt, received, { ...o.signal.payload, source: SOURCES['v1.1'] }));
          }
        }
      }
    }
    post('usage', reporting.map((s) => world.usage(s, datetime, t)));
    post('hydrogen-storage', reporting.map((s) => world.storage(s, datetime, t, step)));
    post('pricing', reporting.flatMap((s) => world.pricing(s, datetime, step, tick % Math.round(DAY / step) === 0)));
    while (refusals.length > 0 && refusals[refusals.length - 1]! <= t) {
      const at = refusals.pop()!;
      const station = v2[(week.calls.length * 5) % v2.length];
      if (station === undefined || at < t - step) continue;
      week.calls.push(refusedCall(registry, station, t, received));
      count(DEMO_ORIGINATOR, received.getTime(), true);
    }
  }
  week.counts = [...counts.values()];
  return week;

  function refusedCall(lookup: typeof registry, station: Station, at: number, receivedAt: Date): CallLogRow {
    const body = [world.refused(station, new Date(at).toISOString())];
    const result = validateBatch('availability', body, lookup, receivedAt);
    const errors = result.ok ? null : result.body;
    return {
      originator: DEMO_ORIGINATOR,
      request_time: receivedAt.toISOString(),
      endpoint: 'POST /import/v2/signal/availability/',
      station_ids: [station.hrs_id],
      status: 400,
      request_body: JSON.stringify(body),
      response_body: JSON.stringify(errors),
      error_details: { code: 'validation_failed', errors },
      request_id: `demo-history-${at}`,
      client_address: '127.0.0.1',
    };
  }
}

function row(originatorId: string, hrsId: string, category: string, measuredAt: Date, receivedAt: Date, payload: Record<string, unknown>): StoredTransmission {
  return { originatorId, hrsId, category, state: 'live', measuredAt, receivedAt, transmissionId: null, payload };
}
