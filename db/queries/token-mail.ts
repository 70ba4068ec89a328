import type { Sql, Tx } from '../connect.js';

/*
 * The token e-mails' outbox and ledger (migration 0006). Intents are written in the transaction of
 * the token change they tell of; the mail worker claims one by its key, sends it, and marks it sent,
 * so an e-mail is sent at most once; a claim lapses after its lease when the worker died before
 * sending, so none is lost either.
 */

export type TokenMailKind = 'created' | 'revoked' | 'expiring';

/** An e-mail the platform means to send about a token. */
export interface MailIntent {
  key: string;
  kind: TokenMailKind;
  tokenId: string;
  recipient: string;
  dueAt: Date;
  /** For `expiring`: how many days before expiry, and the expiry it was scheduled for. */
  daysBefore?: number;
  expiresAt?: Date;
  revokedBy?: 'owner' | 'admin';
}

/**
 * Writes intents. One whose key exists already is left as it is (the same e-mail is never meant
 * twice), unless it was cancelled: then it is meant again (an expiry changed back to an earlier one),
 * pending at its new time. Returns the keys written or revived.
 */
export async function insertMailIntents(tx: Tx | Sql, intents: readonly MailIntent[]): Promise<string[]> {
  if (intents.length === 0) return [];
  const rows = intents.map((i) => ({
    key: i.key,
    kind: i.kind,
    token_id: i.tokenId,
    recipient: i.recipient,
    due_at: i.dueAt.toISOString(),
    days_before: i.daysBefore ?? null,
    expires_at: i.expiresAt?.toISOString() ?? null,
    revoked_by: i.revokedBy ?? null,
  }));
  const written = await tx<{ key: string }[]>`
    INSERT INTO mail_outbox (key, kind, token_id, recipient, due_at, days_before, expires_at, revoked_by)
    SELECT key, kind, token_id, recipient, due_at, days_before, expires_at, revoked_by
    FROM jsonb_to_recordset(${JSON.stringify(rows)}::text::jsonb)
      AS r(key text, kind text, token_id bigint, recipient text, due_at timestamptz, days_before int, expires_at timestamptz, revoked_by text)
    ON CONFLICT (key) DO UPDATE SET state = 'pending', due_at = EXCLUDED.due_at, attempts = 0, last_error = NULL, claimed_until = NULL
      WHERE mail_outbox.state = 'cancelled'
    RETURNING key`;
  return written.map((r) => r.key);
}

/** Cancels a token's reminders not sent yet (revoked, or its expiry changed); returns their keys. */
export async function cancelReminders(tx: Tx | Sql, tokenId: string): Promise<string[]> {
  const rows = await tx<{ key: string }[]>`
    UPDATE mail_outbox SET state = 'cancelled', claimed_until = NULL
    WHERE token_id = ${tokenId} AND kind = 'expiring' AND state IN ('pending', 'sending')
    RETURNING key`;
  return rows.map((r) => r.key);
}

/** A claimed e-mail with what it is rendered from: the token and its owner as they are now. */
export interface ClaimedMail {
  key: string;
  kind: TokenMailKind;
  recipient: string;
  daysBefore: number | null;
  /** The expiry the intent was written for (`expiring`), else the token's current one. */
  expiresAt: Date | null;
  revokedBy: 'owner' | 'admin' | null;
  attempts: number;
  /** When it was due, and when it was claimed (the database's clock): a reminder sent late says so. */
  dueAt: Date;
  claimedAt: Date;
  token: {
    id: string;
    userId: string | null;
    generation: string;
    /** The originator of an import token, with its name. */
    originator: { id: string; name: string } | null;
    name: string;
    hint: string | null;
    createdAt: Date;
    expiresAt: Date | null;
    revokedAt: Date | null;
  };
  /** Who it is written to: the owner of a personal token; for an import or legacy export token, its recipient. */
  owner: { name: string | null; email: string };
  /**
   * For a reminder of an import or legacy export token (no owner): why its recipient is told, as it
   * stands when it is sent: a manager of the token's originator, or an admin. Null for personal tokens.
   */
  recipientAs: 'manager' | 'admin' | null;
}

/** What a claim checks besides the ledger: the ADMIN_EMAILS addresses, who stay entitled to admins' reminders. */
export interface ClaimOptions {
  adminEmails?: readonly string[];
}

export type Claim =
  | { outcome: 'claimed'; mail: ClaimedMail }
  /** Sent already, cancelled, failed for good, or not due yet. */
  | { outcome: 'skip'; reason: 'sent' | 'cancelled' | 'failed' | 'not_due' | 'unknown' }
  /**
   * Claimed by another worker now: one sending it, or one that died holding the claim; `lapsesInMs`
   * says when the claim lapses (by the database's clock).
   */
  | { outcome: 'skip'; reason: 'claimed'; lapsesInMs: number }
  /** A reminder no longer true (token revoked, or its expiry changed): cancelled now. */
  | { outcome: 'cancelled' };

