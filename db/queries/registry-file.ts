import type { Sql, Tx } from '../connect.js';
import type { Clock } from '../../src/config/clock.js';
import { clockNow } from './clock.js';

/*
 * The statements of the registry file loader (src/registry/file/load.ts), each run in the loader's
 * transaction. Upserts write only when something differs, so loading the same file again changes
 * nothing and each statement can tell added, changed and unchanged apart. Layouts are written by
 * db/queries/layouts.ts.
 */

/** What an upsert did: inserted a row, changed one that differed, or left an equal one alone. */
export type Upserted = 'added' | 'changed' | 'unchanged';

function upserted(row: { inserted: boolean } | undefined): Upserted {
  if (!row) return 'unchanged';
  return row.inserted ? 'added' : 'changed';
}

/** Holds the loader's lock until the transaction ends: one registry file is loaded at a time. */
export async function lockRegistryFile(tx: Tx): Promise<void> {
  await tx`SELECT pg_advisory_xact_lock(4851001)`;
}

/**
 * Whether the registry holds nothing of its own: no station but the export v1.1 sandbox's sample
 * stations, and no token (the sandbox's token is never stored).
 */
export async function registryIsEmpty(tx: Tx): Promise<boolean> {
  const [row] = await tx<{ empty: boolean }[]>`
    SELECT NOT EXISTS (SELECT 1 FROM stations WHERE NOT sandbox) AND NOT EXISTS (SELECT 1 FROM tokens) AS empty`;
  return row!.empty;
}

/** Those of `ids` that already exist in the table. */
export async function existingIds(tx: Tx, table: 'operators' | 'originators' | 'users', ids: string[]): Promise<string[]> {
  const rows = await tx<{ id: string }[]>`SELECT id FROM ${tx(table)} WHERE id = ANY(${ids})`;
  return rows.map((r) => r.id);
}

/** Those of `hrsIds` that are stations already. */
export async function existingStations(tx: Tx, hrsIds: string[]): Promise<string[]> {
  const rows = await tx<{ hrs_id: string }[]>`SELECT hrs_id FROM stations WHERE hrs_id = ANY(${hrsIds})`;
  return rows.map((r) => r.hrs_id);
}

/** The stations of the given operators other than `keep`. */
export async function operatorStationsExcept(tx: Tx, operatorIds: string[], keep: string[]): Promise<string[]> {
  const rows = await tx<{ hrs_id: string }[]>`
    SELECT hrs_id FROM stations WHERE operator_id = ANY(${operatorIds}) AND hrs_id <> ALL(${keep})`;
  return rows.map((r) => r.hrs_id);
}

/** Removes stations with everything that belongs to them. */
export async function deleteStations(tx: Tx, hrsIds: string[]): Promise<void> {
  await tx`DELETE FROM stations WHERE hrs_id = ANY(${hrsIds})`;
}

export async function upsertOperator(tx: Tx, o: { id: string; name: string; email: string | null }): Promise<Upserted> {
  const [row] = await tx<{ inserted: boolean }[]>`
    INSERT INTO operators (id, name, email) VALUES (${o.id}, ${o.name}, ${o.email})
    ON CONFLICT (id) DO UPDATE SET name = EXCLUDED.name, email = EXCLUDED.email, updated_at = clock_timestamp()
    WHERE (operators.name, operators.email) IS DISTINCT FROM (EXCLUDED.name, EXCLUDED.email)
    RETURNING (xmax = 0) AS inserted`;
  return upserted(row);
}

/** Marks the exported static content of an operator's stations as changed; returns their ids. */
export async function touchOperatorStations(tx: Tx, operatorId: string, clock: Clock): Promise<string[]> {
  const rows = await tx<{ hrs_id: string }[]>`
    UPDATE stations SET static_modified_at = ${clockNow(tx, clock)} WHERE operator_id = ${operatorId} RETURNING hrs_id`;
  return rows.map((r) => r.hrs_id);
}

/** A station's own fields as a registry file describes them. */
export interface StationFields {
  hrs_id: string;
  operator: string;
  name: string;
  heavy_duty: boolean;
  opening_hours: string | null;
  details: Record<string, unknown>;
  /** The IANA zone its opening hours are read in: the file's, else the one at its coordinates; null when neither. */
  time_zone: string | null;
  /** One of the export v1.1 sandbox's sample stations (only the sandbox's own load writes these). */
  sandbox: boolean;
}

