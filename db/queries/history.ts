import type { Sql, Tx } from '../connect.js';
import type { HistoryReading, Interval, SeriesState } from '../../src/domain/history/timeline.js';
import { CATEGORIES, turnsUnknown, type Category } from '../../src/domain/categories/index.js';

/**
 * The status history's storage (migration 0009): the materialiser's reads and writes, the weekly
 * partitions, the hourly roll-up. The figures and pages read from it are in history-reads.ts.
 */

type Db = Sql | Tx;
export type ProgressName = 'materialized' | 'rolled_up';

/** Serialises the history jobs across workers (one transaction at a time holds it). */
export async function lockHistory(tx: Tx): Promise<void> {
  await tx`SELECT pg_advisory_xact_lock(hashtext('hrs history'))`;
}

export async function progress(db: Db, name: ProgressName): Promise<Date | null> {
  const [row] = await db<{ until: Date }[]>`SELECT until FROM history_progress WHERE name = ${name}`;
  return row?.until ?? null;
}

export async function setProgress(db: Db, name: ProgressName, until: Date): Promise<void> {
  // A new row has changed at no time yet: markPublished sets its changed_at.
  await db`INSERT INTO history_progress (name, until, changed_at) VALUES (${name}, ${until}, '-infinity')
    ON CONFLICT (name) DO UPDATE SET until = EXCLUDED.until`;
}

/**
 * Records that the published history changed (hours rolled up, or rows the retention deleted): its
 * `changed_at` moves to now, and always by a whole second at least, since `Last-Modified` has whole
 * seconds and two changes within one second must not share one.
 */
export async function markPublished(db: Db): Promise<void> {
  await db`UPDATE history_progress
    SET changed_at = greatest(date_trunc('second', clock_timestamp()), date_trunc('second', changed_at) + interval '1 second')
    WHERE name = 'rolled_up'`;
}

/** The published history: the end of the last hour rolled up and when it last changed; null before the first roll-up. */
export async function publishedUntil(db: Db): Promise<{ until: Date; changedAt: Date } | null> {
  const [row] = await db<{ until: Date; changed_at: Date }[]>`SELECT until, changed_at FROM history_progress WHERE name = 'rolled_up'`;
  return row ? { until: row.until, changedAt: row.changed_at } : null;
}

/** The receipt time of the oldest reading kept, or null: where a first materialisation starts. */
export async function firstReceipt(db: Db): Promise<Date | null> {
  const [row] = await db<{ at: Date | null }[]>`SELECT min(received_at) AS at FROM signal_history`;
  return row?.at ?? null;
}

/**
 * The live readings received in (from, to], in receipt order; the payload of availability readings
 * only. Readings are measured at most 5 minutes before and 30 seconds after receipt (import's rules),
 * which bounds the partitions read.
 */
export async function readingsReceived(db: Db, from: Date, to: Date): Promise<HistoryReading[]> {
  const rows = await db<{ h: string; c: Category; o: string; m: Date; r: Date; p: Record<string, unknown> | null }[]>`
    SELECT hrs_id AS h, category AS c, originator_id AS o, measured_at AS m, received_at AS r,
      CASE WHEN category = 'availability' THEN payload END AS p
    FROM signal_history
    WHERE received_at > ${from} AND received_at <= ${to}
      AND measured_at > ${new Date(from.getTime() - 10 * 60_000)} AND measured_at <= ${new Date(to.getTime() + 60_000)}
    ORDER BY received_at, id`;
  return rows.map((row) => ({ hrsId: row.h, category: row.c, originatorId: row.o, measuredAt: row.m.getTime(), receivedAt: row.r.getTime(), payload: row.p }));
}

/** Stations with a series due to change by `until` without a reading. */
export async function dueStations(db: Db, until: Date): Promise<string[]> {
  const rows = await db<{ hrs_id: string }[]>`SELECT DISTINCT hrs_id FROM history_series WHERE next_due <= ${until}`;
  return rows.map((row) => row.hrs_id);
}

