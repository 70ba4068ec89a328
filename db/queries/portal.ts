import type { Sql, Tx } from '../connect.js';
import type { Clock } from '../../src/config/clock.js';
import { clockNow } from './clock.js';

/*
 * The portal's sign-in links, sessions and reveal links (migration 0007); every secret by its SHA-256.
 * Links and sessions expire by the platform's clock (`clockNow`).
 */

export interface PortalUser {
  id: string;
  email: string;
  name: string | null;
}

/**
 * Stores a sign-in link for the active account with this address (compared without case) and returns
 * the account; undefined (nothing stored) when there is none or it is deactivated. One statement
 * either way, so a known address and an unknown one cost the same round trip.
 */
export async function insertSignInLinkFor(sql: Sql, email: string, hash: Buffer, ttlMs: number, clock: Clock): Promise<PortalUser | undefined> {
  const [row] = await sql<PortalUser[]>`
    WITH account AS (
      SELECT id, email, name FROM users WHERE lower(email) = lower(${email}) AND deactivated_at IS NULL
    ), link AS (
      INSERT INTO sign_in_links (hash, user_id, expires_at)
      SELECT ${hash}, id, ${clockNow(sql, clock)} + ${`${ttlMs} milliseconds`}::interval FROM account
      RETURNING user_id
    )
    SELECT account.id, account.email, account.name FROM account JOIN link ON link.user_id = account.id`;
  return row;
}

/**
 * Uses a sign-in link and opens a session in one transaction: only an unused, unexpired link of an
 * active account. Undefined when the link cannot be used.
 */
export async function consumeSignInLink(
  sql: Sql,
  linkHash: Buffer,
  session: { hash: Buffer; maxMs: number },
  clock: Clock,
): Promise<{ user: PortalUser; expiresAt: Date } | undefined> {
  return sql.begin(async (tx) => {
    const [link] = await tx<{ user_id: string }[]>`
      UPDATE sign_in_links l SET used_at = ${clockNow(tx, clock)}
      FROM users u
      WHERE l.hash = ${linkHash} AND l.used_at IS NULL AND l.expires_at > ${clockNow(tx, clock)}
        AND u.id = l.user_id AND u.deactivated_at IS NULL
      RETURNING l.user_id`;
    if (!link) return undefined;
    const [row] = await tx<(PortalUser & { expires_at: Date })[]>`
      WITH opened AS (
        INSERT INTO portal_sessions (hash, user_id, last_seen_at, expires_at)
        VALUES (${session.hash}, ${link.user_id}, ${clockNow(tx, clock)}, ${clockNow(tx, clock)} + ${`${session.maxMs} milliseconds`}::interval)
        RETURNING user_id, expires_at)
      SELECT u.id, u.email, u.name, o.expires_at FROM opened o JOIN users u ON u.id = o.user_id`;
    const { expires_at, ...user } = row!;
    return { user, expiresAt: expires_at };
  });
}

/**
 * The session's account when the session is open: not revoked, within its absolute and idle timeouts,
 * the account active. Its last use is written when older than `touchAfterMs` (not on every request).
 */
export async function openSession(sql: Sql, hash: Buffer, idleMs: number, touchAfterMs: number, clock: Clock): Promise<PortalUser | undefined> {
  const [row] = await sql<PortalUser[]>`
    WITH found AS (
      SELECT s.hash, s.last_seen_at FROM portal_sessions s JOIN users u ON u.id = s.user_id
      WHERE s.hash = ${hash} AND s.revoked_at IS NULL AND s.expires_at > ${clockNow(sql, clock)}
        AND s.last_seen_at > ${clockNow(sql, clock)} - ${`${idleMs} milliseconds`}::interval
        AND u.deactivated_at IS NULL),
    touched AS (
      UPDATE portal_sessions s SET last_seen_at = ${clockNow(sql, clock)}
      FROM found f WHERE s.hash = f.hash AND f.last_seen_at < ${clockNow(sql, clock)} - ${`${touchAfterMs} milliseconds`}::interval)
    SELECT u.id, u.email, u.name FROM found f JOIN portal_sessions s ON s.hash = f.hash JOIN users u ON u.id = s.user_id`;
  return row;
}

export async function closeSession(sql: Sql, hash: Buffer): Promise<void> {
  await sql`UPDATE portal_sessions SET revoked_at = COALESCE(revoked_at, clock_timestamp()) WHERE hash = ${hash}`;
}

/** Every open session of the account is closed (deactivation). */
export async function closeUserSessions(sql: Sql | Tx, userId: string): Promise<number> {
  const rows = await sql`UPDATE portal_sessions SET revoked_at = clock_timestamp() WHERE user_id = ${userId} AND revoked_at IS NULL RETURNING hash`;
  return rows.length;
}

export async function insertRevealLink(
  sql: Sql,
  link: { hash: Buffer; userId: string; tokenName: string; tokenExpiresAt: Date; ttlMs: number },
): Promise<Date> {
  const [row] = await sql<{ expires_at: Date }[]>`
    INSERT INTO reveal_links (hash, user_id, token_name, token_expires_at, expires_at)
    VALUES (${link.hash}, ${link.userId}, ${link.tokenName}, ${link.tokenExpiresAt}, clock_timestamp() + ${`${link.ttlMs} milliseconds`}::interval)
    RETURNING expires_at`;
  return row!.expires_at;
}

/** The reveal link, locked, when it can still be used. */
export async function usableRevealLink(tx: Tx, hash: Buffer): Promise<{ user_id: string; token_name: string; token_expires_at: Date } | undefined> {
  const [row] = await tx<{ user_id: string; token_name: string; token_expires_at: Date }[]>`
    SELECT user_id, token_name, token_expires_at FROM reveal_links
    WHERE hash = ${hash} AND used_at IS NULL AND expires_at > clock_timestamp()
    FOR UPDATE`;
  return row;
}

export async function markRevealLinkUsed(tx: Tx, hash: Buffer, tokenId: string): Promise<void> {
  await tx`UPDATE reveal_links SET used_at = clock_timestamp(), token_id = ${tokenId}::bigint WHERE hash = ${hash}`;
}
