import { CATEGORIES, type Category } from '../../src/domain/categories/index.js';
import type { Sql } from '../connect.js';

export type ActiveStations = Record<Category, { live: string[]; testing: string[] }>;

/** The stations an originator is assigned to, per v2 signal type and state, sorted. */
export async function activeStations(sql: Sql, originatorId: string): Promise<ActiveStations> {
  const rows = await sql<{ signal_type: Category; state: 'live' | 'testing'; hrs_id: string }[]>`
    SELECT signal_type, state, hrs_id FROM assignments
    WHERE originator_id = ${originatorId} AND signal_type <> 'v1'
    ORDER BY hrs_id`;
  const result = Object.fromEntries(CATEGORIES.map((t) => [t, { live: [], testing: [] }])) as unknown as ActiveStations;
  for (const row of rows) result[row.signal_type][row.state].push(row.hrs_id);
  return result;
}

/**
 * The stations an import v1/v1.1 originator reports on, by transmission state (`inactive` ones are
 * left out), sorted: `GET /import/v1.1/active-stations`.
 */
export async function activeStationsV1(sql: Sql, originatorId: string): Promise<{ live: string[]; testing: string[] }> {
  const rows = await sql<{ state: 'live' | 'testing'; hrs_id: string }[]>`
    SELECT state, hrs_id FROM assignments
    WHERE originator_id = ${originatorId} AND signal_type = 'v1' AND state IN ('live', 'testing')
    ORDER BY hrs_id COLLATE "C"`;
  const result = { live: [] as string[], testing: [] as string[] };
  for (const row of rows) result[row.state].push(row.hrs_id);
  return result;
}
