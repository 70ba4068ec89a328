import type { Sql, Tx } from '../connect.js';
import type { ChangeRow, WrittenChange } from '../../src/domain/webhooks/messages.js';

/*
 * What the webhook worker reads and writes (migrations 0014 to 0017): PostgreSQL is the whole of
 * delivery's state and its queue. A worker claims due subscriptions (claimDue: one statement claims
 * them and reads each with its pending message or the first changes past its cursor) and records each
 * attempt's outcome (recordOutcome: one statement records the attempt and advances the cursor, or
 * stores the message as pending and schedules its retry, or ends the subscription).
 */

/** A subscription as the delivery worker reads it. */
export interface DeliverySubscription {
  id: string;
  user_id: string;
  url: string;
  kinds: string[];
  hrs_ids: string[] | null;
  bbox: number[] | null;
  state: 'active' | 'disabled' | 'unsubscribed';
  cursor_seq: string;
  secret_sealed: Buffer;
  previous_secret_sealed: Buffer | null;
  /** Whether the previous secret still signs (its overlap has not ended). */
  previous_valid: boolean;
  failing_since: Date | null;
  pending_message_id: string | null;
  pending_body: string | null;
  pending_changes: number | null;
  pending_attempts: number;
}

/** A claimed subscription as the claim reads it: without its log rows, only their seqs. */
export interface ClaimedRow extends DeliverySubscription {
  /** Its pings asked for (message ids), taken by this claim. */
  pings: string[];
  /** Whether its delivery was claimed (false: only its pings were due). */
  deliver: boolean;
  /** Without a pending message: the seqs of the first rows of the log past its cursor it may want (kinds and stations applied, not the box), in order. */
  change_seqs: string[];
}

/** A claimed subscription: what to send it now. */
export interface ClaimedSubscription extends Omit<ClaimedRow, 'change_seqs'> {
  /** Without a pending message: the first rows of the log past its cursor it may want (kinds and stations applied, not the box), each change written. */
  changes: WrittenChange[];
}

/** The log's topics a subscription's kinds want, in SQL (as KIND_TOPICS in src/domain/webhooks/messages.ts). */
const TOPICS_OF = (sql: Sql) => sql`ARRAY(
  SELECT CASE k WHEN 'station_records' THEN 'station' WHEN 'events' THEN 'event'
                WHEN 'station_status' THEN 'status' WHEN 'fuelling_options' THEN 'option' END
  FROM unnest(s.kinds) k)`;

/** The log rows past the subscription's cursor of its topics and stations (`s`: the subscription). */
const WANTED = (sql: Sql) => sql`
  FROM change_log c
  WHERE c.seq > s.cursor_seq AND c.topic = ANY(${TOPICS_OF(sql)}) AND (s.hrs_ids IS NULL OR c.hrs_id = ANY(s.hrs_ids))`;

/** Whether the subscription's delivery is due now: its time has come, or it has none and has something to send. */
// A cursor at the log's head wants nothing: the head (read once a statement) spares those the look into
// the log. The look is the first wanted row in seq order from the cursor (the log's key), so the rows a
// cursor has passed are never read: as an EXISTS (whose ORDER BY and LIMIT PostgreSQL drops) the planner
// scanned the log from its start for it, every claim, for every subscription.
const DUE = (sql: Sql) => sql`
  s.state = 'active' AND (s.next_attempt_at <= clock_timestamp()
    OR (s.next_attempt_at IS NULL AND (s.pending_message_id IS NOT NULL
      OR (s.cursor_seq < (SELECT max(seq) FROM change_log) AND (SELECT c.seq ${WANTED(sql)} ORDER BY c.seq LIMIT 1) IS NOT NULL))))`;

/**
 * Claims up to `limit` subscriptions that are due (their delivery, their pings, or both), skipping
 * those another worker holds, longest waiting first, and reads them: one statement. A claimed
 * delivery is the worker's until `leaseMs` from now (a dead worker's lapses); the pings are taken.
 * Each comes with its pending message, or without one with the seqs of the first `page` rows it may
 * want: the rows themselves are read by seq (changeRowsBySeq), once for every subscription that wants
 * them, not once per subscription.
 */
