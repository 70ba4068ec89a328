import type { Sql, Tx } from '../connect.js';
import { wholeRegistryRead } from '../deadline.js';
import type { AssignmentState, CallLogMode } from '../../src/domain/vocabulary.js';

/*
 * The reads behind the in-memory registry: everything the request path checks against, read whole on
 * each reload. Only confirmed layouts are read; drafts are no concern of the request path.
 */

/** A station, and whether it has a confirmed layout. */
export interface RegistryStationRow {
  hrs_id: string;
  name: string;
  heavy_duty: boolean;
  confirmed: boolean;
  /** Its registered v1 fuel types (`700car`, …), sorted. */
  v1_fuel_types?: string[];
  opening_hours?: string | null;
  /** The IANA zone its opening hours are read in (migration 0004); null when unknown. */
  time_zone?: string | null;
  /** `details.country` when a string (the country for public holidays in its hours). */
  country?: string | null;
  /** One of the export v1.1 sandbox's sample stations (migration 0005). */
  sandbox?: boolean;
  /**
   * The members of `details` a station's coordinates may be given in (`coordinates`, `lat`, `lon`,
   * `latitude`, `longitude`), read by src/domain/coordinates.ts; null when it has none of them.
   */
  place?: Record<string, unknown> | null;
  /** Its version, `static_modified_at` in microseconds (as text: a bigint). */
  modified_us?: string;
  /** The station set's version (`station_set.modified_at`, microseconds, as text), read in the same statement. */
  set_us?: string | null;
}

/**
 * A dispenser of confirmed layouts with one of its nozzles (`nozzle` null for a dispenser without any)
 * and the nozzle's fuelling options in their order, at one position in the layout, with every station
 * whose layout has it there: the groups come by dispenser position, then nozzle position, so each
 * station meets its dispensers and nozzles in layout order. Grouped, since most stations share their
 * parts' ids: a few rows instead of one per station and nozzle.
 */
export interface RegistryNozzleGroup {
  dispenser: string;
  nozzle: string | null;
  options: string[];
  hrs_ids: string[];
}

/** A storage or product id of confirmed layouts, with every station whose layout has it. */
export interface RegistryPartGroup {
  external_id: string;
  hrs_ids: string[];
}

/** An originator's assignment for one signal type in one state, with every station it holds for. */
export interface RegistryAssignmentGroup {
  originator_id: string;
  signal_type: string;
  state: AssignmentState;
  hrs_ids: string[];
}

export interface RegistryOriginatorRow {
  id: string;
  call_log_mode: CallLogMode;
}

/** Everything one reload of the registry reads. */
export interface RegistryRows {
  stations: RegistryStationRow[];
  nozzles: RegistryNozzleGroup[];
  storages: RegistryPartGroup[];
  products: RegistryPartGroup[];
  assignments: RegistryAssignmentGroup[];
  originators: RegistryOriginatorRow[];
  /**
   * The registry's version read just before the rows (microseconds: the newest `static_modified_at` of a
   * production station or the station set's `modified_at`, whichever is later): the rows reflect at
   * least this version, so a reader that finds PostgreSQL past it knows the rows may be behind.
   * Absent: rows held in memory, which nothing can be ahead of.
   */
  versionUs?: number;
  /**
   * The change log's head (export v2's sync position) read with `versionUs`, before the rows: a list
   * answered from these rows may name it as its `sync_token` (a client syncing from it misses nothing;
   * at worst it is given again a change the rows already hold). Absent: rows held in memory.
   */
  changeLogHead?: number;
}

/**
 * Reads the registry's stations, confirmed layouts, assignments and originators, at one snapshot (so
 * the rows agree with each other and with the version read first) and under the bound of a read over
 * the whole registry, not DATABASE_TIMEOUT (db/deadline.ts wholeRegistryRead).
 */
