import type { Sql } from '../../db/connect.js';
import { progress, publishedUntil } from '../../db/queries/history.js';
import { HttpError } from '../http/errors.js';
import {
  lastReadingsBefore,
  lastSignals,
  originatorHourlySums,
  rejectedCalls,
  stationHourlySums,
  stationIntervals,
  stationModifiedAt,
  stationReadings,
} from '../../db/queries/history-reads.js';
import {
  HOUR_MS,
  PERIODS,
  categoryFigures,
  optionFigures,
  timelineOf,
  type Period,
} from '../domain/history/figures.js';
import { providedOptions } from '../domain/import-v1/options.js';
import type { StationLookup } from '../domain/stations.js';
import { CATEGORIES, SECTION_KEYS, turnsUnknown, type Category } from '../domain/categories/index.js';
import { buildSection } from '../domain/status/sections.js';

/**
 * The status history as the export v2 extension and the portal read it: reliability figures over a
 * period (from the hourly roll-ups), a window's intervals and readings, a station's last signals. One
 * module for both, so the data users' figures and the operators' are the same figures.
 */

export interface HistoryDeps {
  sql: Sql;
  stations: StationLookup;
  /** STATUS_UNKNOWN_AFTER: a gap is counted from the last signal, this long before the status turned unknown. */
  unknownAfterMs: number;
}

/**
 * The published history: up to the end of the last hour rolled up (`hour`; whole hours, where export
 * v2's and the portal's figures end), and when what is published last changed (`modified`, the
 * answers' `Last-Modified`: the later of the last roll-up or retention deletion and, for one station,
 * the last change of its registry entry, whose layout and fuelling options the answers show). Null
 * before the first roll-up: nothing is published that is not rolled up.
 */
export async function publishedHistory(sql: Sql, hrsId?: string): Promise<{ hour: number; modified: number } | null> {
  const [published, station] = await Promise.all([publishedUntil(sql), hrsId === undefined ? null : stationModifiedAt(sql, hrsId)]);
  if (published === null) return null;
  return { hour: published.until.getTime(), modified: Math.max(published.changedAt.getTime(), station?.getTime() ?? 0) };
}

/** Where the intervals are materialised to (the portal's timelines end there); null before the first run. */
export async function materializedUntil(sql: Sql): Promise<number | null> {
  return (await progress(sql, 'materialized'))?.getTime() ?? null;
}

/** Seconds a client is asked to wait while no history is published yet. */
export const NOT_PUBLISHED_RETRY_SECONDS = 60;

/** The answer while the history jobs have not yet published anything (a 503: it comes within minutes). */
export const notPublished = () =>
  new HttpError(
    503,
    'service_unavailable',
    'The status history is not published yet: the history jobs have not run on it. The history worker publishes each hour within minutes of its end (`hrs history run` does it at once); try again later.',
    { headers: { 'Retry-After': String(NOT_PUBLISHED_RETRY_SECONDS) } },
  );

/** A station's reliability over the `period` that ends at `to` (a whole hour). */
export async function reliability(deps: HistoryDeps, hrsId: string, period: Period, to: number) {
  const from = to - PERIODS[period];
  const window = { from, to };
  const [sums, gapIntervals, last] = await Promise.all([
    stationHourlySums(deps.sql, hrsId, new Date(from), new Date(to)),
    stationIntervals(deps.sql, hrsId, new Date(from), new Date(to), CATEGORIES.filter(turnsUnknown)),
    lastReadingsBefore(deps.sql, hrsId, new Date(to)),
  ]);
  const categories = categoryFigures(sums, gapIntervals, window, deps.unknownAfterMs);
  const station = deps.stations.station(hrsId);
  const withLast = Object.fromEntries(
    CATEGORIES.map((category) => {
      const found = last.find((l) => l.category === category);
      const lastSignal = found ? { datetime: found.measured_at.toISOString(), received_datetime: found.received_at.toISOString() } : null;
      return [SECTION_KEYS[category], { last_signal: lastSignal, ...categories[SECTION_KEYS[category]] }];
    }),
  );
  return {
    hrs_id: hrsId,
    period,
    from: new Date(from).toISOString(),
    to: new Date(to).toISOString(),
    categories: withLast,
    fuelling_options: optionFigures(sums, station ? providedOptions(station) : [], to - from),
  };
}

/** The most readings a history page lists; a busier window is continued by `next`. */
export const PAGE_READINGS = 10_000;
export const MAX_PAGE_MS = 7 * 24 * HOUR_MS;

