import type { Sql, Tx } from '../connect.js';
import type { ChangeRow } from '../../src/domain/webhooks/messages.js';

/*
 * What the webhook workers read and write (migrations 0014 to 0016): the change log past a
 * subscription's cursor, the subscription's pending message and delivery state, and the record of
 * every attempt. The cursor and the pending message live here, never only in Redis: a job lost with
 * Redis is made again by the sweep and finds everything where it was.
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
  pending_first_seq: string | null;
  pending_last_seq: string | null;
  pending_changes: number | null;
  pending_attempts: number;
  next_attempt_at: Date | null;
  /** The database's clock when it was read. */
  now: Date;
}

const SUBSCRIPTION_COLUMNS = (sql: Sql | Tx) => sql`
  id, user_id, url, kinds, hrs_ids, bbox, state, cursor_seq::text, secret_sealed, previous_secret_sealed,
  (previous_secret_sealed IS NOT NULL AND previous_secret_until > clock_timestamp()) AS previous_valid,
  failing_since, pending_message_id, pending_body, pending_first_seq::text, pending_last_seq::text, pending_changes,
  pending_attempts, next_attempt_at, clock_timestamp() AS now`;

export async function readSubscription(sql: Sql, id: string): Promise<DeliverySubscription | undefined> {
  const [row] = await sql<DeliverySubscription[]>`SELECT ${SUBSCRIPTION_COLUMNS(sql)} FROM webhook_subscriptions WHERE id = ${id}`;
  return row;
}

/**
 * Claims a subscription's delivery for `leaseMs` (one worker at a time sends its messages): the
 * subscription as it is now, or `{ busyForMs }` while another worker holds it.
 */
export async function claimDelivery(sql: Sql, id: string, leaseMs: number): Promise<DeliverySubscription | { busyForMs: number } | undefined> {
  const [row] = await sql<(DeliverySubscription & { claimed: boolean; busy_ms: number })[]>`
    WITH claimed AS (
      UPDATE webhook_subscriptions SET delivery_claimed_until = clock_timestamp() + ${`${leaseMs} milliseconds`}::interval
      WHERE id = ${id} AND (delivery_claimed_until IS NULL OR delivery_claimed_until < clock_timestamp())
      RETURNING id)
    SELECT ${SUBSCRIPTION_COLUMNS(sql)}, EXISTS (SELECT 1 FROM claimed) AS claimed,
           GREATEST(0, EXTRACT(EPOCH FROM (delivery_claimed_until - clock_timestamp())) * 1000)::int AS busy_ms
    FROM webhook_subscriptions WHERE id = ${id}`;
  if (!row) return undefined;
  if (!row.claimed) return { busyForMs: row.busy_ms };
  const { claimed: _claimed, busy_ms: _busy, ...subscription } = row;
  return subscription;
}

/** Lets the claim go (the next job for the subscription may start at once). */
export async function releaseDelivery(sql: Sql, id: string): Promise<void> {
  await sql`UPDATE webhook_subscriptions SET delivery_claimed_until = NULL WHERE id = ${id}`;
}

/** The log rows of the subscription's topics and stations after `afterSeq`, by seq (bbox not applied). */
export async function changesFor(sql: Sql, sub: Pick<DeliverySubscription, 'hrs_ids'>, topics: readonly string[], afterSeq: string, limit: number): Promise<ChangeRow[]> {
  return sql<ChangeRow[]>`
    SELECT seq::text, topic, hrs_id, change, at, payload FROM change_log
    WHERE seq > ${afterSeq}::bigint AND topic = ANY(${topics as string[]})
      AND (${sub.hrs_ids}::text[] IS NULL OR hrs_id = ANY(${sub.hrs_ids}::text[]))
    ORDER BY change_log.seq LIMIT ${limit}`;
}

/** The newest seq of the log (0 when empty). */
export async function logHead(sql: Sql): Promise<string> {
  const [row] = await sql<{ head: string }[]>`SELECT COALESCE(max(seq), 0)::text AS head FROM change_log`;
  return row!.head;
}

