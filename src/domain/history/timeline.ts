import { providedOptions } from '../import-v1/options.js';
import { isOpen, nextChange } from '../opening-hours.js';
import type { StationEntry, StationLookup } from '../stations.js';
import { summarize } from '../status/summary.js';
import { CATEGORIES, type Category, type FreshnessPolicy } from '../categories/index.js';

/**
 * The status history as intervals, replayed from the readings: per station, the freshness of each
 * signal category (`fresh`, `stale`, `unknown`; series = the category) and the five-state summary of
 * each fuelling option (series = `option:<code>`), each a sequence of intervals of one state.
 *
 * Every time is deterministic, so any worker replays the same history: a reading takes effect when it
 * was received (`received_at`: classified by its age then, as the freshness machine classifies it), a
 * reading aged into stale or unknown changes the series exactly at `datetime + STATUS_STALE_AFTER` or
 * `datetime + STATUS_UNKNOWN_AFTER` (machines/freshness.ts), and the summary changes with the
 * availability series and at each opening and closing minute of the station (src/domain/opening-hours).
 * A reading measured before the one the series holds changes nothing (the published snapshot keeps the
 * newer one). Pure: the worker (workers/history/) loads states and readings and stores what comes out.
 */

export type FreshnessState = 'fresh' | 'stale' | 'unknown';


/** Where one series stands: its open interval and, for a freshness series, the last reading. */
export interface SeriesState {
  hrsId: string;
  series: string;
  state: string;
  /** The summary rule that decided the state (summary series); null for freshness. */
  reason: string | null;
  /** Who sent the reading the interval comes from (freshness series). */
  originatorId: string | null;
  /** When the open interval began (epoch ms). */
  since: number;
  measuredAt: number | null;
  receivedAt: number | null;
  /** The availability series keeps its reading's payload: the summary is evaluated from it. */
  payload: Record<string, unknown> | null;
  /** When the series next changes without a reading (epoch ms), or null. */
  nextDue: number | null;
}

/** A closed interval, cut at 00:00 UTC: each piece within one day; pieces of one interval share `since`. */
export interface Interval {
  hrsId: string;
  series: string;
  state: string;
  reason: string | null;
  originatorId: string | null;
  startsAt: number;
  endsAt: number;
  since: number;
}

/** A stored live reading, as the replay needs it (payload for availability only). */
export interface HistoryReading {
  hrsId: string;
  category: Category;
  originatorId: string;
  measuredAt: number;
  receivedAt: number;
  payload: Record<string, unknown> | null;
}

export const DAY_MS = 24 * 3600 * 1000;
export const optionSeries = (option: string) => `option:${option}`;
export const isFreshnessSeries = (series: string): series is Category => (CATEGORIES as readonly string[]).includes(series);

/** Cuts [startsAt, endsAt) at every 00:00 UTC it spans. */
export function dayPieces(base: Omit<Interval, 'startsAt' | 'endsAt'>, startsAt: number, endsAt: number): Interval[] {
  const pieces: Interval[] = [];
  let from = startsAt;
  while (from < endsAt) {
    const to = Math.min(endsAt, (Math.floor(from / DAY_MS) + 1) * DAY_MS);
    pieces.push({ ...base, startsAt: from, endsAt: to });
    from = to;
  }
  return pieces;
}

export interface ReplayResult {
  /** Closed intervals, in the order they closed. */
  intervals: Interval[];
  /** Every series state after the replay that changed (new ones included). */
  changed: SeriesState[];
  /** Series that ended: a fuelling option the station no longer provides. */
  removed: { hrsId: string; series: string }[];
}

/**
 * Replays one station's history from `states` (its series as they stood at `from`) through `readings`
 * (its readings received in (from, to], in receipt order) up to `to`.
 */
export class StationReplay {
  private readonly states = new Map<string, SeriesState>();
  private readonly dirty = new Set<string>();
  private readonly intervals: Interval[] = [];
  private readonly removed: { hrsId: string; series: string }[] = [];
  /** The station's next opening or closing as last computed (null: none ahead); undefined: not yet. */
  private change: number | null | undefined;
  /** Whether the station is open until `change`. */
  private open = true;

  constructor(
    private readonly hrsId: string,
    private readonly station: StationEntry | undefined,
    private readonly policies: Record<Category, FreshnessPolicy>,
    states: readonly SeriesState[],
  ) {
    for (const state of states) this.states.set(state.series, { ...state });
  }

  run(readings: readonly HistoryReading[], to: number): ReplayResult {
    for (const reading of readings) {
      this.advance(reading.receivedAt);
      this.read(reading);
    }
    this.advance(to);
    return {
      intervals: this.intervals,
      changed: [...this.dirty].flatMap((series) => {
        const state = this.states.get(series);
        return state ? [state] : [];
      }),
      removed: this.removed,
    };
  }

  /** Takes every change due at or before `t`, in time order. */
  private advance(t: number): void {
    for (;;) {
      let first: SeriesState | undefined;
      for (const state of this.states.values()) {
        if (state.nextDue !== null && state.nextDue <= t && (first === undefined || state.nextDue < first.nextDue!)) first = state;
      }
      if (first === undefined) return;
      const at = first.nextDue!;
      if (isFreshnessSeries(first.series)) {
        this.age(first, at);
        if (first.series === 'availability') this.summarise(at);
      } else this.summarise(at);
      // Whatever did not move on (a station gone from the registry) waits for its next reading.
      if (first.nextDue !== null && first.nextDue <= at) first.nextDue = null;
    }
  }