/**
 * One page of a station's history in one category over [from, to), as published up to `published`
 * (the end of the last hour rolled up): the readings measured in the window and received before it,
 * so that a reading received after its hour was published joins the page with the next hour (and the
 * next Last-Modified), not under the one the page was served with.
 */
export async function historyPage(deps: HistoryDeps, hrsId: string, category: Category, from: number, to: number, published: number) {
  const series = category === 'availability' ? undefined : [category];
  const [intervals, readings] = await Promise.all([
    stationIntervals(deps.sql, hrsId, new Date(from), new Date(to), series),
    stationReadings(deps.sql, hrsId, category, new Date(from), new Date(to), PAGE_READINGS + 1, new Date(published)),
  ]);
  const cut = readings.length > PAGE_READINGS;
  const listed = cut ? readings.slice(0, PAGE_READINGS) : readings;
  const timeline = timelineOf(intervals);
  const layout = deps.stations.station(hrsId)?.layout ?? null;
  return {
    intervals: timeline.categories[SECTION_KEYS[category]].map((i) => ({ freshness: i.state, from: i.from, to: i.to })),
    fuelling_options:
      category === 'availability'
        ? Object.entries(timeline.fuelling_options).map(([option, list]) => ({
            fuelling_option: option,
            intervals: list.map((i) => ({ status: i.state, reason: i.reason, from: i.from, to: i.to })),
          }))
        : null,
    readings: listed.flatMap((r) => {
      const section = buildSection(category, { datetime: r.measured_at.getTime(), receivedAt: r.received_at.getTime(), payload: r.payload }, layout);
      return section === null ? [] : [section];
    }),
    /** When cut: where the next page starts (just after the last reading listed). */
    continueFrom: cut ? listed[listed.length - 1]!.measured_at.getTime() + 1 : null,
  };
}

/** The portal's timeline of a station over [from, to): every series, with the rejected calls that named it. */
export async function timeline(deps: HistoryDeps, hrsId: string, from: number, to: number) {
  const [intervals, rejected] = await Promise.all([
    stationIntervals(deps.sql, hrsId, new Date(from), new Date(to)),
    rejectedCalls(deps.sql, hrsId, new Date(from), new Date(to)),
  ]);
  const { categories, fuelling_options } = timelineOf(intervals);
  return {
    hrs_id: hrsId,
    time_zone: deps.stations.station(hrsId)?.timeZone ?? null,
    from: new Date(from).toISOString(),
    to: new Date(to).toISOString(),
    categories,
    fuelling_options,
    rejected_calls: rejected.map((r) => ({ time: r.request_time.toISOString(), originator: r.originator_id, endpoint: r.endpoint, status: r.status })),
  };
}

/** A station's last transmission per category and originator (live, testing or unassigned). */
export async function stationSignals(sql: Sql, hrsId: string) {
  const rows = await lastSignals(sql, hrsId);
  return rows.map((r) => ({
    category: r.category,
    originator: r.originator_id,
    assignment: r.assignment_state,
    datetime: r.measured_at.toISOString(),
    received_datetime: r.received_at.toISOString(),
  }));
}

/** An originator's figures over a period ending at `to`: per category, the shares over its stations' time. */
export async function originatorReliability(sql: Sql, originatorId: string, period: Period, to: number) {
  const from = to - PERIODS[period];
  const sums = await originatorHourlySums(sql, originatorId, new Date(from), new Date(to));
  const categories = Object.fromEntries(
    CATEGORIES.map((category) => {
      const sum = sums.find((s) => s.series === category);
      const covered = (sum?.fresh_ms ?? 0) + (sum?.stale_ms ?? 0) + (sum?.unknown_ms ?? 0);
      const share = (ms: number) => (covered > 0 ? Math.round((ms / covered) * 10_000) / 10_000 : null);
      return [
        SECTION_KEYS[category],
        {
          stations: sum?.stations ?? 0,
          readings: sum?.readings ?? 0,
          gaps: sum?.gaps ?? 0,
          shares: { fresh: share(sum?.fresh_ms ?? 0), stale: share(sum?.stale_ms ?? 0), unknown: share(sum?.unknown_ms ?? 0) },
        },
      ];
    }),
  );
  return { originator: originatorId, period, from: new Date(from).toISOString(), to: new Date(to).toISOString(), categories };
}
