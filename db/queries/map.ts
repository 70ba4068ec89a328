import type { Sql } from '../connect.js';
import { wholeRegistryRead } from '../deadline.js';

/*
 * What the public map shows of each production station beyond the registry cache: its operator's name,
 * its address as given in its details, and the version of its static content. Read once per registry
 * reload (src/api/map/), never per request.
 */

export interface MapStationRow {
  hrs_id: string;
  operator_name: string;
  /** `details.address`: a line of text, or an object (street, house_number, postal_code, city, country); null when absent. */
  address: unknown;
  /**
   * `details.country`, `details.postcode` and `details.city`, which some registries give beside (or
   * instead of) the address: v1.1's static (AFIR) details carry the city at their top level.
   */
  country: unknown;
  postcode: unknown;
  city: unknown;
  /** `static_modified_at`, epoch ms. */
  modified_ms: number;
}

/** Every production station's operator, address and version, by hrs_id, in one statement. */
export async function mapStationRows(pool: Sql): Promise<MapStationRow[]> {
  // Every station: under the bound of a read over the whole registry, not DATABASE_TIMEOUT.
  const rows = await wholeRegistryRead(pool, (sql) => sql<(Omit<MapStationRow, 'modified_ms'> & { modified_ms: string })[]>`
    SELECT s.hrs_id, o.name AS operator_name,
           s.details -> 'address' AS address, s.details -> 'country' AS country, s.details -> 'postcode' AS postcode,
           s.details -> 'city' AS city,
           floor(extract(epoch FROM s.static_modified_at) * 1000)::bigint AS modified_ms
    FROM stations s JOIN operators o ON o.id = s.operator_id
    WHERE NOT s.sandbox
    ORDER BY s.hrs_id`);
  return rows.map((row) => ({ ...row, modified_ms: Number(row.modified_ms) }));
}