export async function claimDue(sql: Sql, limit: number, leaseMs: number, page: number): Promise<ClaimedRow[]> {
  return sql<ClaimedRow[]>`
    WITH due AS (
      SELECT s.id, s.pending_pings, d.deliver
      FROM webhook_subscriptions s
      -- Whether its delivery is due, worked out once per subscription looked at: named in both the
      -- filter and the result, PostgreSQL evaluated it (and its look into the log) twice for each one
      -- claimed. OFFSET 0 keeps the planner from folding the subquery back into both places.
      CROSS JOIN LATERAL (SELECT ${DUE(sql)} AS deliver OFFSET 0) d
      WHERE d.deliver OR (s.pending_pings <> '{}' AND s.state <> 'unsubscribed')
      ORDER BY COALESCE(s.next_attempt_at, s.last_delivery_at, s.created_at)
      LIMIT ${limit}
      FOR UPDATE OF s SKIP LOCKED)
    UPDATE webhook_subscriptions s
    SET pending_pings = '{}',
        next_attempt_at = CASE WHEN due.deliver THEN clock_timestamp() + ${`${leaseMs} milliseconds`}::interval ELSE s.next_attempt_at END
    FROM due WHERE s.id = due.id
    RETURNING s.id, s.user_id, s.url, s.kinds, s.hrs_ids, s.bbox, s.state, s.cursor_seq::text, s.secret_sealed, s.previous_secret_sealed,
      (s.previous_secret_sealed IS NOT NULL AND s.previous_secret_until > clock_timestamp()) AS previous_valid,
      s.failing_since, s.pending_message_id, s.pending_body, s.pending_changes, s.pending_attempts, due.pending_pings AS pings, due.deliver,
      CASE WHEN due.deliver AND s.pending_message_id IS NULL THEN ARRAY(
        SELECT c.seq::text ${WANTED(sql)} ORDER BY c.seq LIMIT ${page})
      ELSE '{}'::text[] END AS change_seqs`;
}

/** The log rows of these seqs (those the log still holds), in no particular order. */
export async function changeRowsBySeq(sql: Sql, seqs: readonly string[]): Promise<ChangeRow[]> {
  if (seqs.length === 0) return [];
  return sql<ChangeRow[]>`
    SELECT seq::text, topic, hrs_id, change, at, payload FROM change_log WHERE seq = ANY(${seqs as string[]}::bigint[])`;
}

/** The log rows of the subscription's topics and stations after `afterSeq`, by seq (bbox not applied): the pages after the claim's. */
export async function changesFor(sql: Sql, sub: Pick<DeliverySubscription, 'hrs_ids'>, topics: readonly string[], afterSeq: string, limit: number): Promise<ChangeRow[]> {
  return sql<ChangeRow[]>`
    SELECT seq::text, topic, hrs_id, change, at, payload FROM change_log
    WHERE seq > ${afterSeq}::bigint AND topic = ANY(${topics as string[]})
      AND (${sub.hrs_ids}::text[] IS NULL OR hrs_id = ANY(${sub.hrs_ids}::text[]))
    ORDER BY change_log.seq LIMIT ${limit}`;
}

/**
 * Nothing wanted up to `seq` (the box left it all out): the cursor moves there (never back, never past
 * a pending message) and the claim is let go.
 */
export async function skipTo(sql: Sql, id: string, seq: string): Promise<void> {
  await sql`
    UPDATE webhook_subscriptions SET cursor_seq = GREATEST(cursor_seq, ${seq}::bigint), next_attempt_at = NULL
    WHERE id = ${id} AND pending_message_id IS NULL`;
}

/**
 * What an attempt that was not delivered came to (a 2xx is recordDelivered's): gone (410: the
 * subscription ends), retry (the next attempt `delayMs` from now), or disabled (given up: an e-mail to
 * the owner written to the outbox in the same statement).
 */
export type Outcome =
  | { kind: 'gone'; reason: string }
  | { kind: 'retry'; attempts: number; delayMs: number }
  | { kind: 'disabled'; reason: string };

/**
 * A message formed this turn and sent for the first time, not stored yet: its body, the seqs it covers
 * (its changes are those wanted in (cursor, lastSeq]) and the cursor it was formed from.
 */
export interface FreshMessage {
  body: string;
  firstSeq: string;
  lastSeq: string;
  cursor: string;
}

/**
 * Records an attempt that was not delivered and what follows from it: one statement. The attempt is of
 * the subscription's pending message or, with `fresh`, of a message formed this turn, which is stored
 * as the pending message with the outcome (a retry, or a disabled subscription enabled again, resends
 * it under its id and body). Only while the subscription is as the claim read it (the same pending
 * message, or none and the same cursor): a claim that lapsed and was taken over changes nothing but
 * the attempt's record. Returns the e-mail's key and when it is due when the subscription was disabled.
 */
