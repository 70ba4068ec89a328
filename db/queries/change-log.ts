import type { Sql, Tx } from '../connect.js';

/*
 * The change log's reads and upkeep (db/migrations/0014_change_log.sql): the delta of export v2
 * (`GET /v2/hrs?since=`, `GET /v2/hrs/events?since=`, src/api/export-v2/delta.ts) reads positions and
 * pages of changes; the change-log job (workers/change-log/) writes the `ended` rows of events and
 * prunes. A position is a `seq`: everything at or before it has been seen. Positions are read as text
 * (bigint) and kept as JavaScript numbers: a sequence stays far below 2^53.
 *
 * Every page is one statement, so its rows, the log's head and its horizon are one snapshot: a page
 * cut short by pruning is refused rather than answered with a gap.
 */

/** Takes the change log's lock for the rest of the transaction: before the first row of a writer that changes several stations, or locks a station row before writing it. */
export async function lockChangeLog(tx: Tx): Promise<void> {
  await tx`SELECT hrs_lock_change_log()`;
}

/** Where the log is complete from (station and event rows): positions and times before it are gone. */
export interface ChangeHorizon {
  /** The newest `seq` pruned (0: none): a position before it has lost changes. */
  prunedSeq: number;
  /**
   * The oldest time a delta may start from (null: any): the newest pruned change's time, and, where the
   * log was added to a registry that already had stations (not `complete`), no earlier than its start.
   */
  oldest: Date | null;
  /** The newest pruned change's time; null while nothing has been pruned. */
  prunedAt: Date | null;
  /** When the log started. */
  startedAt: Date;
}

/** The horizon's columns as every read takes them (see ChangeHorizon). */
type HorizonRow = { pruned_seq: string; oldest: Date | null; pruned_at: Date | null; started_at: Date };
const horizonOf = (row: HorizonRow): ChangeHorizon => ({ prunedSeq: Number(row.pruned_seq), oldest: row.oldest, prunedAt: row.pruned_at, startedAt: row.started_at });

/** The log's head: the newest position (what a reader that starts now has seen once it reads everything). */
export async function changeLogHead(sql: Sql): Promise<number> {
  const [row] = await sql<{ head: string }[]>`
    SELECT greatest((SELECT max(seq) FROM change_log), (SELECT pruned_seq FROM change_log_horizon), 0)::text AS head`;
  return Number(row!.head);
}

/**
 * The position just before the first station or event change after `at` (by the changes' `at`), with
 * the horizon: the head when none came since. A change whose `at` is earlier than a change before it
 * (a clock set back) may come after the position too: read again, never missed. Status and option
 * rows are not looked at (the delta does not list them; there are many more of them).
 */
export async function positionAfter(sql: Sql, at: Date): Promise<{ position: number; horizon: ChangeHorizon }> {
  const [row] = await sql<({ position: string } & HorizonRow)[]>`
    SELECT coalesce(least((SELECT min(seq) FROM change_log WHERE topic = 'station' AND at > ${at}),
                          (SELECT min(seq) FROM change_log WHERE topic = 'event' AND at > ${at})) - 1,
                    greatest((SELECT max(seq) FROM change_log), h.pruned_seq, 0))::text AS position,
           h.pruned_seq::text, CASE WHEN h.complete THEN h.pruned_at ELSE greatest(h.started_at, h.pruned_at) END AS oldest,
           h.pruned_at, h.started_at
    FROM change_log_horizon h`;
  return { position: Number(row!.position), horizon: horizonOf(row!) };
}

/** One entity's latest change after a position. */
export interface LatestChange {
  seq: number;
  hrsId: string;
  change: 'created' | 'changed' | 'ended' | 'deleted';
  at: Date;
}

/** A station's latest change, with its current version (µs) when it still exists. */
export interface StationChange extends LatestChange {
  modifiedUs: number | null;
}

/** An event's latest change, with the event as it was then (deleted: `{id}`). */
export interface EventChange extends LatestChange {
  event: Record<string, unknown> & { id: string };
}

/** A page of a delta: at most `limit` entities, whether more follow, the log's head and horizon. */
export interface DeltaPage<C> {
  changes: C[];
  more: boolean;
  head: number;
  horizon: ChangeHorizon;
}

type PageRow = HorizonRow & { head: string; seq: string | null; hrs_id: string | null; change: LatestChange['change'] | null; at: Date | null };

/**
 * The stations whose latest change is after `after`, by that change's `seq`, at most `limit`: each
 * once, with its current version (null when it is gone: its tombstone, or removed after this change).
 */
