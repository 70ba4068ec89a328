import type { Sql, Tx } from '../../../db/connect.js';
import { insertCallLogs, type CallLogRow } from '../../../db/queries/call-logs.js';
import { addCallCounts, type CallCount } from '../../../db/queries/call-stats.js';
import {
  createPartitions,
  forgetDerivedHistory,
  hasReadingsBesides,
  lockHistory,
  markPublished,
  readingsReceived,
  rollUp,
  setHourlyReadings,
  setProgress,
  storeReplay,
} from '../../../db/queries/history.js';
import { storeTransmissions, type StoredTransmission } from '../../../db/queries/signals.js';
import { unbounded } from '../../../db/deadline.js';
import { historyJobs, materialize, rollUpHours, type HistoryJobs } from '../../../workers/history/jobs.js';
import { SOURCES } from '../../api/legacy-import/signals.js';
import type { Category } from '../../domain/categories/index.js';
import { replay, type HistoryReading, type Interval, type SeriesState } from '../../domain/history/timeline.js';
import { validateV1Batch } from '../../domain/import-v1/validate.js';
import { validateBatch } from '../../domain/import-v2/validate.js';
import { SANDBOX_ORIGINATOR } from '../../domain/sandbox.js';
import type { StationLookup } from '../../domain/stations.js';
import type { PlatformParts } from '../../platform-parts.js';
import { DEMO_LEGACY_ORIGINATOR, DEMO_LEGACY_STATIONS, DEMO_ORIGINATOR } from './fixture.js';
import { DemoSimulation, type Fixture, type Station } from './simulation.js';

/**
 * The eight weeks of history a demo starts with, so that every view (the portal's timelines and
 * reliability, export v2's history and forecasts, the admins' call logs and error rates) has something
 * to show on first start, and `hrs forecast evaluate` has weeks to learn from and weeks to hold out. The
 * demo's originators "were live" for the last 56 days: their readings come from the same simulated world
 * as the live originator's (simulation.ts: each station follows its pattern, busy, maintenance, flaky or
 * steady), pass the import rules (import v2's and v1.1's validation, against the registry) and are
 * counted per hour as the import endpoints count calls.
 *
 * - **The last week's readings** are stored as the import endpoints store them (signal history, latest
 *   and published signals), with the refused calls in the call log.
 * - **The seven weeks before** (about 640,000 readings) are not stored: a history page of those weeks
 *   lists their intervals and no readings.
 * - **What the history jobs derive** from all eight weeks is derived here, by the platform's own replay
 *   (src/domain/history/timeline.ts) in memory, in the materialiser's hourly steps, as the readings are
 *   simulated (the sandbox's stored readings with them): the intervals, the series as they stand at the
 *   end, and the hourly roll-ups, rolled up by the platform's own roll-up from those intervals, with the
 *   readings each hour received counted as the roll-up counts them (the stored ones by the roll-up
 *   itself). The history jobs' watermarks then stand where the replay ended (HISTORY_LAG before the
 *   start), and the jobs go on from there. The timelines, the reliability figures, the history pages'
 *   intervals and the forecasts read the eight weeks as the jobs would have derived them from the readings.
 *
 * Three things happen in the last week besides the patterns:
 *
 * - a gap: Munich Centre (MUNCE) sends nothing for four hours, 3 days ago from 10:00 UTC, and falls
 *   back to unknown;
 * - refused calls: once a day, an availability transmission naming a nozzle the station's layout does
 *   not have, answered 400 as import v2 answers it (kept in the call log: the demo originator's mode is
 *   `errors`);
 * - the weekly maintenance window of Stuttgart Nord (STUTT), as in every week (simulation.ts).
 *
 * Only into an empty history: when no originator but the export sandbox's simulator has a reading. A
 * restart finds the demo's readings (the backfilled and the live ones) and adds nothing.
 */

const MIN = 60_000;
const HOUR = 60 * MIN;
const DAY = 24 * HOUR;
/** Days of history in all, and of them the last ones stored as readings. */
export const DEMO_HISTORY_DAYS = 56;
export const DEMO_READING_DAYS = 7;
const SEED = 20261126;
/** Readings are received this long after they were measured. */
const LATENCY_MS = 400;

/** When, relative to 00:00 UTC today, the last week's incidents happen. */
export function demoIncidents(now: number) {
  const today = Math.floor(now / DAY) * DAY;
  return {
    gap: { hrsId: 'MUNCE', from: today - 3 * DAY + 10 * HOUR, to: today - 3 * DAY + 14 * HOUR },
    refusals: Array.from({ length: DEMO_READING_DAYS + 1 }, (_, k) => today - k * DAY + (9 + ((k * 5) % 11)) * HOUR + 17 * MIN),
  };
}

