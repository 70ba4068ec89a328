import type { Sql } from '../connect.js';

/*
 * What the expiry reminders of import and legacy export tokens read (src/registry/credential-reminders.ts),
 * and the admins' dashboard's list of tokens expiring soon (src/push/expiring-tokens.ts). Token values and
 * hashes are never read here.
 */

/** An import or legacy export token near its expiry, with its originator's active managers. */
export interface CredentialNearExpiry {
  id: string;
  generation: 'import_v1' | 'import_v2' | 'export_v1';
  name: string;
  hint: string | null;
  created_at: Date;
  expires_at: Date;
  originator_id: string | null;
  /** The addresses of the originator's managers whose accounts are active. */
  managers: string[];
}

/**
 * The import and legacy export tokens in use (not revoked, not expired, their originator not
 * deactivated) that expire within `horizonMs` of `now`.
 */
export async function credentialsNearExpiry(sql: Sql, now: Date, horizonMs: number): Promise<CredentialNearExpiry[]> {
  return sql<CredentialNearExpiry[]>`
    SELECT t.id::text, t.generation, t.name, t.hint, t.created_at, t.expires_at, t.originator_id,
           COALESCE((SELECT array_agg(u.email ORDER BY u.email) FROM originator_members m JOIN users u ON u.id = m.user_id
                     WHERE m.originator_id = t.originator_id AND u.deactivated_at IS NULL), '{}') AS managers
    FROM tokens t LEFT JOIN originators o ON o.id = t.originator_id
    WHERE t.generation IN ('import_v1', 'import_v2', 'export_v1') AND t.revoked_at IS NULL
      AND t.expires_at > ${now} AND t.expires_at <= ${new Date(now.getTime() + horizonMs)}
      AND o.deactivated_at IS NULL
    ORDER BY t.expires_at, t.id`;
}

/** The addresses of the active accounts with the admin role. */
export async function adminAccountEmails(sql: Sql): Promise<string[]> {
  const rows = await sql<{ email: string }[]>`SELECT email FROM users WHERE is_admin AND deactivated_at IS NULL ORDER BY email`;
  return rows.map((r) => r.email);
}

/** A token the admins' dashboard lists as expiring soon. */
export interface ExpiringTokenRow {
  id: string;
  generation: string;
  name: string;
  hint: string | null;
  expires_at: Date;
  originator_id: string | null;
  originator_name: string | null;
  user_id: string | null;
  user_email: string | null;
  /** `portal` (made on the portal: it has a hint) or `registry` (loaded from a registry file). */
  source: 'portal' | 'registry';
}

/**
 * Every token in use (not revoked, its owner not deactivated) that expires within `withinMs` of `now`,
 * soonest first, at most `limit`.
 */
export async function expiringTokens(sql: Sql, now: Date, withinMs: number, limit: number): Promise<ExpiringTokenRow[]> {
  return sql<ExpiringTokenRow[]>`
    SELECT t.id::text, t.generation, t.name, t.hint, t.expires_at, t.originator_id, o.name AS originator_name,
           t.user_id, u.email AS user_email, CASE WHEN t.hint IS NULL THEN 'registry' ELSE 'portal' END AS source
    FROM tokens t LEFT JOIN originators o ON o.id = t.originator_id LEFT JOIN users u ON u.id = t.user_id
    WHERE t.revoked_at IS NULL AND t.expires_at > ${now} AND t.expires_at <= ${new Date(now.getTime() + withinMs)}
      AND o.deactivated_at IS NULL AND u.deactivated_at IS NULL
    ORDER BY t.expires_at, t.id
    LIMIT ${limit}`;
}
