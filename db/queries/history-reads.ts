import { CATEGORIES } from '../../src/domain/categories/index.js';
import type { Sql } from '../connect.js';
import type { SeriesSums } from '../../src/domain/history/figures.js';
import type { HourRow } from '../../src/domain/forecast/model.js';

/**
 * What is read of the status history (db/queries/history.ts writes it): a station's intervals over a
 * window, its hourly roll-ups summed over a period, its readings, its last signals, the rejected calls
 * that named it, and an originator's roll-ups.
 */

export interface IntervalRow {
  series: string;
  state: string;
  reason: string | null;
  originator_id: string | null;
  starts_at: Date;
  ends_at: Date;
}

const DAY_MS = 24 * 3600 * 1000;

/**
 * The intervals of a station's series that overlap [from, to), clipped to it, in time order per
 * series: the pieces of one interval (cut at midnight) joined again, the open interval of each series
 * ending at `to`. `to` must not be after the materialised time.
 */
export async function stationIntervals(db: Sql, hrsId: string, from: Date, to: Date, series?: readonly string[]): Promise<IntervalRow[]> {
  const dayStart = new Date(Math.floor(from.getTime() / DAY_MS) * DAY_MS);
  const only = series ? db`AND series IN ${db(series as string[])}` : db``;
  return db<IntervalRow[]>`
    WITH pieces AS (
      SELECT series, state, reason, originator_id, starts_at, ends_at, since FROM status_intervals
      WHERE hrs_id = ${hrsId} AND starts_at >= ${dayStart} AND starts_at < ${to} AND ends_at > ${from} ${only}
      UNION ALL
      SELECT series, state, reason, originator_id, since, ${to}::timestamptz, since FROM history_series
      WHERE hrs_id = ${hrsId} AND since < ${to} ${only}
    )
    SELECT series, state, reason, originator_id, greatest(min(starts_at), ${from}::timestamptz) AS starts_at, least(max(ends_at), ${to}::timestamptz) AS ends_at
    FROM pieces GROUP BY series, state, reason, originator_id, since
    HAVING least(max(ends_at), ${to}::timestamptz) > greatest(min(starts_at), ${from}::timestamptz)
    ORDER BY series, starts_at`;
}

/** The roll-ups summed per series (src/domain/history/figures.ts computes the figures from them). */
export type HourlySums = SeriesSums;

/** A station's hourly roll-ups over [from, to) (whole hours), summed per series. */
export async function stationHourlySums(db: Sql, hrsId: string, from: Date, to: Date): Promise<HourlySums[]> {
  return db<HourlySums[]>`
    SELECT series, sum(fresh_ms)::float8 AS fresh_ms, sum(stale_ms)::float8 AS stale_ms, sum(unknown_ms)::float8 AS unknown_ms,
      sum(available_ms)::float8 AS available_ms, sum(limited_ms)::float8 AS limited_ms, sum(unavailable_ms)::float8 AS unavailable_ms,
      sum(closed_ms)::float8 AS closed_ms, sum(readings)::int AS readings, sum(gaps)::int AS gaps
    FROM history_hourly WHERE hrs_id = ${hrsId} AND hour >= ${from} AND hour < ${to}
    GROUP BY series ORDER BY series`;
}

/** An originator's hourly roll-ups over [from, to), summed per category, over every station it sent for. */
export async function originatorHourlySums(db: Sql, originatorId: string, from: Date, to: Date): Promise<(HourlySums & { stations: number })[]> {
  return db<(HourlySums & { stations: number })[]>`
    SELECT series, sum(fresh_ms)::float8 AS fresh_ms, sum(stale_ms)::float8 AS stale_ms, sum(unknown_ms)::float8 AS unknown_ms,
      0::float8 AS available_ms, 0::float8 AS limited_ms, 0::float8 AS unavailable_ms, 0::float8 AS closed_ms,
      sum(readings)::int AS readings, sum(gaps)::int AS gaps, count(DISTINCT hrs_id)::int AS stations
    FROM history_hourly WHERE originator_id = ${originatorId} AND hour >= ${from} AND hour < ${to}
    GROUP BY series ORDER BY series`;
}

export interface ReadingRow {
  id: string;
  originator_id: string;
  measured_at: Date;
  received_at: Date;
  payload: Record<string, unknown>;
}

/**
 * A station's live readings of one category measured in [from, to) (and, given `receivedBefore`,
 * received before it), oldest first, at most `limit`.
 */
export async function stationReadings(db: Sql, hrsId: string, category: string, from: Date, to: Date, limit: number, receivedBefore?: Date): Promise<ReadingRow[]> {
  const received = receivedBefore ? db`AND received_at < ${receivedBefore}` : db``;
  return db<ReadingRow[]>`
    SELECT id::text, originator_id, measured_at, received_at, payload FROM signal_history
    WHERE hrs_id = ${hrsId} AND category = ${category} AND measured_at >= ${from} AND measured_at < ${to} ${received}
    ORDER BY measured_at, id LIMIT ${limit}`;
}