export async function recordOutcome(sql: Sql, a: DeliveryAttempt, outcome: Outcome, fresh?: FreshMessage): Promise<{ key: string; dueAt: Date } | undefined> {
  const id = a.subscriptionId;
  const mine = fresh
    ? sql`s.id = ${id} AND s.pending_message_id IS NULL AND s.cursor_seq = ${fresh.cursor}::bigint`
    : sql`s.id = ${id} AND s.pending_message_id = ${a.messageId}`;
  // A fresh message that was not delivered becomes the pending one.
  const stored = fresh
    ? sql`pending_message_id = ${a.messageId}, pending_body = ${fresh.body}, pending_first_seq = ${fresh.firstSeq}::bigint,
          pending_last_seq = ${fresh.lastSeq}::bigint, pending_changes = ${a.changes},`
    : sql``;
  const change =
    outcome.kind === 'retry'
      ? sql`UPDATE webhook_subscriptions s
            SET ${stored} pending_attempts = ${outcome.attempts}, failing_since = COALESCE(s.failing_since, clock_timestamp()),
                next_attempt_at = clock_timestamp() + ${`${outcome.delayMs} milliseconds`}::interval
            WHERE ${mine} RETURNING NULL::text AS email, NULL::timestamptz AS disabled_at`
      : outcome.kind === 'gone'
        ? sql`UPDATE webhook_subscriptions s
              SET state = 'unsubscribed', disabled_at = clock_timestamp(), disabled_reason = ${outcome.reason}, next_attempt_at = NULL
              WHERE ${mine} AND s.state = 'active' RETURNING NULL::text AS email, NULL::timestamptz AS disabled_at`
        : sql`UPDATE webhook_subscriptions s
              SET ${stored} state = 'disabled', disabled_at = clock_timestamp(), disabled_reason = ${outcome.reason}, next_attempt_at = NULL
              FROM users u
              WHERE ${mine} AND s.state = 'active' AND u.id = s.user_id
              RETURNING u.email, s.disabled_at`;
  const [row] = await sql<{ key: string | null; disabled_at: Date | null }[]>`
    WITH ${recorded(sql, a)},
    changed AS (${change}),
    keyed AS (
      SELECT 'webhook:' || ${id} || ':disabled:' || to_char(disabled_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS key, email, disabled_at
      FROM changed WHERE email IS NOT NULL),
    mailed AS (
      INSERT INTO mail_outbox (key, kind, subscription_id, recipient, due_at)
      SELECT key, 'webhook_disabled', ${id}, email, disabled_at FROM keyed
      ON CONFLICT (key) DO NOTHING)
    SELECT (SELECT key FROM keyed) AS key, (SELECT disabled_at FROM keyed) AS disabled_at`;
  return row?.key && row.disabled_at ? { key: row.key, dueAt: row.disabled_at } : undefined;
}

/** A delivered attempt (2xx): of the pending message, or with `fresh` of a message formed in its turn. */
export interface Delivered {
  attempt: DeliveryAttempt;
  fresh?: FreshMessage;
}

/**
 * Records delivered attempts, of any number of subscriptions (each once), in one statement: each
 * attempt inserted (the newest DELIVERIES_KEPT of its subscription kept, trimmed to them every
 * TRIM_EVERY records: see DELIVERIES_HELD), and its subscription's cursor
 * moved past the message, nothing pending, failures forgotten, only while the subscription is as its
 * claim read it (as recordOutcome). Every commit of PostgreSQL's is a flush of its log: a worker
 * recording the 2xx answers that came while its last record ran, together, commits once for them all
 * (workers/webhooks/delivered.ts).
 */
