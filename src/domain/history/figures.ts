import { SUMMARY_STATES, type SummaryState } from '../status/summary.js';
import { CATEGORIES, SECTION_KEYS, turnsUnknown, type Category, type SectionKey } from '../categories/index.js';
import { FUELLING_OPTIONS, type FuellingOption } from '../vocabulary.js';

/**
 * Reliability figures and timelines from the status history (pure; db/queries/history-reads.ts reads
 * the rows). Shares are of the whole period: time before a station's first reading, or with no
 * reading at all, counts as `unknown` (nothing was known), so a period's shares always add up to 1.
 */

export const PERIODS = { '24h': 24 * 3600_000, '7d': 7 * 24 * 3600_000, '30d': 30 * 24 * 3600_000 } as const;
export type Period = keyof typeof PERIODS;
export const isPeriod = (value: string): value is Period => Object.hasOwn(PERIODS, value);

export const HOUR_MS = 3_600_000;
export const floorHour = (ms: number) => Math.floor(ms / HOUR_MS) * HOUR_MS;

/** A roll-up summed over the period, per series (db/queries/history-reads.ts HourlySums). */
export interface SeriesSums {
  series: string;
  fresh_ms: number;
  stale_ms: number;
  unknown_ms: number;
  available_ms: number;
  limited_ms: number;
  unavailable_ms: number;
  closed_ms: number;
  readings: number;
  gaps: number;
}

/** An interval clipped to a window. */
export interface WindowInterval {
  series: string;
  state: string;
  reason: string | null;
  starts_at: Date;
  ends_at: Date;
}

export interface Gaps {
  /** Gaps of more than STATUS_UNKNOWN_AFTER without a reading that overlap the period. */
  count: number;
  /** Their length within the period, counted from the last reading before each. */
  total_seconds: number;
  longest_seconds: number;
  /** Whether the series is in a gap at the period's end. */
  ongoing: boolean;
}

export interface CategoryFigures {
  readings: number;
  shares: { fresh: number; stale: number; unknown: number };
  seconds: { fresh: number; stale: number; unknown: number };
  /** Availability and usage only (hydrogen storage and pricing never turn unknown); null otherwise. */
  gaps: Gaps | null;
}

export interface OptionFigures {
  fuelling_option: FuellingOption;
  /** The period minus the time the station was outside its opening hours. */
  opening_seconds: number;
  /** AVAILABLE's share of the opening hours; null when the station was never open in the period. */
  available_share_of_opening_hours: number | null;
  /** Seconds of the opening hours in each state (UNKNOWN includes time with no reading at all), and CLOSED. */
  seconds: Record<SummaryState, number>;
}



const round = (x: number) => Math.round(x * 10_000) / 10_000;
const secondsOf = (ms: number) => Math.round(ms / 1000);

/** Per category, the figures of a period of `periodMs`; `gaps` from the intervals of the categories that turn unknown. */
export function categoryFigures(sums: readonly SeriesSums[], gapIntervals: readonly WindowInterval[], window: { from: number; to: number }, unknownAfterMs: number): Record<SectionKey, CategoryFigures> {
  const periodMs = window.to - window.from;
  const out = {} as Record<SectionKey, CategoryFigures>;
  for (const category of CATEGORIES) {
    const sum = sums.find((s) => s.series === category);
    const fresh = sum?.fresh_ms ?? 0;
    const stale = sum?.stale_ms ?? 0;
    const unknown = Math.max(0, periodMs - fresh - stale);
    out[SECTION_KEYS[category]] = {
      readings: sum?.readings ?? 0,
      shares: { fresh: round(fresh / periodMs), stale: round(stale / periodMs), unknown: round(unknown / periodMs) },
      seconds: { fresh: secondsOf(fresh), stale: secondsOf(stale), unknown: secondsOf(unknown) },
      gaps: turnsUnknown(category) ? gapsOf(gapIntervals.filter((i) => i.series === category), window, unknownAfterMs) : null,
    };
  }
  return out;
}

/** The gaps among a series' intervals: each unknown interval, lengthened back to the last reading. */
export function gapsOf(intervals: readonly WindowInterval[], window: { from: number; to: number }, unknownAfterMs: number): Gaps {
  let count = 0;
  let total = 0;
  let longest = 0;
  let ongoing = false;
  for (const i of intervals) {
    if (i.state !== 'unknown') continue;
    const start = i.starts_at.getTime() > window.from ? Math.max(window.from, i.starts_at.getTime() - unknownAfterMs) : window.from;
    const length = i.ends_at.getTime() - start;
    count++;
    total += length;
    longest = Math.max(longest, length);
    if (i.ends_at.getTime() >= window.to) ongoing = true;
  }
  return { count, total_seconds: secondsOf(total), longest_seconds: secondsOf(longest), ongoing };
}

/** Per fuelling option the station provides (and any the period's history holds), its five-state figures. */
export function optionFigures(sums: readonly SeriesSums[], provided: readonly FuellingOption[], periodMs: number): OptionFigures[] {
  const options = FUELLING_OPTIONS.filter((o) => provided.includes(o) || sums.some((s) => s.series === `option:${o}`));
  return options.map((option) => {
    const sum = sums.find((s) => s.series === `option:${option}`);
    const available = sum?.available_ms ?? 0;
    const limited = sum?.limited_ms ?? 0;
    const unavailable = sum?.unavailable_ms ?? 0;
    const closed = sum?.closed_ms ?? 0;
    const opening = periodMs - closed;
    const unknown = Math.max(0, opening - available - limited - unavailable);
    return {
      fuelling_option: option,
      opening_seconds: secondsOf(opening),
      available_share_of_opening_hours: opening > 0 ? round(available / opening) : null,
      seconds: {
        AVAILABLE: secondsOf(available),
        LIMITEDLY_AVAILABLE: secondsOf(limited),
        UNAVAILABLE: secondsOf(unavailable),
        UNKNOWN: secondsOf(unknown),
        CLOSED: secondsOf(closed),
      },
    };
  });
}

export interface TimelineEntry {
  state: string;
  reason?: string;
  from: string;
  to: string;
}

/** Intervals as the API lists them, per series key: categories by their section names, options by code. */
export function timelineOf(intervals: readonly WindowInterval[]): {
  categories: Record<SectionKey, TimelineEntry[]>;
  fuelling_options: Partial<Record<FuellingOption, TimelineEntry[]>>;
} {
  const categories = Object.fromEntries(CATEGORIES.map((c) => [SECTION_KEYS[c], [] as TimelineEntry[]])) as Record<SectionKey, TimelineEntry[]>;
  const options: Partial<Record<FuellingOption, TimelineEntry[]>> = {};
  for (const i of intervals) {
    const entry: TimelineEntry = { state: i.state, from: i.starts_at.toISOString(), to: i.ends_at.toISOString() };
    if ((CATEGORIES as readonly string[]).includes(i.series)) categories[SECTION_KEYS[i.series as Category]].push(entry);
    else if (i.series.startsWith('option:')) {
      const option = i.series.slice('option:'.length) as FuellingOption;
      if (!(FUELLING_OPTIONS as readonly string[]).includes(option)) continue;
      if (i.reason !== null) entry.reason = i.reason;
      (options[option] ??= []).push(entry);
    }
  }
  return { categories, fuelling_options: options };
}

export { SUMMARY_STATES };