/**
 * Claims an e-mail for sending for `leaseMs`: only a pending one that is due, or one whose earlier
 * claim lapsed. A reminder is checked against the token first: revoked or another expiry, and it is
 * cancelled rather than claimed; so is a reminder of an import or legacy export token whose recipient
 * is no longer its originator's manager nor an admin (an account with the admin role, or ADMIN_EMAILS).
 */
export async function claimMail(sql: Sql, key: string, leaseMs: number, options: ClaimOptions = {}): Promise<Claim> {
  return sql.begin(async (tx) => {
    const [row] = await tx<
      {
        key: string;
        kind: TokenMailKind;
        recipient: string;
        days_before: number | null;
        intent_expires_at: Date | null;
        revoked_by: 'owner' | 'admin' | null;
        due_at: Date;
        state: string;
        lapsed: boolean;
        claimed_until: Date | null;
        attempts: number;
        token_id: string;
        user_id: string | null;
        token_name: string;
        hint: string | null;
        created_at: Date;
        expires_at: Date | null;
        revoked_at: Date | null;
        user_name: string | null;
        email: string | null;
        generation: string;
        originator_id: string | null;
        originator_name: string | null;
        recipient_name: string | null;
        is_manager: boolean;
        is_admin: boolean;
        now: Date;
      }[]
    >`
      SELECT o.key, o.kind, o.recipient, o.days_before, o.expires_at AS intent_expires_at, o.revoked_by, o.due_at, o.state,
             (o.claimed_until IS NOT NULL AND o.claimed_until < clock_timestamp()) AS lapsed, o.claimed_until, o.attempts,
             t.id AS token_id, t.user_id, t.name AS token_name, t.hint, t.created_at, t.expires_at, t.revoked_at,
             u.name AS user_name, u.email, t.generation, t.originator_id, g.name AS originator_name,
             r.name AS recipient_name,
             EXISTS (SELECT 1 FROM originator_members m WHERE m.user_id = r.id AND m.originator_id = t.originator_id) AS is_manager,
             COALESCE(r.is_admin, false) AS is_admin,
             clock_timestamp() AS now
      FROM mail_outbox o JOIN tokens t ON t.id = o.token_id LEFT JOIN users u ON u.id = t.user_id
        LEFT JOIN originators g ON g.id = t.originator_id
        LEFT JOIN users r ON t.user_id IS NULL AND lower(r.email) = lower(o.recipient) AND r.deactivated_at IS NULL
      WHERE o.key = ${key}
      FOR UPDATE OF o`;
    if (!row) return { outcome: 'skip', reason: 'unknown' };
    const gated = claimGate(row);
    if (gated) return gated;
    // A second early: the job's delay and the database clock need not agree to the millisecond.
    if (row.due_at.getTime() > row.now.getTime() + 1000) return { outcome: 'skip', reason: 'not_due' };
    const credential = row.user_id === null;
    const isImport = row.generation === 'import_v1' || row.generation === 'import_v2';
    const recipientAs = !credential
      ? null
      : isImport && row.is_manager
        ? ('manager' as const)
        : row.is_admin || (options.adminEmails ?? []).some((a) => a.toLowerCase() === row.recipient.toLowerCase())
          ? ('admin' as const)
          : undefined;
    if (
      row.kind === 'expiring' &&
      (row.revoked_at !== null || row.expires_at?.getTime() !== row.intent_expires_at?.getTime() || recipientAs === undefined)
    ) {
      return cancelOutboxMail(tx, key);
    }
    await claimOutboxMail(tx, key, leaseMs);
    return {
      outcome: 'claimed',
      mail: {
        key: row.key,
        kind: row.kind,
        recipient: row.recipient,
        daysBefore: row.days_before,
        expiresAt: row.kind === 'expiring' ? row.intent_expires_at : row.expires_at,
        revokedBy: row.revoked_by,
        attempts: row.attempts + 1,
        dueAt: row.due_at,
        claimedAt: row.now,
        token: {
          id: String(row.token_id),
          userId: row.user_id,
          generation: row.generation,
          originator: row.originator_id === null ? null : { id: row.originator_id, name: row.originator_name ?? row.originator_id },
          name: row.token_name,
          hint: row.hint,
          createdAt: row.created_at,
          expiresAt: row.expires_at,
          revokedAt: row.revoked_at,
        },
        owner: credential ? { name: row.recipient_name, email: row.recipient } : { name: row.user_name, email: row.email ?? row.recipient },
        recipientAs: recipientAs ?? null,
      },
    };
  });
}

/** The e-mail was accepted by the SMTP server: the ledger says sent, for good. */
/** Why an outbox e-mail is not claimed now, whatever its kind: done with, or held by another worker's claim. */
export type ClaimGate = { outcome: 'skip'; reason: 'sent' | 'cancelled' | 'failed' } | { outcome: 'skip'; reason: 'claimed'; lapsesInMs: number };

/**
 * What claiming an outbox e-mail of a kind other than the token ones comes to: claimed with `M`, skipped
 * (done with, held by another worker, or no such e-mail: its subject was deleted with it), or cancelled
 * (its reason is gone: a subscription enabled again, an alert kept for another period).
 */
export type OutboxClaim<M> = { outcome: 'claimed'; mail: M } | ClaimGate | { outcome: 'skip'; reason: 'unknown' } | { outcome: 'cancelled' };