/** A station photo as stored: the bytes (checked and re-encoded by the caller), their media type and SHA-256. */
export interface StoredPhoto {
  bytes: Buffer;
  mediaType: string;
  sha256: Buffer;
}

/**
 * Writes a station's own fields and photo; a change moves its `static_modified_at`. Its time zone is
 * written with a new station; for an existing one `setStationTimeZone` writes it.
 */
export async function upsertStationRow(tx: Tx, s: StationFields, photo: StoredPhoto | null, clock: Clock): Promise<Upserted> {
  const [row] = await tx<{ inserted: boolean }[]>`
    INSERT INTO stations (hrs_id, operator_id, name, heavy_duty, opening_hours, details, photo, photo_media_type, photo_sha256, photo_checked, time_zone, sandbox, static_modified_at)
    VALUES (${s.hrs_id}, ${s.operator}, ${s.name}, ${s.heavy_duty}, ${s.opening_hours}, ${tx.json(s.details as never)},
            ${photo?.bytes ?? null}, ${photo?.mediaType ?? null}, ${photo?.sha256 ?? null}, true, ${s.time_zone}, ${s.sandbox}, ${clockNow(tx, clock)})
    ON CONFLICT (hrs_id) DO UPDATE SET
      sandbox = EXCLUDED.sandbox, operator_id = EXCLUDED.operator_id, name = EXCLUDED.name, heavy_duty = EXCLUDED.heavy_duty,
      opening_hours = EXCLUDED.opening_hours, details = EXCLUDED.details, photo = EXCLUDED.photo,
      photo_media_type = EXCLUDED.photo_media_type, photo_sha256 = EXCLUDED.photo_sha256, photo_checked = true,
      static_modified_at = EXCLUDED.static_modified_at
    WHERE (stations.operator_id, stations.name, stations.heavy_duty, stations.opening_hours, stations.details,
           stations.photo_media_type, stations.photo_sha256, stations.photo_checked OR stations.photo IS NULL)
      IS DISTINCT FROM (EXCLUDED.operator_id, EXCLUDED.name, EXCLUDED.heavy_duty, EXCLUDED.opening_hours,
           EXCLUDED.details, EXCLUDED.photo_media_type, EXCLUDED.photo_sha256, true)
    RETURNING (xmax = 0) AS inserted`;
  return upserted(row);
}

/**
 * Sets a station's time zone; true when it differed. The DATEX II table publishes the zone's offset,
 * so a change moves its `static_modified_at` too (`Last-Modified` must follow every published change).
 */
export async function setStationTimeZone(tx: Tx, hrsId: string, timeZone: string | null, clock: Clock): Promise<boolean> {
  const rows = await tx`
    UPDATE stations SET time_zone = ${timeZone}, static_modified_at = ${clockNow(tx, clock)}
    WHERE hrs_id = ${hrsId} AND time_zone IS DISTINCT FROM ${timeZone} RETURNING hrs_id`;
  return rows.length > 0;
}

/** Marks a station's exported static content as changed (something belonging to it changed). */
export async function touchStation(tx: Tx, hrsId: string, clock: Clock): Promise<void> {
  await tx`UPDATE stations SET static_modified_at = ${clockNow(tx, clock)} WHERE hrs_id = ${hrsId}`;
}

/** A station's v1 fuel types, sorted. */
export async function stationV1FuelTypes(tx: Tx, hrsId: string): Promise<string[]> {
  const rows = await tx<{ fuel_type: string }[]>`
    SELECT fuel_type FROM station_v1_fuel_types WHERE hrs_id = ${hrsId} ORDER BY fuel_type`;
  return rows.map((r) => r.fuel_type);
}

/** A station's v1 fuel types become exactly `fuelTypes`. */
export async function replaceStationV1FuelTypes(tx: Tx, hrsId: string, fuelTypes: string[]): Promise<void> {
  await tx`DELETE FROM station_v1_fuel_types WHERE hrs_id = ${hrsId}`;
  if (fuelTypes.length > 0) {
    await tx`INSERT INTO station_v1_fuel_types ${tx(fuelTypes.map((fuel_type) => ({ hrs_id: hrsId, fuel_type })))}`;
  }
}

/** A station event as a registry file describes it (times as ISO 8601 text). */
export interface StationEventFields {
  id: string;
  kind: string;
  starts_at: string;
  ends_at: string | null;
  description: string;
}

