import type { Sql } from '../connect.js';
import { wholeRegistryRead } from '../deadline.js';

/*
 * Export reads of stations: the list's page heads, whole station records with their confirmed layout,
 * events, photos. Every read by list or id takes `sandbox`: false (the default) sees production
 * stations only, true the export v1.1 sandbox's sample stations only. Times that serve as versions (`static_modified_at`, `station_set.modified_at`)
 * are read as whole microseconds since the epoch: exact (a JavaScript Date keeps milliseconds only),
 * and below 2^53, so a plain number holds them.
 */

/** A station's id and the version of its exported static content (`static_modified_at`, µs since the epoch). */
export interface StationHead {
  hrsId: string;
  modifiedUs: number;
}

export interface StationPageHeads {
  /** How many stations there are in all; null when the caller already knows it (see `knownCount`). */
  count: number | null;
  /** `station_set.modified_at` (µs since the epoch): moves when a station is added or removed. */
  setModifiedUs: number;
  /** The page's stations, by hrs_id. */
  stations: StationHead[];
}

/**
 * One page of the station list, by hrs_id, with the station set's version and the total count: one
 * statement, so they are one snapshot. The count is only counted when the set's version is not
 * `knownCount.setModifiedUs` (the set's version moves with every addition and removal, so the caller's
 * count for that version still holds): counting scans the whole table, the page only its index.
 */
export async function stationPageHeads(
  sql: Sql,
  limit: number,
  offset: number,
  knownCount?: { setModifiedUs: number },
  sandbox = false,
): Promise<StationPageHeads> {
  const rows = await sql<{ count: number | null; set_us: string; hrs_id: string | null; us: string | null }[]>`
    SELECT c.count, c.set_us, p.hrs_id, p.us
    FROM (SELECT ss.set_us,
                 CASE WHEN ss.set_us = ${knownCount?.setModifiedUs ?? -1}::bigint THEN NULL
                      ELSE (SELECT count(*) FROM stations WHERE sandbox = ${sandbox})::int END AS count
          FROM (SELECT (extract(epoch FROM modified_at) * 1000000)::bigint AS set_us FROM station_set) ss) c
    LEFT JOIN LATERAL (
      SELECT hrs_id, (extract(epoch FROM static_modified_at) * 1000000)::bigint AS us
      FROM stations WHERE sandbox = ${sandbox} ORDER BY hrs_id LIMIT ${limit} OFFSET ${offset}::bigint
    ) p ON true
    ORDER BY p.hrs_id`;
  const first = rows[0];
  return {
    count: first?.count ?? null,
    setModifiedUs: Number(first?.set_us ?? 0),
    stations: rows.flatMap((row) => (row.hrs_id === null ? [] : [{ hrsId: row.hrs_id, modifiedUs: Number(row.us) }])),
  };
}

/**
 * The version of one page of the list without the page: the station set's version and the newest
 * version among the page's stations (null for an empty page). What a conditional request needs.
 */
export async function stationPageVersion(
  sql: Sql,
  limit: number,
  offset: number,
  sandbox = false,
): Promise<{ setModifiedUs: number; newestUs: number | null }> {
  const [row] = await sql<{ set_us: string; newest_us: string | null }[]>`
    SELECT ss.set_us,
           (SELECT (extract(epoch FROM max(static_modified_at)) * 1000000)::bigint
            FROM (SELECT static_modified_at FROM stations WHERE sandbox = ${sandbox} ORDER BY hrs_id LIMIT ${limit} OFFSET ${offset}::bigint) p) AS newest_us
    FROM (SELECT (extract(epoch FROM modified_at) * 1000000)::bigint AS set_us FROM station_set) ss`;
  return { setModifiedUs: Number(row?.set_us ?? 0), newestUs: row?.newest_us == null ? null : Number(row.newest_us) };
}

/**
 * The versions of the listed production stations (those that still exist; in no particular order), the
 * station set's version, and the newest version of any production station: one statement, so they are
 * one snapshot. What a geo query's page needs (its stations come from the spatial index in memory, not
 * from a page of the table): the newest version overall is its `Last-Modified`, because a station
 * whose coordinates change moves into or out of a filtered list without the set's version moving.
 */
