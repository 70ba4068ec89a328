import type { Sql, Tx } from '../connect.js';

/* Portal roles (migration 0008): the admin flag, operator staff and originator managers. */

type Db = Sql | Tx;

export interface Named {
  id: string;
  name: string;
}

export interface UserRoles {
  admin: boolean;
  operators: Named[];
  originators: Named[];
}

/** An account's roles; undefined when there is no such account. */
export async function userRoles(db: Db, userId: string): Promise<UserRoles | undefined> {
  const [row] = await db<{ admin: boolean; operators: Named[]; originators: Named[] }[]>`
    SELECT u.is_admin AS admin,
      COALESCE((SELECT json_agg(json_build_object('id', o.id, 'name', o.name) ORDER BY o.id)
                FROM operator_members m JOIN operators o ON o.id = m.operator_id WHERE m.user_id = u.id), '[]') AS operators,
      COALESCE((SELECT json_agg(json_build_object('id', o.id, 'name', o.name) ORDER BY o.id)
                FROM originator_members m JOIN originators o ON o.id = m.originator_id WHERE m.user_id = u.id), '[]') AS originators
    FROM users u WHERE u.id = ${userId}`;
  return row;
}

/** The account's roles become exactly these (the ids exist: checked by the caller). */
export async function replaceUserRoles(tx: Tx, userId: string, roles: { admin: boolean; operators: string[]; originators: string[] }): Promise<void> {
  await tx`UPDATE users SET is_admin = ${roles.admin} WHERE id = ${userId}`;
  await tx`DELETE FROM operator_members WHERE user_id = ${userId} AND operator_id <> ALL(${roles.operators})`;
  await tx`DELETE FROM originator_members WHERE user_id = ${userId} AND originator_id <> ALL(${roles.originators})`;
  if (roles.operators.length > 0) {
    await tx`INSERT INTO operator_members ${tx(roles.operators.map((operator_id) => ({ user_id: userId, operator_id })))} ON CONFLICT DO NOTHING`;
  }
  if (roles.originators.length > 0) {
    await tx`INSERT INTO originator_members ${tx(roles.originators.map((originator_id) => ({ user_id: userId, originator_id })))} ON CONFLICT DO NOTHING`;
  }
}

/**
 * The roles a registry file gives an account: each one given replaces what the account has, each one
 * left out is kept. True when something changed.
 */
export async function replaceUserRolesGiven(
  tx: Tx,
  userId: string,
  roles: { admin?: boolean | undefined; operators?: readonly string[] | undefined; originators?: readonly string[] | undefined },
): Promise<boolean> {
  let changed = false;
  if (roles.admin !== undefined) {
    changed = (await tx`UPDATE users SET is_admin = ${roles.admin} WHERE id = ${userId} AND is_admin <> ${roles.admin} RETURNING id`).length > 0;
  }
  for (const [table, column, ids] of [
    ['operator_members', 'operator_id', roles.operators],
    ['originator_members', 'originator_id', roles.originators],
  ] as const) {
    if (ids === undefined) continue;
    const removed = await tx`DELETE FROM ${tx(table)} WHERE user_id = ${userId} AND ${tx(column)} <> ALL(${[...ids]}) RETURNING user_id`;
    const added = ids.length === 0 ? [] : await tx`
      INSERT INTO ${tx(table)} ${tx(ids.map((id) => ({ user_id: userId, [column]: id })))} ON CONFLICT DO NOTHING RETURNING user_id`;
    if (removed.length + added.length > 0) changed = true;
  }
  return changed;
}

/** Which of these ids are operators (or originators). */
export async function knownIds(db: Db, table: 'operators' | 'originators', ids: readonly string[]): Promise<Set<string>> {
  if (ids.length === 0) return new Set();
  const rows = await db<{ id: string }[]>`SELECT id FROM ${db(table)} WHERE id = ANY(${[...ids]})`;
  return new Set(rows.map((r) => r.id));
}