export interface BackfillResult {
  /** False: the demo's originators already had readings, nothing was added. */
  backfilled: boolean;
  /** Readings stored (the last week's). */
  readings: number;
  /** Readings replayed in memory and not stored (the weeks before). */
  replayed: number;
  refusedCalls: number;
  ms: number;
}

export interface BackfillOptions {
  now?: number;
  say?: (line: string) => void;
  /** Days of history in all (default DEMO_HISTORY_DAYS) and of them stored as readings (default DEMO_READING_DAYS). */
  days?: number;
  readingDays?: number;
}

/** Backfills the history when the demo's originators have none; resolves to what it did. */
export async function backfillDemoHistory(parts: PlatformParts, fixture: Pick<Fixture, 'stations'>, options: BackfillOptions = {}): Promise<BackfillResult> {
  const started = performance.now();
  const now = options.now ?? Date.now();
  const days = options.days ?? DEMO_HISTORY_DAYS;
  const readingDays = Math.min(days, options.readingDays ?? DEMO_READING_DAYS);
  const sql = unbounded(parts.sql);
  const nothingAdded = (): BackfillResult => ({ backfilled: false, readings: 0, replayed: 0, refusedCalls: 0, ms: Math.round(performance.now() - started) });
  if (await hasReadings(sql)) return nothingAdded();
  options.say?.(
    `Filling the history with the ${days % 7 === 0 ? `${days / 7} weeks` : `${days} days`} before, so timelines, reliability and forecasts show something (first start only; seconds here, up to a minute on a busy machine)…`,
  );
  // The history jobs as of `now`: what is derived here and what they derive after it end at one instant.
  const jobs = { ...historyJobs(sql, () => parts.registry, parts.config), now: () => now };
  // Where the stored readings begin (a whole hour; all of them stored when they are all the days), and
  // how far the history is derived here: as far as the materialiser would go now.
  const stored = readingDays >= days ? 0 : Math.ceil((now - readingDays * DAY) / HOUR) * HOUR;
  const target = now - jobs.lagMs;
  // Readings of others (the sandbox's) received by then are replayed with the simulated ones.
  const others = await readingsReceived(sql, new Date(0), new Date(target));
  const history = await simulateHistory(parts, jobs, fixture.stations, now, days, stored, { target, others });
  const done = await sql.begin(async (tx) => {
    await lockHistory(tx);
    // Checked again under the history's lock: two demos starting on one database backfill once.
    if (await hasReadings(tx)) return false;
    await createPartitions(tx, new Date(Math.min(history.derived.first, now - (days + 1) * DAY)), new Date(now + 28 * DAY));
    // The history derived so far (minutes of it at most: the sandbox's, say) is replaced by what was
    // derived here, the sandbox's readings included.
    await forgetDerivedHistory(tx);
    for (let i = 0; i < history.readings.length; i += 5000) await storeTransmissions(tx, history.readings.slice(i, i + 5000));
    await storeDerived(tx, history.derived, target);
    await insertCallLogs(tx, history.calls);
    await addCallCounts(tx, history.counts);
    return true;
  });
  if (!done) return nothingAdded();
  // Published at once up to now rather than at the history worker's next run (which goes on from there).
  await materialize(jobs, Number.MAX_SAFE_INTEGER);
  await rollUpHours(jobs, Number.MAX_SAFE_INTEGER);
  const result = {
    backfilled: true,
    readings: history.readings.length,
    replayed: history.derived.readings,
    refusedCalls: history.calls.length,
    ms: Math.round(performance.now() - started),
  };
  parts.log.info(result, 'demo: history backfilled');
  return result;
}

/**
 * Whether the history holds readings besides the export sandbox's simulated ones (which start with the
 * platform, and are replayed with the backfill): the demo's originators', or anyone's on a database that
 * has served more than a demo, whose history is not the demo's to rewrite.
 */
const hasReadings = (sql: Sql | Tx) => hasReadingsBesides(sql, [SANDBOX_ORIGINATOR]);

/**
 * The history as the materialiser would have derived it from the readings: it replays the readings
 * received in (from, to] of each step, from just before the first reading, in steps of an hour (the last
 * one ending at `end`), each with the stations that have readings in it or a series due by its end
 * (workers/history/jobs.ts `materialize`).
 */
class DerivedHistory {
  readonly intervals: Interval[] = [];
  /** The readings not stored, received per hour, station, category and originator (what the roll-up counts). */
  readonly counts = new Map<string, { hrsId: string; category: string; originatorId: string; hour: number; readings: number }>();
  /** Readings replayed and not stored. */
  readings = 0;
  /** The first reading's receipt. */
  readonly first: number;
  private from: number;
  private pending = new Map<string, HistoryReading[]>();
  private readonly states = new Map<string, Map<string, SeriesState>>();
  private readonly others: HistoryReading[];