export async function stationHeadsOf(
  sql: Sql,
  hrsIds: readonly string[],
): Promise<{ setModifiedUs: number; newestUs: number; stations: StationHead[] }> {
  const rows = await sql<{ set_us: string | null; newest_us: string | null; hrs_id: string | null; us: string | null }[]>`
    SELECT * FROM (
      SELECT (extract(epoch FROM ss.modified_at) * 1000000)::bigint AS set_us,
             (SELECT (extract(epoch FROM max(static_modified_at)) * 1000000)::bigint FROM stations WHERE NOT sandbox) AS newest_us,
             NULL::text AS hrs_id, NULL::bigint AS us
      FROM station_set ss
      UNION ALL
      SELECT NULL, NULL, hrs_id, (extract(epoch FROM static_modified_at) * 1000000)::bigint
      FROM stations WHERE NOT sandbox AND hrs_id = ANY(${hrsIds as string[]}::text[])
    ) heads
    ORDER BY hrs_id NULLS FIRST`;
  const head = rows[0];
  return {
    setModifiedUs: Number(head?.set_us ?? 0),
    newestUs: Number(head?.newest_us ?? 0),
    stations: rows.flatMap((row) => (row.hrs_id === null ? [] : [{ hrsId: row.hrs_id, modifiedUs: Number(row.us) }])),
  };
}

/** One station's version, or undefined when there is no such station. */
export async function stationHead(sql: Sql, hrsId: string, sandbox = false): Promise<StationHead | undefined> {
  const [row] = await sql<{ us: string }[]>`
    SELECT (extract(epoch FROM static_modified_at) * 1000000)::bigint AS us FROM stations WHERE hrs_id = ${hrsId} AND sandbox = ${sandbox}`;
  return row ? { hrsId, modifiedUs: Number(row.us) } : undefined;
}

/**
 * Every production station's version with the station set's, by hrs_id, in one statement: what the
 * DATEX II table needs to tell which stations to read again.
 */
export async function allStationHeads(sql: Sql): Promise<{ setModifiedUs: number; stations: StationHead[] }> {
  // Two plain scans in one statement (no join: an unanalysed station_set would make the planner guess a
  // cost that compiles the query with JIT on every call, a hundred times its work).
  const rows = await sql<{ set_us: string | null; hrs_id: string | null; us: string | null }[]>`
    SELECT * FROM (
      SELECT (extract(epoch FROM modified_at) * 1000000)::bigint AS set_us, NULL::text AS hrs_id, NULL::bigint AS us FROM station_set
      UNION ALL
      SELECT NULL, hrs_id, (extract(epoch FROM static_modified_at) * 1000000)::bigint FROM stations WHERE NOT sandbox
    ) heads
    ORDER BY hrs_id COLLATE "C" NULLS FIRST`;
  return {
    setModifiedUs: Number(rows[0]?.set_us ?? 0),
    stations: rows.flatMap((row) => (row.hrs_id === null ? [] : [{ hrsId: row.hrs_id, modifiedUs: Number(row.us) }])),
  };
}

/** How many stations' rows `stationHeadsAndRows` reads per statement. */
export const ROWS_AT_ONCE = 2000;

/**
 * Every production station's version, then the rows of those `stale` picks from them, at one snapshot
 * and under the bound of a read over the whole registry (db/deadline.ts wholeRegistryRead): the first
 * read of 100,000 stations' rows takes seconds. The rows come ROWS_AT_ONCE at a time, each handed to
 * `keep` as it arrives and only what it returns kept: a caller that keeps a little of each row never
 * holds every whole row at once (100,000 parsed rows, garbage the moment they are read, would otherwise
 * outlive the read's awaits and be promoted to the old generation).
 */
export async function stationHeadsAndRows<T>(
  pool: Sql,
  stale: (heads: { setModifiedUs: number; stations: StationHead[] }) => readonly string[],
  keep: (row: StationRow) => T,
): Promise<{ heads: { setModifiedUs: number; stations: StationHead[] }; kept: T[] }> {
  return wholeRegistryRead(pool, async (tx) => {
    const sql = tx as unknown as Sql;
    const heads = await allStationHeads(sql);
    const ids = stale(heads);
    const kept: T[] = [];
    for (let at = 0; at < ids.length; at += ROWS_AT_ONCE) {
      for (const row of await stationRows(sql, ids.slice(at, at + ROWS_AT_ONCE))) kept.push(keep(row));
    }
    return { heads, kept };
  });
}

export interface NozzleRow {
  external_id: string;
  connector_type: string;
  vehicle_side: string;
  is_certified: boolean;
  is_effectively_certified: boolean;
  fuelling_options: string[];
  protocol_configs: null;
}

