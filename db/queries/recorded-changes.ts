import type { Sql } from '../connect.js';

/*
 * The change log's `status` and `option` rows, which every server instance records from its live
 * status (src/webhooks/recorder.ts), and what tells it whether anybody wants them: the kinds of the
 * active webhook subscriptions.
 */

/** A status or option change as the recorder hands it over, in the order it happened. */
export interface RecordedChange {
  topic: 'status' | 'option';
  hrs_id: string;
  /** status: `hrs_id/category`; option: `hrs_id/fuelling option`. */
  entity: string;
  /** The same for the same change on every instance: the log keeps one row of it. */
  change_key: string;
  /** The fields a delivered change carries after `at` (see the change_log migration, 0014). */
  payload: Record<string, unknown>;
}

/**
 * The kinds some active subscription wants (`station_status`, `fuelling_options`, …), and
 * `fuelling_options` while a driver alert is active: the alerts follow the options' changes too.
 */
export async function wantedKinds(sql: Sql): Promise<Set<string>> {
  const rows = await sql<{ kind: string }[]>`
    SELECT DISTINCT unnest(kinds) AS kind FROM webhook_subscriptions WHERE state = 'active'
    UNION SELECT 'fuelling_options' WHERE EXISTS (SELECT 1 FROM driver_alerts WHERE state = 'active')`;
  return new Set(rows.map((row) => row.kind));
}

/**
 * Appends the changes to the log in one statement, in the order given, each with its `seq` from
 * hrs_change_seq() (so after any transaction that holds the log's lock) and `at` taken after it; a
 * change whose key is in the log already (another instance recorded it) is skipped. The webhook
 * workers are told (`hrs_change_log`) when anything was written. Returns the rows written per topic.
 */
export async function recordChanges(sql: Sql, changes: readonly RecordedChange[]): Promise<Record<string, number>> {
  if (changes.length === 0) return {};
  const rows = await sql<{ topic: string; n: number }[]>`
    WITH written AS (
      INSERT INTO change_log (seq, at, topic, hrs_id, entity, change, change_key, payload)
      SELECT hrs_change_seq(), clock_timestamp(), c.topic, c.hrs_id, c.entity, 'changed', c.change_key, c.payload::jsonb
      FROM unnest(
             ${changes.map((c) => c.topic)}::text[], ${changes.map((c) => c.hrs_id)}::text[], ${changes.map((c) => c.entity)}::text[],
             ${changes.map((c) => c.change_key)}::text[], ${changes.map((c) => JSON.stringify(c.payload))}::text[]
           ) WITH ORDINALITY AS c(topic, hrs_id, entity, change_key, payload, n)
      ORDER BY c.n
      ON CONFLICT (change_key) WHERE change_key IS NOT NULL DO NOTHING
      RETURNING topic
    ),
    told AS (SELECT pg_notify('hrs_change_log', '') FROM (SELECT 1 FROM written LIMIT 1) AS one)
    SELECT topic, count(*)::int AS n, (SELECT count(*) FROM told) AS told FROM written GROUP BY topic`;
  return Object.fromEntries(rows.map((row) => [row.topic, row.n]));
}