  constructor(
    private readonly jobs: Pick<HistoryJobs, 'policies'>,
    private readonly stations: StationLookup,
    firstSimulated: number,
    private readonly end: number,
    /** The stored readings of others received by `end`, in receipt order. */
    others: readonly HistoryReading[],
  ) {
    this.first = others.reduce((first, r) => Math.min(first, r.receivedAt), firstSimulated);
    this.from = this.first - 1;
    this.others = [...others].reverse();
  }

  /** A simulated reading, in receipt order; `stored`: kept in the history (counted by the roll-up). Past `end`, left to the history jobs. */
  add(reading: HistoryReading, stored: boolean): void {
    if (reading.receivedAt > this.end) return;
    while (reading.receivedAt > Math.min(this.from + HOUR, this.end)) this.step();
    const list = this.pending.get(reading.hrsId);
    if (list) list.push(reading);
    else this.pending.set(reading.hrsId, [reading]);
    if (stored) return;
    this.readings++;
    this.count(reading);
  }

  /** Replays up to `end`; resolves to the series as they then stand. */
  finish(): SeriesState[] {
    while (this.from < this.end) this.step();
    return [...this.states.values()].flatMap((series) => [...series.values()]);
  }

  private count(reading: HistoryReading): void {
    const hour = Math.floor(reading.receivedAt / HOUR) * HOUR;
    const key = `${reading.hrsId} ${reading.category} ${reading.originatorId} ${hour}`;
    const c = this.counts.get(key);
    if (c) c.readings++;
    else this.counts.set(key, { hrsId: reading.hrsId, category: reading.category, originatorId: reading.originatorId, hour, readings: 1 });
  }

  private step(): void {
    const to = Math.min(this.from + HOUR, this.end);
    // The stored readings of others received in the step.
    while (this.others.length > 0 && this.others[this.others.length - 1]!.receivedAt <= to) {
      const reading = this.others.pop()!;
      const list = this.pending.get(reading.hrsId);
      if (list) list.push(reading);
      else this.pending.set(reading.hrsId, [reading]);
    }
    for (const list of this.pending.values()) list.sort((a, b) => a.receivedAt - b.receivedAt);
    const ids = new Set(this.pending.keys());
    for (const [hrsId, series] of this.states) {
      for (const state of series.values()) if (state.nextDue !== null && state.nextDue <= to) ids.add(hrsId);
    }
    const states = new Map<string, SeriesState[]>();
    for (const id of ids) {
      const series = this.states.get(id);
      if (series) states.set(id, [...series.values()]);
    }
    const result = replay(this.stations, this.jobs.policies, states, this.pending, to);
    this.intervals.push(...result.intervals);
    for (const state of result.changed) {
      let series = this.states.get(state.hrsId);
      if (!series) this.states.set(state.hrsId, (series = new Map()));
      series.set(state.series, state);
    }
    for (const { hrsId, series } of result.removed) this.states.get(hrsId)?.delete(series);
    this.pending = new Map();
    this.from = to;
  }
}

/**
 * Stores what was derived (after the stored readings): the intervals and the series at `end` (the
 * materialiser's watermark then), every complete hour before it rolled up by the platform's roll-up (a
 * day per statement, as the roll-up job does) with the readings not stored counted in, and the roll-up's
 * watermark.
 */
async function storeDerived(tx: Tx, derived: Derived, end: number): Promise<void> {
  for (let i = 0; i < derived.intervals.length; i += 5000) await storeReplay(tx, { intervals: derived.intervals.slice(i, i + 5000), changed: [], removed: [] });
  await storeReplay(tx, { intervals: [], changed: derived.series, removed: [] });
  await setProgress(tx, 'materialized', new Date(end));
  const hour = Math.floor(end / HOUR) * HOUR;
  for (let from = Math.floor(derived.first / HOUR) * HOUR; from < hour; from += DAY) await rollUp(tx, new Date(from), new Date(Math.min(hour, from + DAY)));
  const counts = [...derived.counts.values()].filter((c) => c.hour < hour);
  for (let i = 0; i < counts.length; i += 5000) await setHourlyReadings(tx, counts.slice(i, i + 5000));
  await setProgress(tx, 'rolled_up', new Date(hour));
  await markPublished(tx);
}

interface Derived {
  intervals: Interval[];
  series: SeriesState[];
  counts: DerivedHistory['counts'];
  first: number;
  readings: number;
}

interface History {
  /** The stored week's readings. */
  readings: StoredTransmission[];
  calls: CallLogRow[];
  counts: CallCount[];
  derived: Derived;
}

/** Steps simulated between two turns of the event loop (an hour of history, replayed with it: some tens of milliseconds). */
const STEPS_PER_SLICE = 15;