/** The topics and stations of the log rows after `afterSeq` (at most `limit` rows), and the last seq read. */
export async function newChanges(sql: Sql, afterSeq: string, limit: number): Promise<{ topic: string; hrs_id: string; seq: string }[]> {
  return sql<{ topic: string; hrs_id: string; seq: string }[]>`
    SELECT topic, hrs_id, seq::text FROM change_log WHERE seq > ${afterSeq}::bigint ORDER BY change_log.seq LIMIT ${limit}`;
}

/** Active subscriptions behind `headSeq` wanting one of these kinds for one of these stations. */
export async function subscriptionsWanting(sql: Sql, kinds: readonly string[], hrsIds: readonly string[], headSeq: string): Promise<string[]> {
  const rows = await sql<{ id: string }[]>`
    SELECT id FROM webhook_subscriptions
    WHERE state = 'active' AND cursor_seq < ${headSeq}::bigint AND kinds && ${kinds as string[]}::text[]
      AND (hrs_ids IS NULL OR hrs_ids && ${hrsIds as string[]}::text[])`;
  return rows.map((r) => r.id);
}

/** Active subscriptions with a message pending or a wanted change (bbox aside) past their cursor: the sweep's list. */
export async function subscriptionsBehind(sql: Sql): Promise<string[]> {
  const rows = await sql<{ id: string }[]>`
    SELECT s.id FROM webhook_subscriptions s
    WHERE s.state = 'active' AND (s.pending_message_id IS NOT NULL OR EXISTS (
      SELECT 1 FROM change_log c
      WHERE c.seq > s.cursor_seq AND c.topic = ANY(ARRAY(
        SELECT CASE k WHEN 'station_records' THEN 'station' WHEN 'events' THEN 'event'
                      WHEN 'station_status' THEN 'status' WHEN 'fuelling_options' THEN 'option' END
        FROM unnest(s.kinds) k))
        AND (s.hrs_ids IS NULL OR c.hrs_id = ANY(s.hrs_ids))))`;
  return rows.map((r) => r.id);
}

/** Nothing wanted up to `seq`: the cursor moves there (never back, never past a pending message). */
export async function skipTo(sql: Sql, id: string, seq: string): Promise<void> {
  await sql`
    UPDATE webhook_subscriptions SET cursor_seq = GREATEST(cursor_seq, ${seq}::bigint)
    WHERE id = ${id} AND pending_message_id IS NULL`;
}

/** The next message, formed: stored as pending (its changes are those in (cursor_seq, lastSeq]). */
export async function storePending(
  sql: Sql,
  id: string,
  message: { id: string; body: string; firstSeq: string; lastSeq: string; changes: number },
): Promise<boolean> {
  const rows = await sql`
    UPDATE webhook_subscriptions
    SET pending_message_id = ${message.id}, pending_body = ${message.body}, pending_first_seq = ${message.firstSeq}::bigint,
        pending_last_seq = ${message.lastSeq}::bigint, pending_changes = ${message.changes}, pending_attempts = 0, next_attempt_at = NULL
    WHERE id = ${id} AND pending_message_id IS NULL
    RETURNING id`;
  return rows.length === 1;
}

/** The pending message was taken (2xx): the cursor moves past it, failures are forgotten. */
export async function markDelivered(sql: Sql, id: string, messageId: string): Promise<void> {
  await sql`
    UPDATE webhook_subscriptions
    SET cursor_seq = GREATEST(cursor_seq, pending_last_seq), pending_message_id = NULL, pending_body = NULL,
        pending_first_seq = NULL, pending_last_seq = NULL, pending_changes = NULL, pending_attempts = 0,
        next_attempt_at = NULL, failing_since = NULL, last_delivery_at = clock_timestamp()
    WHERE id = ${id} AND pending_message_id = ${messageId}`;
}