export interface DispenserRow {
  external_id: string;
  is_certified: boolean;
  nozzles: NozzleRow[];
}

export interface StorageRow {
  external_id: string;
  nominal_capacity_kg: number;
  dispenser_external_ids: string[];
}

export interface ProductRow {
  external_id: string;
  pressure_stage: number;
  green_hydrogen_share: number | null;
  nozzle_external_ids: string[];
}

/** Everything the station record is made of, as stored. Layout sections are null without a confirmed layout. */
export interface StationRow {
  hrs_id: string;
  modifiedUs: number;
  name: string;
  operator_id: string;
  operator_name: string;
  heavy_duty: boolean;
  opening_hours: string | null;
  /** The IANA zone its opening hours are read in (named, or found at its coordinates); null when unknown. */
  time_zone: string | null;
  details: Record<string, unknown>;
  /** Its registered v1 fuel types (`700car`, …), sorted. */
  v1_fuel_types: string[];
  has_photo: boolean;
  dispensers: DispenserRow[] | null;
  storages: StorageRow[] | null;
  products: ProductRow[] | null;
}

/**
 * Whole stations for export, with their operator and confirmed layout (drafts never), in one statement
 * (one snapshot, so a record and its version always belong together), whatever the number of ids.
 * Layout parts keep the operator's order (their `position`). Numeric columns come out as JSON numbers.
 */
export async function stationRows(sql: Sql, hrsIds: readonly string[]): Promise<StationRow[]> {
  if (hrsIds.length === 0) return [];
  const rows = await sql<(Omit<StationRow, 'modifiedUs'> & { us: string })[]>`
    SELECT s.hrs_id, (extract(epoch FROM s.static_modified_at) * 1000000)::bigint AS us,
           s.name, s.operator_id, o.name AS operator_name, s.heavy_duty, s.opening_hours, s.time_zone, s.details,
           coalesce(array(SELECT f.fuel_type FROM station_v1_fuel_types f WHERE f.hrs_id = s.hrs_id ORDER BY f.fuel_type COLLATE "C"), '{}') AS v1_fuel_types,
           s.photo_media_type IS NOT NULL AND s.photo_checked AS has_photo,
           CASE WHEN l.id IS NOT NULL THEN coalesce((
             SELECT json_agg(json_build_object(
                      'external_id', d.external_id,
                      'is_certified', d.is_certified,
                      'nozzles', coalesce((
                        SELECT json_agg(json_build_object(
                                 'external_id', n.external_id,
                                 'connector_type', n.connector_type,
                                 'vehicle_side', n.vehicle_side,
                                 'is_certified', n.is_certified,
                                 'is_effectively_certified', n.is_effectively_certified,
                                 'fuelling_options', coalesce((
                                   SELECT json_agg(f.fuelling_option ORDER BY f.position)
                                   FROM nozzle_fuelling_options f WHERE f.nozzle_id = n.id), '[]'::json),
                                 'protocol_configs', NULL
                               ) ORDER BY n.position)
                        FROM layout_nozzles n WHERE n.dispenser_id = d.id), '[]'::json)
                    ) ORDER BY d.position)
             FROM dispensers d WHERE d.layout_id = l.id), '[]'::json) END AS dispensers,
           CASE WHEN l.id IS NOT NULL THEN coalesce((
             SELECT json_agg(json_build_object(
                      'external_id', st.external_id,
                      'nominal_capacity_kg', st.nominal_capacity_kg,
                      'dispenser_external_ids', coalesce((
                        SELECT json_agg(d.external_id ORDER BY sd.position)
                        FROM storage_dispensers sd JOIN dispensers d ON d.id = sd.dispenser_id
                        WHERE sd.storage_id = st.id), '[]'::json)
                    ) ORDER BY st.position)
             FROM storages st WHERE st.layout_id = l.id), '[]'::json) END AS storages,
           CASE WHEN l.id IS NOT NULL THEN coalesce((
             SELECT json_agg(json_build_object(
                      'external_id', p.external_id,
                      'pressure_stage', p.pressure_stage,
                      'green_hydrogen_share', p.green_hydrogen_share,
                      'nozzle_external_ids', coalesce((
                        SELECT json_agg(n.external_id ORDER BY pn.position)
                        FROM product_nozzles pn JOIN nozzles n ON n.id = pn.nozzle_id
                        WHERE pn.product_id = p.id), '[]'::json)
                    ) ORDER BY p.position)
             FROM products p WHERE p.layout_id = l.id), '[]'::json) END AS products
    FROM stations s
    JOIN operators o ON o.id = s.operator_id
    LEFT JOIN layouts l ON l.hrs_id = s.hrs_id AND l.kind = 'confirmed'
    WHERE s.hrs_id = ANY(${hrsIds as string[]})
    ORDER BY s.hrs_id`;
  return rows.map(({ us, ...row }) => ({ ...row, modifiedUs: Number(us) }));
}

