import type { Sql } from '../connect.js';

export interface TokenListing {
  id: string;
  generation: string;
  originator: string | null;
  user: string | null;
  name: string;
  created_at: Date;
  expires_at: Date | null;
  revoked_at: Date | null;
  last_used_at: Date | null;
}

/** Token metadata (never a hash or value), newest first. */
export async function listTokens(sql: Sql, filter: { originator?: string; user?: string; generation?: string }): Promise<TokenListing[]> {
  return sql<TokenListing[]>`
    SELECT id, generation, originator_id AS originator, user_id AS user, name, created_at, expires_at, revoked_at, last_used_at
    FROM tokens
    WHERE (${filter.originator ?? null}::text IS NULL OR originator_id = ${filter.originator ?? null})
      AND (${filter.user ?? null}::text IS NULL OR user_id = ${filter.user ?? null})
      AND (${filter.generation ?? null}::text IS NULL OR generation = ${filter.generation ?? null})
    ORDER BY created_at DESC, id DESC`;
}

/** Revokes a token; revocation is final. Returns false when there is no such token. */
export async function revokeToken(sql: Sql, id: string): Promise<TokenListing | undefined> {
  const [row] = await sql<TokenListing[]>`
    UPDATE tokens SET revoked_at = COALESCE(revoked_at, clock_timestamp()) WHERE id = ${id}
    RETURNING id, generation, originator_id AS originator, user_id AS user, name, created_at, expires_at, revoked_at, last_used_at`;
  return row;
}