/** An attempt failed: counted, the next one due at `nextAttemptAt`; returns since when it is failing. */
export async function markFailed(sql: Sql, id: string, messageId: string, attempts: number, retryInMs: number): Promise<Date | undefined> {
  const [row] = await sql<{ failing_since: Date }[]>`
    UPDATE webhook_subscriptions
    SET pending_attempts = ${attempts}, failing_since = COALESCE(failing_since, clock_timestamp()),
        next_attempt_at = clock_timestamp() + ${`${retryInMs} milliseconds`}::interval
    WHERE id = ${id} AND pending_message_id = ${messageId}
    RETURNING failing_since`;
  return row?.failing_since;
}

/** A 410 Gone: the subscription ends; nothing more is sent to it. */
export async function markUnsubscribed(sql: Sql, id: string, reason: string): Promise<void> {
  await sql`
    UPDATE webhook_subscriptions
    SET state = 'unsubscribed', disabled_at = clock_timestamp(), disabled_reason = ${reason}, next_attempt_at = NULL
    WHERE id = ${id} AND state = 'active'`;
}

/**
 * Gave up: the subscription is disabled (its pending message kept, resent when it is enabled again)
 * and an e-mail to its owner written to the outbox in the same transaction. Returns the e-mail's key
 * and when it is due, or undefined when it was no longer active.
 */
export async function markDisabled(sql: Sql, id: string, reason: string): Promise<{ key: string; dueAt: Date } | undefined> {
  return sql.begin(async (tx) => {
    const [row] = await tx<{ disabled_at: Date; email: string }[]>`
      UPDATE webhook_subscriptions s
      SET state = 'disabled', disabled_at = clock_timestamp(), disabled_reason = ${reason}, next_attempt_at = NULL
      FROM users u
      WHERE s.id = ${id} AND s.state = 'active' AND u.id = s.user_id
      RETURNING s.disabled_at, u.email`;
    if (!row) return undefined;
    const key = `webhook:${id}:disabled:${row.disabled_at.toISOString()}`;
    await tx`
      INSERT INTO mail_outbox (key, kind, subscription_id, recipient, due_at)
      VALUES (${key}, 'webhook_disabled', ${id}, ${row.email}, ${row.disabled_at})
      ON CONFLICT (key) DO NOTHING`;
    return { key, dueAt: row.disabled_at };
  });
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
 * Records an attempt and keeps only the newest DELIVERIES_KEPT of the subscription's: one statement
 * (the attempt inserted, the one DELIVERIES_KEPT back found among those already there, older ones
 * deleted), so a message costs one round trip to record, not a transaction of four.
 */
export async function recordAttempt(sql: Sql, a: DeliveryAttempt): Promise<void> {
  await sql`
    WITH added AS (
      INSERT INTO webhook_deliveries (subscription_id, message_id, kind, changes, attempt, status_code, error, latency_ms)
      VALUES (${a.subscriptionId}, ${a.messageId}, ${a.kind}, ${a.changes}, ${a.attempt}, ${a.statusCode}, ${a.error?.slice(0, 1000) ?? null}, ${a.latencyMs})
      RETURNING id)
    DELETE FROM webhook_deliveries
    WHERE subscription_id = ${a.subscriptionId} AND id < (
      SELECT id FROM webhook_deliveries WHERE subscription_id = ${a.subscriptionId} ORDER BY id DESC OFFSET ${DELIVERIES_KEPT - 2} LIMIT 1)
      AND EXISTS (SELECT 1 FROM added)`;
}

/** The details of these stations (where their coordinates are), for stations the registry at hand does not know yet. */
export async function stationDetails(sql: Sql, hrsIds: readonly string[]): Promise<Map<string, Record<string, unknown>>> {
  if (hrsIds.length === 0) return new Map();
  const rows = await sql<{ hrs_id: string; details: Record<string, unknown> }[]>`
    SELECT hrs_id, details FROM stations WHERE hrs_id = ANY(${hrsIds as string[]})`;
  return new Map(rows.map((r) => [r.hrs_id, r.details]));
}
