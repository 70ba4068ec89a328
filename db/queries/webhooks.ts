import type { Sql, Tx } from '../connect.js';

/**
 * Webhook subscriptions as their owners manage them (the portal's `/portal/v1/webhooks`): made, listed,
 * changed, re-enabled, deleted, their secret rotated, a ping queued; and the deliveries the webhook
 * workers recorded. Every read and write names the owner, so another account's subscription is never
 * found. A new subscription starts at the change log's current position, read under the log's lock
 * (no change is half-seen): it gets the changes made from its creation on.
 */

/** A subscription's row as its owner may see it (the sealed secrets stay in the database). */
export interface WebhookRow {
  id: string;
  url: string;
  description: string;
  kinds: string[];
  hrs_ids: string[] | null;
  bbox: number[] | null;
  state: 'active' | 'disabled' | 'unsubscribed';
  created_at: Date;
  disabled_at: Date | null;
  disabled_reason: string | null;
  failing_since: Date | null;
  last_delivery_at: Date | null;
  secret_rotated_at: Date | null;
  previous_secret_until: Date | null;
}

/** What a subscription is made of, as its owner chose it. */
export interface WebhookFields {
  url: string;
  description: string;
  kinds: string[];
  hrs_ids: string[] | null;
  bbox: number[] | null;
}

/** A delivery attempt as the webhook workers recorded it. */
export interface DeliveryRow {
  message_id: string;
  kind: 'changes' | 'ping';
  changes: number;
  attempt: number;
  status_code: number | null;
  error: string | null;
  latency_ms: number | null;
  at: Date;
}

const COLUMNS = `id, url, description, kinds, hrs_ids, bbox, state, created_at, disabled_at, disabled_reason, failing_since,
  last_delivery_at, secret_rotated_at, previous_secret_until`;

/** Every subscription of the account, oldest first (unsubscribed ones too: their state says so). */
export function userWebhooks(sql: Sql, userId: string): Promise<WebhookRow[]> {
  return sql.unsafe<WebhookRow[]>(`SELECT ${COLUMNS} FROM webhook_subscriptions WHERE user_id = $1 ORDER BY created_at, id`, [userId]);
}

/** One subscription of the account, if it has one of that id. */
export async function userWebhook(sql: Sql | Tx, userId: string, id: string): Promise<WebhookRow | undefined> {
  const [row] = await sql.unsafe<WebhookRow[]>(`SELECT ${COLUMNS} FROM webhook_subscriptions WHERE user_id = $1 AND id = $2`, [userId, id]);
  return row;
}

/** Which of these station ids name production stations (sandbox stations are never delivered). */
export async function knownStations(sql: Sql, hrsIds: readonly string[]): Promise<Set<string>> {
  if (hrsIds.length === 0) return new Set();
  const rows = await sql<{ hrs_id: string }[]>`SELECT hrs_id FROM stations WHERE hrs_id = ANY(${hrsIds as string[]}::text[]) AND NOT sandbox`;
  return new Set(rows.map((r) => r.hrs_id));
}

/**
 * Makes a subscription unless the account has `limit` that are not unsubscribed already (then
 * `'limit'`, and nothing is written). The account's row is locked first, so two requests at once
 * cannot both pass the limit; the change log's lock is taken before its position is read.
 */
export async function insertWebhook(
  sql: Sql,
  row: WebhookFields & { id: string; userId: string; secretSealed: Buffer },
  limit: number,
): Promise<WebhookRow | 'limit'> {
  return sql.begin(async (tx) => {
    await tx`SELECT 1 FROM users WHERE id = ${row.userId} FOR UPDATE`;
    const [counted] = await tx<{ n: number }[]>`
      SELECT count(*)::int AS n FROM webhook_subscriptions WHERE user_id = ${row.userId} AND state <> 'unsubscribed'`;
    if (counted!.n >= limit) return 'limit' as const;
    await tx`SELECT hrs_lock_change_log()`;
    const [created] = await tx.unsafe<WebhookRow[]>(
      `INSERT INTO webhook_subscriptions (id, user_id, url, description, kinds, hrs_ids, bbox, cursor_seq, secret_sealed)
       VALUES ($1, $2, $3, $4, $5::text[], $6::text[], $7::float8[],
               GREATEST((SELECT max(seq) FROM change_log), (SELECT pruned_seq FROM change_log_horizon), 0), $8)
       RETURNING ${COLUMNS}`,
      [row.id, row.userId, row.url, row.description, row.kinds, row.hrs_ids, row.bbox, row.secretSealed] as never[],
    );
    return created!;
  });
}

