import type { Sql, Tx } from '../connect.js';

/** One call-log row as the worker writes it (the call-log job's payload). */
export interface CallLogRow {
  originator: string;
  /** ISO 8601 with an offset. */
  request_time: string;
  endpoint: string;
  station_ids: string[];
  status: number;
  request_body: string;
  response_body: string | null;
  error_details: unknown;
  request_id: string;
  /** The client's address (null: an entry written before it was kept). */
  client_address: string | null;
}

/** A stored entry as the admin API lists it. */
export interface CallLogListing extends Omit<CallLogRow, 'request_time'> {
  id: string;
  request_time: Date;
}

/**
 * Writes many entries in one statement, in the order given. Entries of an originator that no longer
 * exists are skipped (its log would have been deleted with it); returns how many rows were written.
 * Every string must be free of U+0000 and lone surrogates, which PostgreSQL refuses.
 */
export async function insertCallLogs(sql: Sql | Tx, rows: readonly CallLogRow[]): Promise<number> {
  if (rows.length === 0) return 0;
  // One JSON parameter whatever the batch size: no parameter limit, and per-row arrays need no
  // special encoding. Sent as text and cast here, so it is serialised exactly once.
  const result = await sql`
    INSERT INTO call_logs (originator_id, request_time, endpoint, station_ids, status, request_body, response_body, error_details, request_id, client_address)
    SELECT r.originator, r.request_time, r.endpoint, r.station_ids, r.status, r.request_body, r.response_body, r.error_details, r.request_id, r.client_address
    FROM ROWS FROM (
           jsonb_to_recordset(${JSON.stringify(rows)}::text::jsonb) AS (
             originator text, request_time timestamptz, endpoint text, station_ids text[], status smallint,
             request_body text, response_body text, error_details jsonb, request_id text, client_address text)
         ) WITH ORDINALITY AS r(originator, request_time, endpoint, station_ids, status, request_body, response_body, error_details, request_id, client_address, n)
    WHERE EXISTS (SELECT 1 FROM originators o WHERE o.id = r.originator)
    ORDER BY r.n`;
  return result.count;
}

/**
 * An originator's entries, newest first; `since` keeps those received at or after it, `pathPrefix`
 * those whose path starts with it (`/import/v1/`: one API family); `before` continues after an entry
 * (its request time and id).
 */
export async function listCallLogs(
  sql: Sql,
  filter: { originator: string; since?: Date | undefined; pathPrefix?: string | undefined; limit: number; before?: { time: Date; id: string } | undefined },
): Promise<CallLogListing[]> {
  return sql<CallLogListing[]>`
    SELECT id, originator_id AS originator, request_time, endpoint, station_ids, status,
           request_body, response_body, error_details, request_id, client_address
    FROM call_logs
    WHERE originator_id = ${filter.originator}
      ${filter.since ? sql`AND request_time >= ${filter.since}` : sql``}
      ${filter.pathPrefix ? sql`AND starts_with(split_part(endpoint, ' ', 2), ${filter.pathPrefix})` : sql``}
      ${filter.before ? sql`AND (request_time, id) < (${filter.before.time}, ${filter.before.id}::bigint)` : sql``}
    ORDER BY request_time DESC, id DESC
    LIMIT ${filter.limit}`;
}