export interface StationEventRow {
  id: string;
  kind: string;
  starts_at: Date;
  ends_at: Date | null;
  description: string;
}

/**
 * A station's events not over at `now` (an event without `ends_at` is ongoing), by start then id;
 * undefined when there is no such station.
 */
export async function currentEvents(sql: Sql, hrsId: string, now: Date, sandbox = false): Promise<StationEventRow[] | undefined> {
  const rows = await sql<(Omit<StationEventRow, 'id'> & { id: string | null })[]>`
    SELECT e.id, e.kind, e.starts_at, e.ends_at, e.description
    FROM stations s
    LEFT JOIN station_events e ON e.hrs_id = s.hrs_id AND (e.ends_at IS NULL OR e.ends_at > ${now})
    WHERE s.hrs_id = ${hrsId} AND s.sandbox = ${sandbox}
    ORDER BY e.starts_at, e.id`;
  if (rows.length === 0) return undefined;
  return rows.flatMap((row) => (row.id === null ? [] : [{ ...row, id: row.id }]));
}

export interface StationPhoto {
  bytes: Buffer;
  mediaType: string;
}

/**
 * The station's photo; null when it has none (or one not yet checked, see migration 0011), undefined
 * when there is no such station.
 */
export async function stationPhoto(sql: Sql, hrsId: string, sandbox = false): Promise<StationPhoto | null | undefined> {
  const [row] = await sql<{ photo: Buffer | null; photo_media_type: string | null }[]>`
    SELECT CASE WHEN photo_checked THEN photo END AS photo, photo_media_type FROM stations WHERE hrs_id = ${hrsId} AND sandbox = ${sandbox}`;
  if (!row) return undefined;
  if (row.photo === null || row.photo_media_type === null) return null;
  return { bytes: row.photo, mediaType: row.photo_media_type };
}

/** Stations whose stored photo was not checked yet (stored before migration 0011, or by an older version). */
export async function uncheckedPhotoStations(sql: Sql): Promise<string[]> {
  const rows = await sql<{ hrs_id: string }[]>`SELECT hrs_id FROM stations WHERE photo IS NOT NULL AND NOT photo_checked ORDER BY hrs_id`;
  return rows.map((r) => r.hrs_id);
}

/** An unchecked photo's bytes and SHA-256; undefined once it is checked or gone. */
export async function uncheckedPhoto(sql: Sql, hrsId: string): Promise<{ bytes: Buffer; sha256: Buffer } | undefined> {
  const [row] = await sql<{ photo: Buffer; photo_sha256: Buffer }[]>`
    SELECT photo, photo_sha256 FROM stations WHERE hrs_id = ${hrsId} AND photo IS NOT NULL AND NOT photo_checked`;
  return row ? { bytes: row.photo, sha256: row.photo_sha256 } : undefined;
}

/**
 * Replaces an unchecked photo (still the one of SHA-256 `was`) by its checked form, or removes it
 * (null); its `static_modified_at` moves. False when another instance did it first.
 */
export async function settleUncheckedPhoto(sql: Sql, hrsId: string, was: Buffer, photo: { bytes: Buffer; mediaType: string; sha256: Buffer } | null): Promise<boolean> {
  // The change log's lock before the station's row, as every writer of stations takes them.
  const rows = await sql.begin(async (tx) => {
    await tx`SELECT hrs_lock_change_log()`;
    return tx`
    UPDATE stations SET photo = ${photo?.bytes ?? null}, photo_media_type = ${photo?.mediaType ?? null},
      photo_sha256 = ${photo?.sha256 ?? null}, photo_checked = true, static_modified_at = clock_timestamp()
    WHERE hrs_id = ${hrsId} AND NOT photo_checked AND photo_sha256 = ${was}
    RETURNING hrs_id`;
  });
  return rows.length > 0;
}