export async function stationChanges(sql: Sql, after: number, limit: number): Promise<DeltaPage<StationChange>> {
  const rows = await sql<(PageRow & { us: string | null })[]>`
    SELECT h.head, h.pruned_seq, h.oldest, h.pruned_at, h.started_at, p.seq, p.hrs_id, p.change, p.at, p.us
    FROM (SELECT greatest((SELECT max(seq) FROM change_log), pruned_seq, 0)::text AS head, pruned_seq::text AS pruned_seq,
                 CASE WHEN complete THEN pruned_at ELSE greatest(started_at, pruned_at) END AS oldest, pruned_at, started_at
          FROM change_log_horizon) h
    LEFT JOIN LATERAL (
      SELECT l.seq::text AS seq, l.hrs_id, l.change, l.at,
             (extract(epoch FROM s.static_modified_at) * 1000000)::bigint::text AS us
      FROM (SELECT max(seq) AS seq FROM change_log WHERE topic = 'station' AND seq > ${after}::bigint
            GROUP BY entity ORDER BY 1 LIMIT ${limit + 1}) latest
      JOIN change_log l ON l.seq = latest.seq
      LEFT JOIN stations s ON s.hrs_id = l.hrs_id AND NOT s.sandbox AND l.change <> 'deleted'
    ) p ON true
    ORDER BY p.seq::bigint`;
  return pageOf(rows, limit, (row) => ({ ...latestOf(row), modifiedUs: row.us === null ? null : Number(row.us) }));
}

/** The events whose latest change is after `after`, by that change's `seq`, at most `limit`: each once. */
export async function eventChanges(sql: Sql, after: number, limit: number): Promise<DeltaPage<EventChange>> {
  const rows = await sql<(PageRow & { payload: EventChange['event'] | null })[]>`
    SELECT h.head, h.pruned_seq, h.oldest, h.pruned_at, h.started_at, p.seq, p.hrs_id, p.change, p.at, p.payload
    FROM (SELECT greatest((SELECT max(seq) FROM change_log), pruned_seq, 0)::text AS head, pruned_seq::text AS pruned_seq,
                 CASE WHEN complete THEN pruned_at ELSE greatest(started_at, pruned_at) END AS oldest, pruned_at, started_at
          FROM change_log_horizon) h
    LEFT JOIN LATERAL (
      SELECT l.seq::text AS seq, l.hrs_id, l.change, l.at, l.payload
      FROM (SELECT max(seq) AS seq FROM change_log WHERE topic = 'event' AND seq > ${after}::bigint
            GROUP BY entity ORDER BY 1 LIMIT ${limit + 1}) latest
      JOIN change_log l ON l.seq = latest.seq
    ) p ON true
    ORDER BY p.seq::bigint`;
  return pageOf(rows, limit, (row) => ({ ...latestOf(row), event: row.payload! }));
}

function latestOf(row: PageRow): LatestChange {
  return { seq: Number(row.seq), hrsId: row.hrs_id!, change: row.change!, at: row.at! };
}

function pageOf<R extends PageRow, C>(rows: R[], limit: number, change: (row: R) => C): DeltaPage<C> {
  const first = rows[0]!;
  const found = rows.filter((row) => row.seq !== null);
  return {
    changes: found.slice(0, limit).map(change),
    more: found.length > limit,
    head: Number(first.head),
    horizon: horizonOf(first),
  };
}

/**
 * Writes the `ended` rows of the events whose end passed (hrs_log_ended_events: idempotent, on any
 * number of processes); events that ended more than `retentionDays` ago are left alone. Returns how
 * many rows it wrote.
 */
export async function sweepEndedEvents(sql: Sql, retentionDays: number): Promise<number> {
  const [row] = await sql<{ n: number }[]>`SELECT hrs_log_ended_events(now() - make_interval(days => ${retentionDays})) AS n`;
  return row!.n;
}

/** What one pruning removed. */
export interface Pruned {
  /** Station and event rows (older than the retention). */
  records: number;
  /** Status and fuelling option rows (older than what webhooks retry for). */
  statuses: number;
}

/**
 * Prunes the log: station and event rows older than `retentionDays` (as a prefix in `seq` order, the
 * horizon moved with them in the same transaction, so a delta from before it is refused, never
 * answered with a gap), status and option rows older than `statusMaxAgeMs`.
 */
export async function pruneChangeLog(sql: Sql, retentionDays: number, statusMaxAgeMs: number): Promise<Pruned> {
  return sql.begin(async (tx) => {
    const [records] = await tx<{ n: number }[]>`
      WITH gone AS (
        DELETE FROM change_log WHERE topic IN ('station', 'event')
          AND seq <= (SELECT max(seq) FROM change_log WHERE topic IN ('station', 'event') AND at < now() - make_interval(days => ${retentionDays}))
        RETURNING seq, at
      ), moved AS (
        UPDATE change_log_horizon SET pruned_seq = greatest(pruned_seq, (SELECT max(seq) FROM gone)),
                                      pruned_at = greatest(pruned_at, (SELECT max(at) FROM gone))
        WHERE EXISTS (SELECT 1 FROM gone) RETURNING 1
      )
      SELECT (SELECT count(*) FROM gone)::int AS n, (SELECT count(*) FROM moved) AS moved`;
    const [statuses] = await tx<{ n: number }[]>`
      WITH gone AS (
        DELETE FROM change_log WHERE topic IN ('status', 'option') AND at < now() - make_interval(secs => ${statusMaxAgeMs / 1000})
          -- Never the newest row: the log's head (what sync tokens name) must not go back.
          AND seq < (SELECT max(seq) FROM change_log)
        RETURNING 1
      )
      SELECT count(*)::int AS n FROM gone`;
    return { records: records!.n, statuses: statuses!.n };
  });
}