/** Writes one event of a station; true when it was added or changed. */
export async function upsertStationEvent(tx: Tx, hrsId: string, e: StationEventFields): Promise<boolean> {
  const rows = await tx`
    INSERT INTO station_events (hrs_id, id, kind, starts_at, ends_at, description)
    VALUES (${hrsId}, ${e.id}, ${e.kind}, ${e.starts_at}, ${e.ends_at}, ${e.description})
    ON CONFLICT (hrs_id, id) DO UPDATE SET kind = EXCLUDED.kind, starts_at = EXCLUDED.starts_at,
      ends_at = EXCLUDED.ends_at, description = EXCLUDED.description
    WHERE (station_events.kind, station_events.starts_at, station_events.ends_at, station_events.description)
      IS DISTINCT FROM (EXCLUDED.kind, EXCLUDED.starts_at, EXCLUDED.ends_at, EXCLUDED.description)
    RETURNING id`;
  return rows.length > 0;
}

/** Removes a station's events other than `keep`; returns how many were removed. */
export async function deleteStationEventsExcept(tx: Tx, hrsId: string, keep: string[]): Promise<number> {
  const rows = await tx`DELETE FROM station_events WHERE hrs_id = ${hrsId} AND id <> ALL(${keep}) RETURNING id`;
  return rows.length;
}

export async function upsertOriginator(tx: Tx, o: { id: string; name: string; call_log_mode: string }): Promise<Upserted> {
  const [row] = await tx<{ inserted: boolean }[]>`
    INSERT INTO originators (id, name, call_log_mode) VALUES (${o.id}, ${o.name}, ${o.call_log_mode})
    ON CONFLICT (id) DO UPDATE SET name = EXCLUDED.name, call_log_mode = EXCLUDED.call_log_mode
    WHERE (originators.name, originators.call_log_mode) IS DISTINCT FROM (EXCLUDED.name, EXCLUDED.call_log_mode)
    RETURNING (xmax = 0) AS inserted`;
  return upserted(row);
}

/** The user other than `exceptId` that has this e-mail address (compared case-insensitively), if any. */
export async function userWithEmail(tx: Tx, email: string, exceptId: string): Promise<string | undefined> {
  const [row] = await tx<{ id: string }[]>`SELECT id FROM users WHERE lower(email) = lower(${email}) AND id <> ${exceptId}`;
  return row?.id;
}

export async function upsertUser(tx: Tx, u: { id: string; email: string; name: string | null }): Promise<Upserted> {
  const [row] = await tx<{ inserted: boolean }[]>`
    INSERT INTO users (id, email, name) VALUES (${u.id}, ${u.email}, ${u.name})
    ON CONFLICT (id) DO UPDATE SET email = EXCLUDED.email, name = EXCLUDED.name
    WHERE (users.email, users.name) IS DISTINCT FROM (EXCLUDED.email, EXCLUDED.name)
    RETURNING (xmax = 0) AS inserted`;
  return upserted(row);
}

/** An assignment as a registry file lists it. */
export interface AssignmentFields {
  originator: string;
  hrs_id: string;
  signal_type: string;
  state: string;
}

/** Removes the assignments of the given originators other than those in `keep`; returns how many. */
export async function deleteAssignmentsExcept(tx: Tx, originatorIds: string[], keep: AssignmentFields[]): Promise<number> {
  const rows = await tx`
    DELETE FROM assignments a
    WHERE a.originator_id = ANY(${originatorIds})
      AND (a.originator_id, a.hrs_id, a.signal_type, a.state) NOT IN (
        SELECT * FROM unnest(${keep.map((x) => x.originator)}::text[], ${keep.map((x) => x.hrs_id)}::text[],
                             ${keep.map((x) => x.signal_type)}::text[], ${keep.map((x) => x.state)}::text[]))
    RETURNING originator_id`;
  return rows.length;
}

/** The originator other than `exceptId` that is live for this station and signal type, if any. */
export async function otherLiveOriginator(tx: Tx, hrsId: string, signalType: string, exceptId: string): Promise<string | undefined> {
  const [row] = await tx<{ originator_id: string }[]>`
    SELECT originator_id FROM assignments
    WHERE hrs_id = ${hrsId} AND signal_type = ${signalType} AND state = 'live' AND originator_id <> ${exceptId}`;
  return row?.originator_id;
}