export async function readRegistryRows(pool: Sql): Promise<RegistryRows> {
  return wholeRegistryRead(pool, async (sql) => {
    // Read first, on its own: the reads below start after it, so they see this version (and this change
    // log head) or a later one.
    const { versionUs, changeLogHead } = await registryHead(sql);
    const [stations, nozzles, storages, products, assignments, originators] = await Promise.all([
      sql<RegistryStationRow[]>`
        SELECT s.hrs_id, s.name, s.heavy_duty, l.id IS NOT NULL AS confirmed, s.opening_hours, s.time_zone, s.sandbox,
               CASE WHEN jsonb_typeof(s.details -> 'country') = 'string' THEN s.details ->> 'country' END AS country,
               nullif(jsonb_strip_nulls(jsonb_build_object('coordinates', s.details -> 'coordinates', 'lat', s.details -> 'lat', 'lon', s.details -> 'lon',
                 'latitude', s.details -> 'latitude', 'longitude', s.details -> 'longitude')), '{}'::jsonb) AS place,
               coalesce(f.types, '{}') AS v1_fuel_types,
               ((extract(epoch FROM s.static_modified_at) * 1000000)::bigint)::text AS modified_us,
               (SELECT ((extract(epoch FROM modified_at) * 1000000)::bigint)::text FROM station_set) AS set_us
        FROM stations s LEFT JOIN layouts l ON l.hrs_id = s.hrs_id AND l.kind = 'confirmed'
             LEFT JOIN (SELECT hrs_id, array_agg(fuel_type ORDER BY fuel_type COLLATE "C") AS types
                        FROM station_v1_fuel_types GROUP BY hrs_id) f ON f.hrs_id = s.hrs_id`,
      sql<RegistryNozzleGroup[]>`
      SELECT d.external_id AS dispenser, n.external_id AS nozzle, coalesce(o.options, '{}') AS options, array_agg(l.hrs_id) AS hrs_ids
      FROM layouts l JOIN dispensers d ON d.layout_id = l.id LEFT JOIN nozzles n ON n.dispenser_id = d.id
           LEFT JOIN (SELECT nozzle_id, array_agg(fuelling_option ORDER BY position) AS options
                      FROM nozzle_fuelling_options GROUP BY nozzle_id) o ON o.nozzle_id = n.id
      WHERE l.kind = 'confirmed'
      GROUP BY d.position, n.position, d.external_id, n.external_id, o.options
      ORDER BY d.position, n.position`,
    sql<RegistryPartGroup[]>`
      SELECT s.external_id, array_agg(l.hrs_id) AS hrs_ids
      FROM layouts l JOIN storages s ON s.layout_id = l.id WHERE l.kind = 'confirmed' GROUP BY s.external_id`,
    sql<RegistryPartGroup[]>`
      SELECT p.external_id, array_agg(l.hrs_id) AS hrs_ids
      FROM layouts l JOIN products p ON p.layout_id = l.id WHERE l.kind = 'confirmed' GROUP BY p.external_id`,
    sql<RegistryAssignmentGroup[]>`
      SELECT originator_id, signal_type, state, array_agg(hrs_id) AS hrs_ids FROM assignments GROUP BY originator_id, signal_type, state`,
    sql<RegistryOriginatorRow[]>`SELECT id, call_log_mode FROM originators`,
    ]);
    return { stations, nozzles, storages, products, assignments, originators, versionUs, changeLogHead };
  });
}

/**
 * The registry's version now, as RegistryRows.versionUs defines it, and the change log's head as
 * db/queries/change-log.ts changeLogHead defines it, in one statement.
 */
async function registryHead(sql: Sql | Tx): Promise<{ versionUs: number; changeLogHead: number }> {
  const [row] = await sql<{ us: string | null; log: string }[]>`
    SELECT (extract(epoch FROM greatest((SELECT max(static_modified_at) FROM stations WHERE NOT sandbox),
                                        (SELECT modified_at FROM station_set))) * 1000000)::bigint AS us,
           greatest((SELECT max(seq) FROM change_log), (SELECT pruned_seq FROM change_log_horizon), 0)::text AS log`;
  return { versionUs: Number(row?.us ?? 0), changeLogHead: Number(row!.log) };
}