/** Every series of these stations, grouped by station. */
export async function seriesOf(db: Db, hrsIds: readonly string[]): Promise<Map<string, SeriesState[]>> {
  const out = new Map<string, SeriesState[]>();
  if (hrsIds.length === 0) return out;
  const rows = await db<
    {
      hrs_id: string;
      series: string;
      state: string;
      reason: string | null;
      originator_id: string | null;
      since: Date;
      measured_at: Date | null;
      received_at: Date | null;
      payload: Record<string, unknown> | null;
      next_due: Date | null;
    }[]
  >`SELECT * FROM history_series WHERE hrs_id IN (SELECT unnest(${hrsIds as string[]}::text[]))`;
  for (const row of rows) {
    const list = out.get(row.hrs_id) ?? [];
    list.push({
      hrsId: row.hrs_id,
      series: row.series,
      state: row.state,
      reason: row.reason,
      originatorId: row.originator_id,
      since: row.since.getTime(),
      measuredAt: row.measured_at?.getTime() ?? null,
      receivedAt: row.received_at?.getTime() ?? null,
      payload: row.payload,
      nextDue: row.next_due?.getTime() ?? null,
    });
    out.set(row.hrs_id, list);
  }
  return out;
}

const iso = (ms: number | null) => (ms === null ? null : new Date(ms).toISOString());

/**
 * Stores a replay: the closed intervals (those of a station removed meanwhile are dropped), the series
 * as they now stand, and the series that ended. Intervals already stored are left as they are, so a
 * replay stored twice changes nothing.
 */
export async function storeReplay(
  tx: Tx,
  result: { intervals: readonly Interval[]; changed: readonly SeriesState[]; removed: readonly { hrsId: string; series: string }[] },
): Promise<void> {
  if (result.intervals.length > 0) {
    const doc = JSON.stringify(
      result.intervals.map((i) => ({ h: i.hrsId, s: i.series, st: i.state, r: i.reason, o: i.originatorId, a: iso(i.startsAt), e: iso(i.endsAt), n: iso(i.since) })),
    );
    await tx`
      INSERT INTO status_intervals (hrs_id, series, state, reason, originator_id, starts_at, ends_at, since)
      SELECT i.h, i.s, i.st, i.r, i.o, i.a, i.e, i.n
      FROM jsonb_to_recordset(${doc}::text::jsonb) AS i(h text, s text, st text, r text, o text, a timestamptz, e timestamptz, n timestamptz)
      WHERE EXISTS (SELECT 1 FROM stations WHERE stations.hrs_id = i.h)
      ON CONFLICT DO NOTHING`;
  }
  if (result.changed.length > 0) {
    const doc = JSON.stringify(
      result.changed.map((s) => ({
        h: s.hrsId,
        s: s.series,
        st: s.state,
        r: s.reason,
        o: s.originatorId,
        n: iso(s.since),
        m: iso(s.measuredAt),
        rc: iso(s.receivedAt),
        p: s.payload,
        d: iso(s.nextDue),
      })),
    );
    await tx`
      INSERT INTO history_series (hrs_id, series, state, reason, originator_id, since, measured_at, received_at, payload, next_due)
      SELECT i.h, i.s, i.st, i.r, i.o, i.n, i.m, i.rc, i.p, i.d
      FROM jsonb_to_recordset(${doc}::text::jsonb)
        AS i(h text, s text, st text, r text, o text, n timestamptz, m timestamptz, rc timestamptz, p jsonb, d timestamptz)
      WHERE EXISTS (SELECT 1 FROM stations WHERE stations.hrs_id = i.h)
      ON CONFLICT (hrs_id, series) DO UPDATE SET state = EXCLUDED.state, reason = EXCLUDED.reason,
        originator_id = EXCLUDED.originator_id, since = EXCLUDED.since, measured_at = EXCLUDED.measured_at,
        received_at = EXCLUDED.received_at, payload = EXCLUDED.payload, next_due = EXCLUDED.next_due`;
  }
  for (const { hrsId, series } of result.removed) {
    await tx`DELETE FROM history_series WHERE hrs_id = ${hrsId} AND series = ${series}`;
  }
}

/* ---- Partitions --------------------------------------------------------------------------------- */

export const PARTITIONED = { signal_history: 'measured_at', status_intervals: 'starts_at' } as const;
export type PartitionedTable = keyof typeof PARTITIONED;

/** Creates the weekly partitions of both tables for every week overlapping [from, to); returns how many. */
export async function createPartitions(db: Db, from: Date, to: Date): Promise<number> {
  let created = 0;
  for (const [table, key] of Object.entries(PARTITIONED)) {
    const [row] = await db<{ n: number }[]>`SELECT hrs_create_week_partitions(${table}::regclass, ${key}, ${from}, ${to}) AS n`;
    created += row!.n;
  }
  return created;
}