/**
 * The history in memory: every step (shorter than STATUS_STALE_AFTER, so the signals stay fresh), each
 * station's readings as the live originators post them, validated by the import rules, every call
 * counted; those received after `stored` kept to be stored, every one replayed as it comes (DerivedHistory)
 * up to `replay.target`, with the stored readings of others.
 * A few seconds for the demo's stations, in slices: the platform, already listening, answers between
 * them (a first start's "event loop blocked" warning was this).
 */
async function simulateHistory(
  parts: PlatformParts, jobs: HistoryJobs, stations: readonly Station[], now: number, days: number, stored: number,
  replayed: { target: number; others: readonly HistoryReading[] },
): Promise<History> {
  const step = Math.min(4 * MIN, Math.floor(parts.config.statusStaleAfterMs * 0.8));
  const incidents = demoIncidents(now);
  const world = new DemoSimulation(stations, SEED);
  const registry = parts.registry;
  const calls: CallLogRow[] = [];
  const readings: StoredTransmission[] = [];
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
  // The refused calls of the stored week (those before it are not in the call log).
  const refusals = incidents.refusals.filter((at) => at >= stored);
  const end = now - 1000;
  let t = Math.ceil((now - days * DAY) / step) * step;
  const derived = new DerivedHistory(jobs, registry, t + LATENCY_MS, replayed.target, replayed.others);
  const keep = (originatorId: string, hrsId: string, category: string, measuredAt: Date, receivedAt: Date, payload: Record<string, unknown>) => {
    const kept = receivedAt.getTime() > stored;
    if (kept) readings.push(row(originatorId, hrsId, category, measuredAt, receivedAt, payload));
    // As the replay reads a stored reading: the payload as the database gives it back, availability's only.
    const read = category === 'availability' ? (JSON.parse(JSON.stringify(payload)) as Record<string, unknown>) : null;
    derived.add({ hrsId, category: category as Category, originatorId, measuredAt: measuredAt.getTime(), receivedAt: receivedAt.getTime(), payload: read }, kept);
  };
  for (let tick = 0; t <= end; t += step, tick++) {
    if (tick % STEPS_PER_SLICE === STEPS_PER_SLICE - 1) await new Promise((resolve) => setImmediate(resolve));
    const datetime = new Date(t).toISOString();
    const received = new Date(t + LATENCY_MS);
    const silent = (s: Station) => s.hrs_id === incidents.gap.hrsId && t >= incidents.gap.from && t < incidents.gap.to;
    const reporting = stations.filter((s) => !silent(s));
    const legacy = reporting.filter((s) => DEMO_LEGACY_STATIONS.includes(s.hrs_id));
    const v2 = reporting.filter((s) => !legacy.includes(s));
    const post = (category: Category, body: unknown[]) => {
      if (body.length === 0) return;
      const result = validateBatch(category, body, registry, received);
      count(DEMO_ORIGINATOR, received.getTime(), !result.ok);
      // Refused as import v2 would refuse it (a registry edited away from the demo file): not stored.
      if (!result.ok) return;
      for (const x of result.transmissions) {
        if (live(DEMO_ORIGINATOR, x.hrsId, category)) keep(DEMO_ORIGINATOR, x.hrsId, category, x.measuredAt, received, x.payload);
      }
    };
    post('availability', v2.map((s) => world.availability(s, datetime, step)));
    if (legacy.length > 0) {
      const result = validateV1Batch('v1.1', legacy.map((s) => world.legacySignal(s, datetime, step)), registry, received);
      count(DEMO_LEGACY_ORIGINATOR, received.getTime(), result.kind !== 'checked' || result.body !== null);
      if (result.kind === 'checked') {
        for (const o of result.outcomes) {
          if (o.ok && live(DEMO_LEGACY_ORIGINATOR, o.signal.hrsId, 'v1')) {
            keep(DEMO_LEGACY_ORIGINATOR, o.signal.hrsId, 'availability', o.signal.measuredAt, received, { ...o.signal.payload, source: SOURCES['v1.1'] });
          }
        }
      }
    }
    post('usage', reporting.map((s) => world.usage(s, datetime, t)));
    post('hydrogen-storage', reporting.map((s) => world.storage(s, datetime, t, step)));
    post('pricing', reporting.flatMap((s) => world.pricing(s, datetime, step, tick % Math.round(DAY / step) === 0)));
    while (refusals.length > 0 && refusals[refusals.length - 1]! <= t) {
      const at = refusals.pop()!;
      const station = v2[(calls.length * 5) % v2.length];
      if (station === undefined || at < t - step) continue;
      calls.push(refusedCall(registry, station, t, received));
      count(DEMO_ORIGINATOR, received.getTime(), true);
    }
  }
  const series = derived.finish();
  return {
    readings,
    calls,
    counts: [...counts.values()],
    derived: { intervals: derived.intervals, series, counts: derived.counts, first: derived.first, readings: derived.readings },
  };

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
