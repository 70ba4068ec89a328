import type { Sql, Tx } from '../connect.js';

/*
 * Personal (export v2) tokens as their owners and admins manage them: created, listed, their expiry
 * changed, revoked. Every change runs in a transaction the caller opens, so the e-mail intents it
 * causes (db/queries/token-mail.ts) commit with it or not at all.
 */

export interface PersonalTokenRow {
  id: string;
  user_id: string;
  name: string;
  hint: string | null;
  created_at: Date;
  expires_at: Date | null;
  revoked_at: Date | null;
  revoked_by: 'owner' | 'admin' | null;
  last_used_at: Date | null;
}

const COLUMNS = 'id::text, user_id, name, hint, created_at, expires_at, revoked_at, revoked_by, last_used_at';

/** The user's e-mail address and name; undefined when there is no such user, `deactivated` when deactivated. */
export async function tokenOwner(tx: Tx | Sql, userId: string): Promise<{ email: string; name: string | null; deactivated: boolean } | undefined> {
  const [row] = await tx<{ email: string; name: string | null; deactivated: boolean }[]>`
    SELECT email, name, deactivated_at IS NOT NULL AS deactivated FROM users WHERE id = ${userId}`;
  return row;
}

/** Serialises token changes of one user (the active-token limit is checked under it). */
export async function lockUserTokens(tx: Tx, userId: string): Promise<void> {
  await tx`SELECT pg_advisory_xact_lock(hashtext('hrs:user-tokens'), hashtext(${userId}))`;
}

/** How many personal tokens of the user are active (neither revoked nor expired) at `now`. */
export async function activePersonalTokens(tx: Tx | Sql, userId: string, now: Date): Promise<number> {
  const [row] = await tx<{ n: number }[]>`
    SELECT count(*)::int AS n FROM tokens
    WHERE generation = 'export_v2' AND user_id = ${userId} AND revoked_at IS NULL AND (expires_at IS NULL OR expires_at > ${now})`;
  return row?.n ?? 0;
}

export async function insertPersonalToken(
  tx: Tx,
  t: { userId: string; name: string; hash: Buffer; hint: string; expiresAt: Date },
): Promise<PersonalTokenRow> {
  const [row] = await tx<PersonalTokenRow[]>`
    INSERT INTO tokens (generation, user_id, name, hash, hint, expires_at)
    VALUES ('export_v2', ${t.userId}, ${t.name}, ${t.hash}, ${t.hint}, ${t.expiresAt})
    RETURNING ${tx.unsafe(COLUMNS)}`;
  return row!;
}

/** One personal token, locked for the change that follows; undefined when there is none of that id (for that user, when given). */
export async function personalTokenForUpdate(tx: Tx, id: string, userId?: string): Promise<PersonalTokenRow | undefined> {
  const [row] = await tx<PersonalTokenRow[]>`
    SELECT ${tx.unsafe(COLUMNS)} FROM tokens
    WHERE id = ${id}::bigint AND generation = 'export_v2' AND (${userId ?? null}::text IS NULL OR user_id = ${userId ?? null})
    FOR UPDATE`;
  return row;
}

export async function setTokenExpiry(tx: Tx, id: string, expiresAt: Date): Promise<PersonalTokenRow> {
  const [row] = await tx<PersonalTokenRow[]>`
    UPDATE tokens SET expires_at = ${expiresAt} WHERE id = ${id}::bigint RETURNING ${tx.unsafe(COLUMNS)}`;
  return row!;
}

/**
 * Revokes a token of any generation (final): the first revocation's time and author stay. `newly`
 * says whether this call revoked it (a second revocation changes nothing and tells nobody).
 */
export async function setTokenRevoked(
  tx: Tx,
  id: string,
  by: 'owner' | 'admin',
): Promise<{ generation: string; user_id: string | null; newly: boolean } | undefined> {
  const [row] = await tx<{ generation: string; user_id: string | null; newly: boolean }[]>`
    WITH before AS (SELECT id, revoked_at FROM tokens WHERE id = ${id}::bigint FOR UPDATE)
    UPDATE tokens t SET revoked_at = COALESCE(t.revoked_at, clock_timestamp()), revoked_by = COALESCE(t.revoked_by, ${by})
    FROM before b WHERE t.id = b.id
    RETURNING t.generation, t.user_id, b.revoked_at IS NULL AS newly`;
  return row;
}

/** The user's personal tokens, newest first. */
export async function userPersonalTokens(sql: Sql, userId: string): Promise<PersonalTokenRow[]> {
  return sql<PersonalTokenRow[]>`
    SELECT ${sql.unsafe(COLUMNS)} FROM tokens WHERE generation = 'export_v2' AND user_id = ${userId}
    ORDER BY created_at DESC, id DESC`;
}
