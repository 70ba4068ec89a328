import type { Sql } from '../connect.js';

/** Asks PostgreSQL for the smallest answer it can give: whether the pool can reach the server. */
export async function pingDatabase(sql: Sql): Promise<void> {
  await sql`SELECT 1`;
}
