import type { Sql, Tx } from '../connect.js';
import { unbounded } from '../deadline.js';

/** The server's bound on each of the registry's reads (see readRegistryRows). */
const REGISTRY_STATEMENT_TIMEOUT_MS = 60_000;
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
 * A dispenser of a confirmed layout with one of its nozzles (`nozzle` null for a dispenser without
 * any), the nozzle's fuelling options in their order; by station, dispenser position, nozzle position.
 */
export interface RegistryNozzleRow {
  hrs_id: string;
  dispenser: string;
  nozzle: string | null;
  options: string[];
}

/** A storage or product of a station's confirmed layout, by its external id. */
export interface RegistryPartRow {
  hrs_id: string;
  external_id: string;
}

export interface RegistryAssignmentRow {
  originator_id: string;
  hrs_id: string;
  signal_type: string;
  state: AssignmentState;
}

export interface RegistryOriginatorRow {
  id: string;
  call_log_mode: CallLogMode;
}

/** Everything one reload of the registry reads. */
export interface RegistryRows {
  stations: RegistryStationRow[];
  nozzles: RegistryNozzleRow[];
  storages: RegistryPartRow[];
  products: RegistryPartRow[];
  assignments: RegistryAssignmentRow[];
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
 * Reads the registry's stations, confirmed layouts, assignments and originators: one read-only
 * transaction at one snapshot (REPEATABLE READ), so the rows agree with each other and with the version
 * read first; the reads are sent together and answered in turn. Outside the request path's deadline
 * (`unbounded`), and with a `statement_timeout` of its own (REGISTRY_STATEMENT_TIMEOUT_MS) instead of
 * the pool's DATABASE_TIMEOUT: with 100,000 stations the largest read takes about half a second, more
 * on a loaded server, and a registry that cannot be read cannot start or follow a change.
 */
export async function readRegistryRows(pool: Sql): Promise<RegistryRows> {
  return unbounded(pool).begin('isolation level repeatable read read only', async (sql) => {
    await sql`SELECT set_config('statement_timeout', ${String(REGISTRY_STATEMENT_TIMEOUT_MS)}, true)`;
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
      sql<RegistryNozzleRow[]>`
        SELECT l.hrs_id, d.external_id AS dispenser, n.external_id AS nozzle, coalesce(o.options, '{}') AS options
        FROM layouts l JOIN dispensers d ON d.layout_id = l.id LEFT JOIN nozzles n ON n.dispenser_id = d.id
             LEFT JOIN (SELECT nozzle_id, array_agg(fuelling_option ORDER BY position) AS options
                        FROM nozzle_fuelling_options GROUP BY nozzle_id) o ON o.nozzle_id = n.id
        WHERE l.kind = 'confirmed' ORDER BY l.id, d.position, n.position`,
      sql<RegistryPartRow[]>`
        SELECT l.hrs_id, s.external_id FROM layouts l JOIN storages s ON s.layout_id = l.id WHERE l.kind = 'confirmed'`,
      sql<RegistryPartRow[]>`
        SELECT l.hrs_id, p.external_id FROM layouts l JOIN products p ON p.layout_id = l.id WHERE l.kind = 'confirmed'`,
      sql<RegistryAssignmentRow[]>`SELECT originator_id, hrs_id, signal_type, state FROM assignments`,
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
