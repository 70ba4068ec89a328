import type { Sql, Tx } from '../connect.js';

/** Import calls per originator and hour (migration 0009, `originator_call_stats`). */

export interface CallCount {
  originator: string;
  /** The hour, as epoch ms of its start. */
  hour: number;
  calls: number;
  rejected: number;
  lastCallAt: number;
  lastRejectedAt: number | null;
}

const iso = (ms: number | null) => (ms === null ? null : new Date(ms).toISOString());

/** Adds counts (one statement; rows of originators that no longer exist are dropped). */
export async function addCallCounts(sql: Sql | Tx, counts: readonly CallCount[]): Promise<void> {
  if (counts.length === 0) return;
  const doc = JSON.stringify(counts.map((c) => ({ o: c.originator, h: iso(c.hour), c: c.calls, r: c.rejected, l: iso(c.lastCallAt), x: iso(c.lastRejectedAt) })));
  await sql`
    INSERT INTO originator_call_stats AS s (originator_id, hour, calls, rejected, last_call_at, last_rejected_at)
    SELECT i.o, i.h, i.c, i.r, i.l, i.x
    FROM jsonb_to_recordset(${doc}::text::jsonb) AS i(o text, h timestamptz, c integer, r integer, l timestamptz, x timestamptz)
    WHERE EXISTS (SELECT 1 FROM originators WHERE id = i.o)
    ORDER BY i.o, i.h
    ON CONFLICT (originator_id, hour) DO UPDATE SET
      calls = s.calls + EXCLUDED.calls, rejected = s.rejected + EXCLUDED.rejected,
      last_call_at = greatest(s.last_call_at, EXCLUDED.last_call_at),
      last_rejected_at = greatest(s.last_rejected_at, EXCLUDED.last_rejected_at)`;
}

export interface OriginatorCallStats {
  originator_id: string;
  calls: number;
  rejected: number;
  last_call_at: Date | null;
  last_rejected_at: Date | null;
}

/** Per originator, the calls since `since` (by hour: the hour `since` falls in counts whole) and when it was last seen ever. */
export async function originatorCallStats(sql: Sql, since: Date, originatorId?: string): Promise<OriginatorCallStats[]> {
  return sql<OriginatorCallStats[]>`
    SELECT originator_id,
      coalesce(sum(calls) FILTER (WHERE hour >= date_trunc('hour', ${since}::timestamptz)), 0)::int AS calls,
      coalesce(sum(rejected) FILTER (WHERE hour >= date_trunc('hour', ${since}::timestamptz)), 0)::int AS rejected,
      max(last_call_at) AS last_call_at, max(last_rejected_at) AS last_rejected_at
    FROM originator_call_stats
    ${originatorId === undefined ? sql`` : sql`WHERE originator_id = ${originatorId}`}
    GROUP BY originator_id ORDER BY originator_id`;
}
