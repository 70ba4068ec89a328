import type { Sql } from '../connect.js';

/**
 * What identifies this database among all PostgreSQL databases: the cluster's system identifier (made
 * by initdb, the same on every physical replica and in every base backup restored) and the database's
 * oid within the cluster. Readable by any role.
 */
export async function databaseIdentity(sql: Sql): Promise<{ systemIdentifier: string; databaseOid: string }> {
  const [row] = await sql<{ system_identifier: string; oid: string }[]>`
    SELECT (SELECT system_identifier::text FROM pg_control_system()) AS system_identifier,
           (SELECT oid::text FROM pg_database WHERE datname = current_database()) AS oid`;
  return { systemIdentifier: row!.system_identifier, databaseOid: row!.oid };
}