/**
 * Changes the fields given of the account's subscription. With `reenable`, a disabled subscription
 * becomes active again, its failures forgotten (delivery resumes at its cursor). Undefined when the
 * account has no subscription of that id.
 */
export async function updateWebhook(
  sql: Sql,
  userId: string,
  id: string,
  fields: Partial<WebhookFields>,
  reenable: boolean,
): Promise<WebhookRow | undefined> {
  return sql.begin(async (tx) => {
    const [before] = await tx<{ state: string }[]>`SELECT state FROM webhook_subscriptions WHERE user_id = ${userId} AND id = ${id} FOR UPDATE`;
    if (!before) return undefined;
    const sets: string[] = [];
    const values: unknown[] = [];
    const set = (column: string, value: unknown, cast = '') => {
      values.push(value);
      sets.push(`${column} = $${values.length}${cast}`);
    };
    if (fields.url !== undefined) set('url', fields.url);
    if (fields.description !== undefined) set('description', fields.description);
    if (fields.kinds !== undefined) set('kinds', fields.kinds, '::text[]');
    if (fields.hrs_ids !== undefined) set('hrs_ids', fields.hrs_ids, '::text[]');
    if (fields.bbox !== undefined) set('bbox', fields.bbox, '::float8[]');
    if (reenable && before.state === 'disabled') sets.push(`state = 'active', disabled_at = NULL, disabled_reason = NULL, failing_since = NULL, next_attempt_at = NULL`);
    if (sets.length > 0) {
      values.push(userId, id);
      await tx.unsafe(`UPDATE webhook_subscriptions SET ${sets.join(', ')} WHERE user_id = $${values.length - 1} AND id = $${values.length}`, values as never[]);
    }
    // Enabled (or asked to be, again): the webhook workers look for due subscriptions at the commit.
    if (reenable && before.state !== 'unsubscribed') await tx`SELECT pg_notify('hrs_webhooks', '')`;
    return userWebhook(tx, userId, id);
  });
}

/** Deletes the account's subscription (its deliveries go with it); false when it has none of that id. */
export async function deleteWebhook(sql: Sql, userId: string, id: string): Promise<boolean> {
  const rows = await sql`DELETE FROM webhook_subscriptions WHERE user_id = ${userId} AND id = ${id} RETURNING id`;
  return rows.length > 0;
}

/**
 * A new secret for the account's subscription: the current one becomes the previous, which still
 * signs until `overlapMs` from now (a secret rotated during an overlap drops the oldest one).
 */
export async function rotateWebhookSecret(
  sql: Sql,
  userId: string,
  id: string,
  sealed: Buffer,
  overlapMs: number,
): Promise<WebhookRow | undefined> {
  const [row] = await sql.unsafe<WebhookRow[]>(
    `UPDATE webhook_subscriptions
        SET previous_secret_sealed = secret_sealed, secret_sealed = $3, secret_rotated_at = clock_timestamp(),
            previous_secret_until = clock_timestamp() + make_interval(secs => $4::float8 / 1000)
      WHERE user_id = $1 AND id = $2
      RETURNING ${COLUMNS}`,
    [userId, id, sealed, overlapMs] as never[],
  );
  return row;
}

/**
 * Queues a ping of the account's subscription: the next message id (`msg_<id>_ping_<n>`, n = 1, 2, …)
 * added to its pending pings, and the webhook workers told (they take it with their next claim).
 * Undefined when the account has no subscription of that id.
 */
export async function queuePing(sql: Sql, userId: string, id: string): Promise<string | undefined> {
  const [row] = await sql<{ message_id: string }[]>`
    WITH queued AS (
      UPDATE webhook_subscriptions SET pings = pings + 1, pending_pings = pending_pings || ('msg_' || id || '_ping_' || (pings + 1)::text)
      WHERE user_id = ${userId} AND id = ${id}
      RETURNING 'msg_' || id || '_ping_' || pings::text AS message_id),
    told AS (SELECT pg_notify('hrs_webhooks', '') FROM queued)
    SELECT message_id FROM queued, told`;
  return row?.message_id;
}

/** The subscription's newest deliveries, newest first. */
export function webhookDeliveries(sql: Sql, subscriptionId: string, limit: number): Promise<DeliveryRow[]> {
  return sql<DeliveryRow[]>`
    SELECT message_id, kind, changes, attempt, status_code, error, latency_ms, at
    FROM webhook_deliveries WHERE subscription_id = ${subscriptionId}
    ORDER BY id DESC LIMIT ${limit}`;
}