export interface PartitionInfo {
  table: PartitionedTable;
  name: string;
  /** null: the DEFAULT partition. */
  from: Date | null;
  to: Date | null;
}

/** Every partition of both tables, with its bounds. */
export async function partitions(db: Db): Promise<PartitionInfo[]> {
  const rows = await db<{ parent: PartitionedTable; name: string; bound: string }[]>`
    SELECT parent.relname AS parent, child.relname AS name, pg_get_expr(child.relpartbound, child.oid) AS bound
    FROM pg_inherits JOIN pg_class parent ON parent.oid = pg_inherits.inhparent JOIN pg_class child ON child.oid = pg_inherits.inhrelid
    WHERE parent.relname IN ('signal_history', 'status_intervals')
    ORDER BY parent.relname, child.relname`;
  return rows.map((row) => {
    const m = /FROM \('([^']+)'\) TO \('([^']+)'\)/.exec(row.bound);
    return { table: row.parent, name: row.name, from: m ? new Date(m[1]!) : null, to: m ? new Date(m[2]!) : null };
  });
}

/**
 * Drops the partitions that end at or before `cutoff` and deletes older rows from the DEFAULT
 * partitions, the roll-ups and the call counts; returns the dropped partitions' names (and, as
 * `deleted`, how many history rows it deleted besides).
 */
export async function dropBefore(tx: Tx, cutoff: Date): Promise<{ dropped: string[]; deleted: number }> {
  const dropped: string[] = [];
  for (const p of await partitions(tx)) {
    if (p.to === null || p.to.getTime() > cutoff.getTime()) continue;
    await tx`DROP TABLE ${tx(p.name)}`;
    dropped.push(p.name);
  }
  let deleted = 0;
  deleted += (await tx`DELETE FROM signal_history_default WHERE measured_at < ${cutoff}`).count;
  deleted += (await tx`DELETE FROM status_intervals_default WHERE starts_at < ${cutoff}`).count;
  deleted += (await tx`DELETE FROM history_hourly WHERE hour < ${cutoff}`).count;
  await tx`DELETE FROM originator_call_stats WHERE hour < ${cutoff}`;
  return { dropped, deleted };
}

/**
 * Deletes the readings received since `since` whose station or originator is no longer registered:
 * those an import statement stored while the station or originator was being removed (the removal's
 * trigger deletes the rest; see migration 0010). Returns how many it deleted.
 */
export async function dropOrphans(tx: Tx, since: Date): Promise<number> {
  const deleted = await tx`
    DELETE FROM signal_history h
    WHERE h.received_at >= ${since} AND h.measured_at >= ${new Date(since.getTime() - 24 * 3_600_000)}
      AND (NOT EXISTS (SELECT 1 FROM stations s WHERE s.hrs_id = h.hrs_id)
        OR NOT EXISTS (SELECT 1 FROM originators o WHERE o.id = h.originator_id))`;
  return deleted.count;
}

/* ---- Roll-up ------------------------------------------------------------------------------------ */

/** The series whose unknown intervals are gaps: the categories that turn unknown. */
const GAP_SERIES = CATEGORIES.filter(turnsUnknown);

/**
 * Rolls up the hours [from, to) (whole hours, not after the materialised time): per series (and, for
 * freshness, per sender) the milliseconds in each state, the readings received and the gaps (unknown
 * intervals) begun. Replaces what those hours held, so a roll-up run twice gives the same rows.
 * Returns how many rows it wrote.
 */
