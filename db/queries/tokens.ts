import type { Sql } from '../connect.js';
import type { Generation } from '../../src/domain/vocabulary.js';

/** A token as authentication checks it, with whether its originator or user has been deactivated. */
export interface TokenRow {
  id: string;
  generation: Generation;
  originator_id: string | null;
  user_id: string | null;
  name: string;
  expires_at: Date | null;
  revoked_at: Date | null;
  owner_deactivated: boolean;
}

/** The token whose value hashes to `hash` (SHA-256), if any: looked up by the hash alone. */
export async function findTokenByHash(sql: Sql, hash: Buffer): Promise<TokenRow | undefined> {
  const [row] = await sql<TokenRow[]>`
    SELECT t.id, t.generation, t.originator_id, t.user_id, t.name, t.expires_at, t.revoked_at,
           (o.deactivated_at IS NOT NULL OR u.deactivated_at IS NOT NULL) AS owner_deactivated
    FROM tokens t
    LEFT JOIN originators o ON o.id = t.originator_id
    LEFT JOIN users u ON u.id = t.user_id
    WHERE t.hash = ${hash}`;
  return row;
}

/**
 * Records when tokens were last used, in one statement: `times[i]` for `ids[i]`. A stored time later
 * than the one given is kept (the writes of several instances may arrive in any order).
 */
export async function recordTokensUsed(sql: Sql, ids: readonly string[], times: readonly Date[]): Promise<void> {
  await sql`
    UPDATE tokens t SET last_used_at = GREATEST(t.last_used_at, u.at)
    FROM unnest(${ids as string[]}::bigint[], ${times.map((at) => at.toISOString())}::timestamptz[]) AS u(id, at)
    WHERE t.id = u.id`;
}

export interface TokenListing {
  id: string;
  generation: string;
  originator: string | null;
  user: string | null;
  name: string;
  created_at: Date;
  expires_at: Date | null;
  revoked_at: Date | null;
  /** Who revoked it (`owner`, `admin`); null when not revoked or revoked before this was recorded. */
  revoked_by: string | null;
  /** The value's last four characters, for tokens the platform made (null for those loaded from a registry file). */
  hint: string | null;
  last_used_at: Date | null;
}

/** Token metadata (never a hash or value), newest first. */
export async function listTokens(sql: Sql, filter: { id?: string; originator?: string; user?: string; generation?: string }): Promise<TokenListing[]> {
  return sql<TokenListing[]>`
    SELECT id, generation, originator_id AS originator, user_id AS user, name, created_at, expires_at, revoked_at, revoked_by, hint, last_used_at
    FROM tokens
    WHERE (${filter.id ?? null}::bigint IS NULL OR id = ${filter.id ?? null}::bigint)
      AND (${filter.originator ?? null}::text IS NULL OR originator_id = ${filter.originator ?? null})
      AND (${filter.user ?? null}::text IS NULL OR user_id = ${filter.user ?? null})
      AND (${filter.generation ?? null}::text IS NULL OR generation = ${filter.generation ?? null})
    ORDER BY created_at DESC, id DESC`;
}