  private read(reading: HistoryReading): void {
    const current = this.states.get(reading.category);
    if (current && current.measuredAt !== null && reading.measuredAt < current.measuredAt) return;
    const policy = this.policies[reading.category];
    const at = reading.receivedAt;
    const state = classify(policy, reading.measuredAt, at);
    const next = this.enter(reading.category, state, null, reading.originatorId, at);
    next.measuredAt = reading.measuredAt;
    next.receivedAt = reading.receivedAt;
    next.payload = reading.category === 'availability' ? reading.payload : null;
    next.nextDue = deadline(policy, reading.measuredAt, state);
    this.dirty.add(reading.category);
    if (reading.category === 'availability') this.summarise(at);
  }

  /** A freshness series reaches its deadline. */
  private age(state: SeriesState, at: number): void {
    const policy = this.policies[state.series as Category];
    const reached = classify(policy, state.measuredAt!, at);
    const next = this.enter(state.series, reached, null, state.originatorId, at);
    next.nextDue = deadline(policy, state.measuredAt!, reached);
    this.dirty.add(state.series);
  }

  /** Evaluates the station's summary at `at`: each option's series moves to its state and reason. */
  private summarise(at: number): void {
    const availability = this.states.get('availability');
    const station = this.station;
    const options = station ? providedOptions(station) : [];
    const provided = new Set(options.map(optionSeries));
    for (const [series, state] of this.states) {
      if (isFreshnessSeries(series) || provided.has(series)) continue;
      // An option the station no longer provides: its interval closes.
      this.intervals.push(...dayPieces(base(state), state.since, at));
      this.states.delete(series);
      this.dirty.delete(series);
      this.removed.push({ hrsId: this.hrsId, series });
    }
    if (!station || !availability || availability.measuredAt === null) return;
    const date = new Date(at);
    const reading = { datetime: availability.measuredAt, receivedAt: availability.receivedAt ?? at, payload: availability.payload ?? {} };
    // Open or closed, and the next opening or closing after `at`, are what they were found to be
    // before, as long as that change is still ahead (evaluating opening hours is the costly part).
    if (this.change === undefined || (this.change !== null && this.change <= at)) {
      this.open = isOpen(station.openingHours, station.timeZone, date, station.holidayCountry);
      this.change = nextChange(station.openingHours, station.timeZone, date, station.holidayCountry)?.getTime() ?? null;
    }
    const { open, change } = this;
    const summary = summarize({ options, reading, fresh: availability.state !== 'unknown', open, layout: station.layout });
    for (const entry of summary) {
      const series = optionSeries(entry.fuelling_option);
      const next = this.enter(series, entry.status, entry.reason, null, at);
      next.nextDue = change;
      this.dirty.add(series);
    }
  }

  /** The series moves to `state` at `at`: a change of state, reason or sender closes the open interval. */
  private enter(series: string, state: string, reason: string | null, originatorId: string | null, at: number): SeriesState {
    const current = this.states.get(series);
    if (current && current.state === state && current.reason === reason && current.originatorId === originatorId) return current;
    if (current && current.since < at) this.intervals.push(...dayPieces(base(current), current.since, at));
    const next: SeriesState = {
      hrsId: this.hrsId,
      series,
      state,
      reason,
      originatorId,
      since: at,
      measuredAt: current?.measuredAt ?? null,
      receivedAt: current?.receivedAt ?? null,
      payload: current?.payload ?? null,
      nextDue: null,
    };
    this.states.set(series, next);
    return next;
  }
}

function base(state: SeriesState): Omit<Interval, 'startsAt' | 'endsAt'> {
  return { hrsId: state.hrsId, series: state.series, state: state.state, reason: state.reason, originatorId: state.originatorId, since: state.since };
}

/** The freshness of a reading measured at `measuredAt`, at `at`. */
export function classify(policy: FreshnessPolicy, measuredAt: number, at: number): FreshnessState {
  const age = at - measuredAt;
  if (policy.unknownAfterMs !== null && age >= policy.unknownAfterMs) return 'unknown';
  return age >= policy.staleAfterMs ? 'stale' : 'fresh';
}

/** When a reading in `state` next changes without another reading, or null. */
export function deadline(policy: FreshnessPolicy, measuredAt: number, state: FreshnessState): number | null {
  if (state === 'fresh') return measuredAt + policy.staleAfterMs;
  if (state === 'stale' && policy.unknownAfterMs !== null) return measuredAt + policy.unknownAfterMs;
  return null;
}

/** Replays several stations: `states` and `readings` grouped by station. */
export function replay(
  stations: StationLookup,
  policies: Record<Category, FreshnessPolicy>,
  states: ReadonlyMap<string, readonly SeriesState[]>,
  readings: ReadonlyMap<string, readonly HistoryReading[]>,
  to: number,
): ReplayResult {
  const out: ReplayResult = { intervals: [], changed: [], removed: [] };
  const ids = new Set([...states.keys(), ...readings.keys()]);
  for (const hrsId of ids) {
    const result = new StationReplay(hrsId, stations.station(hrsId), policies, states.get(hrsId) ?? []).run(readings.get(hrsId) ?? [], to);
    out.intervals.push(...result.intervals);
    out.changed.push(...result.changed);
    out.removed.push(...result.removed);
  }
  return out;
}