export async function rollUp(tx: Tx, from: Date, to: Date): Promise<number> {
  if (to <= from) return 0;
  await tx`DELETE FROM history_hourly WHERE hour >= ${from} AND hour < ${to}`;
  const states = await tx`
    WITH hours AS (
      SELECT generate_series(${from}::timestamptz, ${to}::timestamptz - interval '1 hour', interval '1 hour') AS hour
    ), pieces AS (
      SELECT hrs_id, series, state, coalesce(originator_id, '') AS o, starts_at AS s, ends_at AS e, since
      FROM status_intervals
      WHERE starts_at >= date_trunc('day', ${from}::timestamptz AT TIME ZONE 'UTC') AT TIME ZONE 'UTC' AND starts_at < ${to} AND ends_at > ${from}
      UNION ALL
      SELECT hrs_id, series, state, coalesce(originator_id, ''), since, 'infinity'::timestamptz, since
      FROM history_series WHERE since < ${to}
    ), parts AS (
      SELECT p.hrs_id, p.series, CASE WHEN p.series LIKE 'option:%' THEN '' ELSE p.o END AS o, h.hour, p.state,
        (extract(epoch FROM least(p.e, h.hour + interval '1 hour') - greatest(p.s, h.hour)) * 1000)::bigint AS ms,
        (p.s = p.since AND p.since >= h.hour AND p.since < h.hour + interval '1 hour' AND p.state = 'unknown'
          AND p.series = ANY(${GAP_SERIES}::text[])) AS gap
      FROM pieces p JOIN hours h ON p.s < h.hour + interval '1 hour' AND p.e > h.hour
    )
    INSERT INTO history_hourly (hrs_id, series, originator_id, hour, fresh_ms, stale_ms, unknown_ms, available_ms, limited_ms, unavailable_ms, closed_ms, gaps)
    SELECT hrs_id, series, o, hour,
      coalesce(sum(ms) FILTER (WHERE state = 'fresh'), 0), coalesce(sum(ms) FILTER (WHERE state = 'stale'), 0),
      coalesce(sum(ms) FILTER (WHERE state IN ('unknown', 'UNKNOWN')), 0), coalesce(sum(ms) FILTER (WHERE state = 'AVAILABLE'), 0),
      coalesce(sum(ms) FILTER (WHERE state = 'LIMITEDLY_AVAILABLE'), 0), coalesce(sum(ms) FILTER (WHERE state = 'UNAVAILABLE'), 0),
      coalesce(sum(ms) FILTER (WHERE state = 'CLOSED'), 0), count(*) FILTER (WHERE gap)
    FROM parts WHERE ms > 0
    GROUP BY hrs_id, series, o, hour`;
  const readings = await tx`
    INSERT INTO history_hourly AS h (hrs_id, series, originator_id, hour, readings)
    SELECT hrs_id, category, originator_id, date_trunc('hour', received_at), count(*)
    FROM signal_history
    WHERE received_at >= ${from} AND received_at < ${to}
      AND measured_at > ${new Date(from.getTime() - 10 * 60_000)} AND measured_at < ${new Date(to.getTime() + 60_000)}
    GROUP BY 1, 2, 3, 4
    ON CONFLICT (hrs_id, series, hour, originator_id) DO UPDATE SET readings = EXCLUDED.readings`;
  return states.count + readings.count;
}

/* ---- Backfill ----------------------------------------------------------------------------------- */

/**
 * Sets the readings received per station, series (the category), originator and hour, as the roll-up
 * counts them, for readings replayed and not stored (the demo's older weeks): after those hours were
 * rolled up, which counted only the stored ones.
 */
export async function setHourlyReadings(
  tx: Tx, counts: readonly { hrsId: string; category: string; originatorId: string; hour: number; readings: number }[],
): Promise<void> {
  if (counts.length === 0) return;
  const doc = JSON.stringify(counts.map((c) => ({ h: c.hrsId, s: c.category, o: c.originatorId, t: new Date(c.hour).toISOString(), n: c.readings })));
  await tx`
    INSERT INTO history_hourly AS h (hrs_id, series, originator_id, hour, readings)
    SELECT i.h, i.s, i.o, i.t, i.n FROM jsonb_to_recordset(${doc}::text::jsonb) AS i(h text, s text, o text, t timestamptz, n integer)
    WHERE EXISTS (SELECT 1 FROM stations WHERE stations.hrs_id = i.h)
    ON CONFLICT (hrs_id, series, hour, originator_id) DO UPDATE SET readings = EXCLUDED.readings`;
}

/** Whether the history holds a reading of an originator other than these. */
export async function hasReadingsBesides(db: Db, originatorIds: readonly string[]): Promise<boolean> {
  const [row] = await db<{ found: boolean }[]>`
    SELECT EXISTS (SELECT 1 FROM signal_history WHERE originator_id <> ALL (${originatorIds as string[]}::text[])) AS found`;
  return row!.found;
}

/**
 * Forgets everything derived from the readings (intervals, series, roll-ups and the jobs' watermarks),
 * so that the next materialisation replays the history from its first reading: after readings older
 * than the watermark were added (a backfill). The derived history is a function of the readings, so
 * nothing is lost that the replay does not restore.
 */
export async function forgetDerivedHistory(tx: Tx): Promise<void> {
  await tx`DELETE FROM history_progress`;
  await tx`DELETE FROM history_hourly`;
  await tx`DELETE FROM history_series`;
  await tx`DELETE FROM status_intervals`;
}