/** Adds an assignment unless it exists already; true when it was added. */
export async function insertAssignment(tx: Tx, a: AssignmentFields): Promise<boolean> {
  const rows = await tx`
    INSERT INTO assignments (originator_id, hrs_id, signal_type, state)
    VALUES (${a.originator}, ${a.hrs_id}, ${a.signal_type}, ${a.state})
    ON CONFLICT DO NOTHING RETURNING state`;
  return rows.length > 0;
}

/** A token as a registry file describes it, its value already hashed. */
export interface TokenFields {
  generation: string;
  originator: string | null;
  user: string | null;
  name: string;
  hash: Buffer;
  expiresAt: Date | null;
  /** Whether the file names the expiry; otherwise a stored token keeps the one it has. */
  expiryGiven: boolean;
}

/** Writes a token, found by its hash. */
export async function upsertToken(tx: Tx, t: TokenFields): Promise<Upserted> {
  const [row] = await tx<{ inserted: boolean }[]>`
    INSERT INTO tokens (generation, originator_id, user_id, name, hash, expires_at)
    VALUES (${t.generation}, ${t.originator}, ${t.user}, ${t.name}, ${t.hash}, ${t.expiresAt})
    ON CONFLICT (hash) DO UPDATE SET generation = EXCLUDED.generation, originator_id = EXCLUDED.originator_id,
      user_id = EXCLUDED.user_id, name = EXCLUDED.name,
      expires_at = CASE WHEN ${t.expiryGiven} THEN EXCLUDED.expires_at ELSE tokens.expires_at END
    WHERE (tokens.generation, tokens.originator_id, tokens.user_id, tokens.name) IS DISTINCT FROM
          (EXCLUDED.generation, EXCLUDED.originator_id, EXCLUDED.user_id, EXCLUDED.name)
       OR (${t.expiryGiven} AND tokens.expires_at IS DISTINCT FROM EXCLUDED.expires_at)
    RETURNING (xmax = 0) AS inserted`;
  return upserted(row);
}

/**
 * Those of the given users with more than `max` active (neither revoked nor expired at `now`)
 * personal (export_v2) tokens, with how many they have.
 */
export async function usersOverPersonalTokenLimit(
  tx: Tx,
  userIds: string[],
  now: Date,
  max: number,
): Promise<{ user_id: string; active: number }[]> {
  return tx<{ user_id: string; active: number }[]>`
    SELECT user_id, count(*)::int AS active FROM tokens
    WHERE generation = 'export_v2' AND user_id = ANY(${userIds}) AND revoked_at IS NULL
      AND (expires_at IS NULL OR expires_at > ${now})
    GROUP BY user_id HAVING count(*) > ${max}`;
}

/**
 * Removes the export v1.1 sandbox: its stations (their layouts, events and signals go with them), its
 * operator and originator. Returns the ids of the stations removed.
 */
export async function deleteSandbox(tx: Tx, operatorId: string, originatorId: string): Promise<string[]> {
  const rows = await tx<{ hrs_id: string }[]>`DELETE FROM stations WHERE sandbox RETURNING hrs_id`;
  await tx`DELETE FROM assignments WHERE originator_id = ${originatorId}`;
  await tx`DELETE FROM originators WHERE id = ${originatorId}`;
  await tx`DELETE FROM operators WHERE id = ${operatorId}`;
  return rows.map((r) => r.hrs_id);
}

/**
 * What production data already holds of the sandbox's names, one phrase each: stations with a sandbox
 * id (`SBX…`) not flagged `sandbox`, and the sandbox's operator or originator id in use with production
 * stations or tokens.
 */
export async function sandboxClashes(sql: Sql, operatorId: string, originatorId: string): Promise<string[]> {
  const rows = await sql<{ clash: string }[]>`
    SELECT 'station ' || hrs_id AS clash FROM stations WHERE hrs_id LIKE 'SBX%' AND NOT sandbox
    UNION ALL
    SELECT 'operator ' || ${operatorId} || ' has station ' || hrs_id FROM stations WHERE operator_id = ${operatorId} AND NOT sandbox
    UNION ALL
    SELECT 'originator ' || ${originatorId} || ' has tokens' WHERE EXISTS (SELECT 1 FROM tokens WHERE originator_id = ${originatorId})
    UNION ALL
    SELECT 'originator ' || ${originatorId} || ' is assigned to ' || hrs_id FROM assignments WHERE originator_id = ${originatorId} AND hrs_id NOT LIKE 'SBX%'`;
  return rows.map((r) => r.clash);
}
