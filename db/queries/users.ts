import type { Sql } from '../connect.js';

/* Portal accounts (`users`) as admins manage them. */

export interface UserListing {
  id: string;
  email: string;
  name: string | null;
  created_at: Date;
  deactivated_at: Date | null;
  active_tokens: number;
}

const LISTING = `u.id, u.email, u.name, u.created_at, u.deactivated_at,
  (SELECT count(*)::int FROM tokens t WHERE t.user_id = u.id AND t.generation = 'export_v2' AND t.revoked_at IS NULL
     AND (t.expires_at IS NULL OR t.expires_at > clock_timestamp())) AS active_tokens`;

/** Creates an account; undefined when the address (compared without case) or the id is taken already. */
export async function insertUser(sql: Sql, u: { id: string; email: string; name: string | null }): Promise<UserListing | undefined> {
  const [row] = await sql<UserListing[]>`
    WITH added AS (
      INSERT INTO users (id, email, name) SELECT ${u.id}, ${u.email}, ${u.name}
      WHERE NOT EXISTS (SELECT 1 FROM users WHERE lower(email) = lower(${u.email}))
      ON CONFLICT DO NOTHING
      RETURNING *)
    SELECT u.id, u.email, u.name, u.created_at, u.deactivated_at, 0 AS active_tokens FROM added u`;
  return row;
}

export async function listUsers(sql: Sql, filter: { email?: string }): Promise<UserListing[]> {
  return sql<UserListing[]>`
    SELECT ${sql.unsafe(LISTING)} FROM users u
    WHERE (${filter.email ?? null}::text IS NULL OR lower(u.email) = lower(${filter.email ?? null}))
    ORDER BY u.created_at DESC, u.id`;
}

/** Deactivates (or, `active`, reactivates) an account; undefined when there is none. */
export async function setUserActive(sql: Sql, id: string, active: boolean): Promise<UserListing | undefined> {
  // Two statements: a data-modifying CTE's own SELECT would show the row as it was before the change.
  const rows = await sql.begin(async (tx) => {
    const changed = await tx`
      UPDATE users SET deactivated_at = CASE WHEN ${active} THEN NULL ELSE COALESCE(deactivated_at, clock_timestamp()) END
      WHERE id = ${id} RETURNING id`;
    if (changed.length === 0) return [];
    return tx<UserListing[]>`SELECT ${tx.unsafe(LISTING)} FROM users u WHERE u.id = ${id}`;
  });
  return (rows as UserListing[])[0];
}