/**
 * The checks every kind of outbox e-mail passes before it is claimed, on its row read FOR UPDATE: one
 * sent, cancelled or failed is skipped; one another worker holds (its claim not lapsed) is skipped with
 * when the claim lapses (by the database's clock). Undefined: it may be claimed.
 */
export function claimGate(row: { state: string; lapsed: boolean; claimed_until: Date | null; now: Date }): ClaimGate | undefined {
  if (row.state === 'sent' || row.state === 'cancelled' || row.state === 'failed') return { outcome: 'skip', reason: row.state };
  if (row.state === 'sending' && !row.lapsed) {
    return { outcome: 'skip', reason: 'claimed', lapsesInMs: Math.max(0, (row.claimed_until?.getTime() ?? 0) - row.now.getTime()) };
  }
  return undefined;
}

/**
 * Claims an outbox e-mail of a kind other than the token ones from its row read FOR UPDATE (with what
 * its mail is made of): no row is `unknown`; `claimGate` decides the rest, then the row is cancelled
 * unless `due` says its reason holds, or claimed for `leaseMs` with the mail `mail` makes of it.
 */
export async function claimOutboxRow<R extends Parameters<typeof claimGate>[0], D extends R, M>(
  tx: Tx,
  key: string,
  row: R | undefined,
  leaseMs: number,
  due: (row: R) => row is D,
  mail: (row: D) => M,
): Promise<OutboxClaim<M>> {
  if (!row) return { outcome: 'skip', reason: 'unknown' };
  const gated = claimGate(row);
  if (gated) return gated;
  if (!due(row)) return cancelOutboxMail(tx, key);
  await claimOutboxMail(tx, key, leaseMs);
  return { outcome: 'claimed', mail: mail(row) };
}

/** An e-mail of the outbox that is no longer due (its reason is gone): cancelled, never sent. */
export async function cancelOutboxMail(tx: Tx | Sql, key: string): Promise<{ outcome: 'cancelled' }> {
  await tx`UPDATE mail_outbox SET state = 'cancelled', claimed_until = NULL WHERE key = ${key}`;
  return { outcome: 'cancelled' };
}

/** An e-mail of the outbox claimed for sending for `leaseMs` (another worker may take it once the claim lapses). */
export async function claimOutboxMail(tx: Tx | Sql, key: string, leaseMs: number): Promise<void> {
  await tx`
    UPDATE mail_outbox SET state = 'sending', claimed_until = clock_timestamp() + ${`${leaseMs} milliseconds`}::interval,
                           attempts = attempts + 1
    WHERE key = ${key}`;
}

export async function markMailSent(sql: Sql, key: string, messageId: string): Promise<void> {
  await sql`
    UPDATE mail_outbox SET state = 'sent', sent_at = clock_timestamp(), message_id = ${messageId}, claimed_until = NULL, last_error = NULL
    WHERE key = ${key}`;
}

/** Sending failed and will be tried again: the claim is let go at once, the error kept. */
export async function releaseMail(sql: Sql, key: string, error: string): Promise<void> {
  await sql`
    UPDATE mail_outbox SET state = 'pending', claimed_until = NULL, last_error = ${error.slice(0, 2000)}
    WHERE key = ${key} AND state = 'sending'`;
}

/** Sending failed for good (a permanent SMTP refusal, or every attempt used): listed for admins. */
export async function failMail(sql: Sql, key: string, error: string): Promise<void> {
  await sql`
    UPDATE mail_outbox SET state = 'failed', claimed_until = NULL, last_error = ${error.slice(0, 2000)}
    WHERE key = ${key} AND state IN ('pending', 'sending')`;
}

/** A page of the e-mails still to send (pending, or claimed), by id: what the sweep makes sure has a job. */
export async function unsentMail(sql: Sql, afterId: string, limit: number): Promise<{ id: string; key: string; due_at: Date }[]> {
  return sql<{ id: string; key: string; due_at: Date }[]>`
    SELECT id, key, due_at FROM mail_outbox
    WHERE state IN ('pending', 'sending') AND id > ${afterId}::bigint
    ORDER BY id LIMIT ${limit}`;
}

export interface MailListing {
  key: string;
  kind: TokenMailKind;
  token_id: string | null;
  recipient: string;
  due_at: Date;
  state: string;
  attempts: number;
  last_error: string | null;
  created_at: Date;
  sent_at: Date | null;
}

/** The outbox for admins, newest first, by state (e.g. `failed`). */
export async function listMail(sql: Sql, filter: { state?: string; token?: string; limit: number; offset: number }): Promise<MailListing[]> {
  return sql<MailListing[]>`
    SELECT key, kind, token_id::text, recipient, due_at, state, attempts, last_error, created_at, sent_at
    FROM mail_outbox
    WHERE (${filter.state ?? null}::text IS NULL OR state = ${filter.state ?? null})
      AND (${filter.token ?? null}::bigint IS NULL OR token_id = ${filter.token ?? null}::bigint)
    ORDER BY created_at DESC, id DESC
    LIMIT ${filter.limit} OFFSET ${filter.offset}`;
}