/** When the station's registry entry (layout, fuelling options, opening hours) last changed; null when it is not registered. */
export async function stationModifiedAt(db: Sql, hrsId: string): Promise<Date | null> {
  const [row] = await db<{ at: Date }[]>`SELECT static_modified_at AS at FROM stations WHERE hrs_id = ${hrsId}`;
  return row?.at ?? null;
}

export interface LastSignalRow {
  category: string;
  originator_id: string;
  assignment_state: string;
  measured_at: Date;
  received_at: Date;
}

/** The last transmission of each originator per category for a station, live, testing or unassigned. */
export async function lastSignals(db: Sql, hrsId: string): Promise<LastSignalRow[]> {
  return db<LastSignalRow[]>`
    SELECT category, originator_id, assignment_state, measured_at, received_at FROM signal_latest
    WHERE hrs_id = ${hrsId} ORDER BY category, received_at DESC`;
}

export interface RejectedCallRow {
  request_time: Date;
  originator_id: string;
  endpoint: string;
  status: number;
}

/** Failed import calls (kept by the originators' call-log modes) that named the station, in [from, to). */
export async function rejectedCalls(db: Sql, hrsId: string, from: Date, to: Date, limit = 500): Promise<RejectedCallRow[]> {
  return db<RejectedCallRow[]>`
    SELECT request_time, originator_id, endpoint, status FROM call_logs
    WHERE originator_id IN (SELECT originator_id FROM assignments WHERE hrs_id = ${hrsId})
      AND request_time >= ${from} AND request_time < ${to} AND status >= 400 AND ${hrsId} = ANY (station_ids)
    ORDER BY request_time LIMIT ${limit}`;
}

/** Per category, the last live reading of the station received before `before` (what a period's figures end with). */
export async function lastReadingsBefore(db: Sql, hrsId: string, before: Date): Promise<{ category: string; measured_at: Date; received_at: Date }[]> {
  return db<{ category: string; measured_at: Date; received_at: Date }[]>`
    SELECT c.category, r.measured_at, r.received_at
    FROM unnest(${[...CATEGORIES]}::text[]) AS c(category)
    CROSS JOIN LATERAL (
      SELECT measured_at, received_at FROM signal_history
      WHERE hrs_id = ${hrsId} AND category = c.category AND measured_at < ${before} AND received_at < ${before}
      ORDER BY measured_at DESC LIMIT 1
    ) r`;
}

/** Whether the originator has an assignment (any state, any signal type) at the station. */
export async function originatorReportsOn(db: Sql, originatorId: string, hrsId: string): Promise<boolean> {
  const rows = await db`SELECT 1 FROM assignments a JOIN stations s USING (hrs_id) WHERE a.originator_id = ${originatorId} AND a.hrs_id = ${hrsId} AND NOT s.sandbox LIMIT 1`;
  return rows.length > 0;
}

/** When the originator's last transmission (any station, any state) was received, or null. */
export async function originatorLastSeen(db: Sql, originatorId: string): Promise<Date | null> {
  const [row] = await db<{ at: Date | null }[]>`SELECT max(received_at) AS at FROM signal_latest WHERE originator_id = ${originatorId}`;
  return row?.at ?? null;
}

/** Every originator (but `exclude`) with its call-log mode and when its last stored transmission arrived. */
export async function originatorLastSignals(db: Sql, exclude: string): Promise<{ id: string; name: string; call_log_mode: string; last_received: Date | null }[]> {
  return db<{ id: string; name: string; call_log_mode: string; last_received: Date | null }[]>`
    SELECT o.id, o.name, o.call_log_mode, (SELECT max(received_at) FROM signal_latest l WHERE l.originator_id = o.id) AS last_received
    FROM originators o WHERE o.id <> ${exclude} ORDER BY o.id`;
}

/**
 * A station's hourly five-state roll-ups over [from, to) (whole hours) per fuelling option's series
 * (`option:<code>`), each series' hours in time order, every originator's rows of an hour added up.
 */
export async function optionHourlyRows(db: Sql, hrsId: string, from: Date, to: Date): Promise<Map<string, HourRow[]>> {
  const rows = await db<{ series: string; hour: Date; available_ms: number; limited_ms: number; unavailable_ms: number; closed_ms: number; unknown_ms: number }[]>`
    SELECT series, hour, sum(available_ms)::float8 AS available_ms, sum(limited_ms)::float8 AS limited_ms,
      sum(unavailable_ms)::float8 AS unavailable_ms, sum(closed_ms)::float8 AS closed_ms, sum(unknown_ms)::float8 AS unknown_ms
    FROM history_hourly WHERE hrs_id = ${hrsId} AND series LIKE 'option:%' AND hour >= ${from} AND hour < ${to}
    GROUP BY series, hour ORDER BY series, hour`;
  const bySeries = new Map<string, HourRow[]>();
  for (const r of rows) {
    let list = bySeries.get(r.series);
    if (!list) bySeries.set(r.series, (list = []));
    list.push({ hour: r.hour.getTime(), availableMs: r.available_ms, limitedMs: r.limited_ms, unavailableMs: r.unavailable_ms, closedMs: r.closed_ms, unknownMs: r.unknown_ms });
  }
  return bySeries;
}