export async function recordDelivered(sql: Sql, list: readonly Delivered[]): Promise<void> {
  if (list.length === 0) return;
  const column = <T>(of: (d: Delivered) => T) => list.map(of);
  await sql`
    WITH input AS (
      SELECT * FROM unnest(
        ${column((d) => d.attempt.subscriptionId)}::text[], ${column((d) => d.attempt.messageId)}::text[], ${column((d) => d.attempt.changes)}::int[],
        ${column((d) => d.attempt.attempt)}::int[], ${column((d) => d.attempt.statusCode)}::int[], ${column((d) => d.attempt.latencyMs)}::int[],
        ${column((d) => d.fresh?.cursor ?? null)}::bigint[], ${column((d) => d.fresh?.lastSeq ?? null)}::bigint[])
        AS i(id, message_id, changes, attempt, status_code, latency_ms, cursor_seq, last_seq)),
    added AS (
      INSERT INTO webhook_deliveries (subscription_id, message_id, kind, changes, attempt, status_code, error, latency_ms)
      SELECT id, message_id, 'changes', changes, attempt, status_code, NULL, latency_ms FROM input
      RETURNING id),
    trimmed AS (
      DELETE FROM webhook_deliveries d USING input i, webhook_subscriptions t
      WHERE t.id = i.id AND t.attempts_recorded % ${TRIM_EVERY} = ${TRIM_EVERY - 1}
        AND d.subscription_id = i.id AND d.id < (
        SELECT w.id FROM webhook_deliveries w WHERE w.subscription_id = i.id ORDER BY w.id DESC OFFSET ${DELIVERIES_KEPT - 2} LIMIT 1)
        AND EXISTS (SELECT 1 FROM added)),
    moved AS (
      UPDATE webhook_subscriptions s
      SET attempts_recorded = s.attempts_recorded + 1,
          cursor_seq = GREATEST(s.cursor_seq, COALESCE(i.last_seq, s.pending_last_seq)), pending_message_id = NULL, pending_body = NULL,
          pending_first_seq = NULL, pending_last_seq = NULL, pending_changes = NULL, pending_attempts = 0,
          next_attempt_at = NULL, failing_since = NULL, last_delivery_at = clock_timestamp()
      FROM input i
      WHERE s.id = i.id AND CASE WHEN i.cursor_seq IS NULL THEN s.pending_message_id = i.message_id
                                 ELSE s.pending_message_id IS NULL AND s.cursor_seq = i.cursor_seq END
      RETURNING s.id)
    SELECT (SELECT count(*) FROM moved)::int AS moved`;
}

/** One attempt of a delivery, as the portal lists it. */
export interface DeliveryAttempt {
  subscriptionId: string;
  messageId: string;
  kind: 'changes' | 'ping';
  changes: number;
  attempt: number;
  statusCode: number | null;
  error: string | null;
  latencyMs: number | null;
}

/** How many attempts are kept per subscription (the newest). */
export const DELIVERIES_KEPT = 100;

/**
 * A delivered attempt's record trims its subscription's attempts to the newest DELIVERIES_KEPT every
 * this many records (counted in `attempts_recorded`, moved with the cursor; migration 0022): finding
 * the cut visits as many heap pages as attempts are kept, most of the recording statement's cost when
 * done every time. Failed attempts and pings trim at once (they are few).
 */
export const TRIM_EVERY = 10;

/** The most attempts a subscription holds between two trims. */
export const DELIVERIES_HELD = DELIVERIES_KEPT + TRIM_EVERY - 1;

/**
 * The CTEs that record an attempt and keep only the newest DELIVERIES_KEPT of the subscription's (the
 * attempt inserted, the one DELIVERIES_KEPT back found among those already there, older ones deleted).
 */
function recorded(sql: Sql, a: DeliveryAttempt) {
  return sql`
    added AS (
      INSERT INTO webhook_deliveries (subscription_id, message_id, kind, changes, attempt, status_code, error, latency_ms)
      VALUES (${a.subscriptionId}, ${a.messageId}, ${a.kind}, ${a.changes}, ${a.attempt}, ${a.statusCode}, ${a.error?.slice(0, 1000) ?? null}, ${a.latencyMs})
      RETURNING id),
    trimmed AS (
      DELETE FROM webhook_deliveries
      WHERE subscription_id = ${a.subscriptionId} AND id < (
        SELECT id FROM webhook_deliveries WHERE subscription_id = ${a.subscriptionId} ORDER BY id DESC OFFSET ${DELIVERIES_KEPT - 2} LIMIT 1)
        AND EXISTS (SELECT 1 FROM added))`;
}

/** Records an attempt that changes nothing else (a ping): one statement. */
export async function recordAttempt(sql: Sql, a: DeliveryAttempt): Promise<void> {
  await sql`WITH ${recorded(sql, a)} SELECT 1`;
}

/** The details of these stations (where their coordinates are), for stations the registry at hand does not know yet. */
export async function stationDetails(sql: Sql, hrsIds: readonly string[]): Promise<Map<string, Record<string, unknown>>> {
  if (hrsIds.length === 0) return new Map();
  const rows = await sql<{ hrs_id: string; details: Record<string, unknown> }[]>`
    SELECT hrs_id, details FROM stations WHERE hrs_id = ANY(${hrsIds as string[]})`;
  return new Map(rows.map((r) => [r.hrs_id, r.details]));
}
