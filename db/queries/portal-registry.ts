import type { Sql, Tx } from '../connect.js';
import type { Clock } from '../../src/config/clock.js';
import { clockNow } from './clock.js';
import type { LayoutInput, LayoutKind } from './layouts.js';
import type { Named } from './roles.js';

/*
 * The registry as the operator and originator portal reads and changes it (migration 0008): stations'
 * records, layouts, events, photos, assignments, originators and their import tokens. Roles are in
 * ./roles.ts, the audit trail in ./audit.ts. Writes run in the caller's transaction.
 */

type Db = Sql | Tx;

// Stations -------------------------------------------------------------------------------------------

export interface StationListing {
  hrs_id: string;
  name: string;
  operator: string;
  static_modified_at: Date;
  layout_version: number | null;
  has_draft: boolean;
  has_photo: boolean;
}

/** The stations of these operators (all of them: `null`), sandbox stations never. */
export async function listPortalStations(db: Db, operators: readonly string[] | null): Promise<StationListing[]> {
  return db<StationListing[]>`
    SELECT s.hrs_id, s.name, s.operator_id AS operator, s.static_modified_at,
      (SELECT version FROM layouts l WHERE l.hrs_id = s.hrs_id AND l.kind = 'confirmed') AS layout_version,
      EXISTS (SELECT 1 FROM layouts l WHERE l.hrs_id = s.hrs_id AND l.kind = 'draft') AS has_draft,
      s.photo IS NOT NULL AS has_photo
    FROM stations s
    WHERE NOT s.sandbox ${operators === null ? db`` : db`AND s.operator_id = ANY(${[...operators]})`}
    ORDER BY s.hrs_id`;
}

/** Whose station it is; undefined for no station (or a sandbox one: the portal never edits those). */
export async function stationOperator(db: Db, hrsId: string): Promise<string | undefined> {
  const [row] = await db<{ operator_id: string }[]>`SELECT operator_id FROM stations WHERE hrs_id = ${hrsId} AND NOT sandbox`;
  return row?.operator_id;
}

export interface StationRecordRow {
  hrs_id: string;
  operator: string;
  name: string;
  heavy_duty: boolean;
  opening_hours: string | null;
  time_zone: string | null;
  details: Record<string, unknown>;
  v1_fuel_types: string[];
  static_modified_at: Date;
  photo: { media_type: string; bytes: number; sha256: string } | null;
}

/** The station's record as the portal edits it (locked for the transaction with `forUpdate`). */
export async function stationRecord(db: Db, hrsId: string, forUpdate = false): Promise<StationRecordRow | undefined> {
  const [row] = await db<StationRecordRow[]>`
    SELECT s.hrs_id, s.operator_id AS operator, s.name, s.heavy_duty, s.opening_hours, s.time_zone, s.details,
      COALESCE((SELECT array_agg(f.fuel_type ORDER BY f.fuel_type) FROM station_v1_fuel_types f WHERE f.hrs_id = s.hrs_id), '{}') AS v1_fuel_types,
      s.static_modified_at,
      CASE WHEN s.photo IS NULL THEN NULL
           ELSE json_build_object('media_type', s.photo_media_type, 'bytes', octet_length(s.photo), 'sha256', encode(s.photo_sha256, 'hex')) END AS photo
    FROM stations s WHERE s.hrs_id = ${hrsId} AND NOT s.sandbox
    ${forUpdate ? db`FOR UPDATE OF s` : db``}`;
  return row;
}

/** Writes the station's own fields; true when one differed (its `static_modified_at` then moves). */
export async function updateStationFields(
  tx: Tx,
  hrsId: string,
  f: { name: string; heavy_duty: boolean; opening_hours: string | null; details: Record<string, unknown> },
  clock: Clock,
): Promise<boolean> {
  const rows = await tx`
    UPDATE stations SET name = ${f.name}, heavy_duty = ${f.heavy_duty}, opening_hours = ${f.opening_hours},
      details = ${tx.json(f.details as never)}, static_modified_at = ${clockNow(tx, clock)}
    WHERE hrs_id = ${hrsId}
      AND (name, heavy_duty, opening_hours, details) IS DISTINCT FROM (${f.name}, ${f.heavy_duty}, ${f.opening_hours}, ${tx.json(f.details as never)}::jsonb)
    RETURNING hrs_id`;
  return rows.length > 0;
}

/** Sets (or, null, removes) the station's photo, checked (re-encoded) by the caller; true when it changed. */
export async function setStationPhoto(tx: Tx, hrsId: string, photo: { bytes: Buffer; mediaType: string; sha256: Buffer } | null, clock: Clock): Promise<boolean> {
  const rows = await tx`
    UPDATE stations SET photo = ${photo?.bytes ?? null}, photo_media_type = ${photo?.mediaType ?? null},
      photo_sha256 = ${photo?.sha256 ?? null}, photo_checked = true, static_modified_at = ${clockNow(tx, clock)}
    WHERE hrs_id = ${hrsId} AND (photo_sha256 IS DISTINCT FROM ${photo?.sha256 ?? null}::bytea OR NOT photo_checked)
    RETURNING hrs_id`;
  return rows.length > 0;
}

// Layouts ----------------------------------------------------------------------------------------------

export interface StoredLayout {
  version: number;
  created_at: Date;
  confirmed_at: Date | null;
  layout: LayoutInput;
}

/** The station's layout of this kind, as the registry file describes one; undefined when it has none. */
export async function readLayout(db: Db, hrsId: string, kind: LayoutKind): Promise<StoredLayout | undefined> {
  const [row] = await db<StoredLayout[]>`
    SELECT l.version, l.created_at, l.confirmed_at, json_build_object(
      'dispensers', COALESCE((
        SELECT json_agg(json_build_object(
          'external_id', d.external_id, 'is_certified', d.is_certified,
          'nozzles', COALESCE((
            SELECT json_agg(json_build_object(
              'external_id', n.external_id, 'connector_type', n.connector_type, 'vehicle_side', n.vehicle_side,
              'is_certified', n.is_certified,
              'fuelling_options', COALESCE((SELECT json_agg(o.fuelling_option ORDER BY o.position) FROM nozzle_fuelling_options o WHERE o.nozzle_id = n.id), '[]')
            ) ORDER BY n.position) FROM nozzles n WHERE n.dispenser_id = d.id), '[]')
        ) ORDER BY d.position) FROM dispensers d WHERE d.layout_id = l.id), '[]'),
      'storages', COALESCE((
        SELECT json_agg(json_build_object(
          'external_id', s.external_id, 'nominal_capacity_kg', s.nominal_capacity_kg::float8,
          'dispenser_external_ids', COALESCE((
            SELECT json_agg(d.external_id ORDER BY sd.position) FROM storage_dispensers sd JOIN dispensers d ON d.id = sd.dispenser_id
            WHERE sd.storage_id = s.id), '[]')
        ) ORDER BY s.position) FROM storages s WHERE s.layout_id = l.id), '[]'),
      'products', COALESCE((
        SELECT json_agg(json_build_object(
          'external_id', p.external_id, 'pressure_stage', p.pressure_stage, 'green_hydrogen_share', p.green_hydrogen_share::float8,
          'nozzle_external_ids', COALESCE((
            SELECT json_agg(n.external_id ORDER BY pn.position) FROM product_nozzles pn JOIN nozzles n ON n.id = pn.nozzle_id
            WHERE pn.product_id = p.id), '[]')
        ) ORDER BY p.position) FROM products p WHERE p.layout_id = l.id), '[]')
    ) AS layout
    FROM layouts l WHERE l.hrs_id = ${hrsId} AND l.kind = ${kind}`;
  return row;
}

// Events -----------------------------------------------------------------------------------------------

export interface EventRow {
  id: string;
  kind: string;
  starts_at: Date;
  ends_at: Date | null;
  description: string;
}

/** Every event of the station, past ones included, latest start first. */
export async function allStationEvents(db: Db, hrsId: string): Promise<EventRow[]> {
  return db<EventRow[]>`
    SELECT id, kind, starts_at, ends_at, description FROM station_events WHERE hrs_id = ${hrsId}
    ORDER BY starts_at DESC, id`;
}

export async function stationEvent(db: Db, hrsId: string, id: string): Promise<EventRow | undefined> {
  const [row] = await db<EventRow[]>`
    SELECT id, kind, starts_at, ends_at, description FROM station_events WHERE hrs_id = ${hrsId} AND id = ${id}`;
  return row;
}

/** Which of these event ids the station has already. */
export async function takenEventIds(db: Db, hrsId: string, ids: readonly string[]): Promise<Set<string>> {
  const rows = await db<{ id: string }[]>`SELECT id FROM station_events WHERE hrs_id = ${hrsId} AND id = ANY(${[...ids]})`;
  return new Set(rows.map((r) => r.id));
}

// Assignments ------------------------------------------------------------------------------------------

export interface AssignmentRow {
  originator: string;
  hrs_id: string;
  signal_type: string;
  state: string;
  updated_at: Date;
}

export async function stationAssignments(db: Db, hrsId: string): Promise<AssignmentRow[]> {
  return db<AssignmentRow[]>`
    SELECT originator_id AS originator, hrs_id, signal_type, state, updated_at FROM assignments
    WHERE hrs_id = ${hrsId} ORDER BY originator_id, signal_type`;
}

export async function originatorAssignments(db: Db, originatorId: string): Promise<(AssignmentRow & { station_name: string })[]> {
  return db<(AssignmentRow & { station_name: string })[]>`
    SELECT a.originator_id AS originator, a.hrs_id, a.signal_type, a.state, a.updated_at, s.name AS station_name
    FROM assignments a JOIN stations s ON s.hrs_id = a.hrs_id
    WHERE a.originator_id = ${originatorId} AND NOT s.sandbox ORDER BY a.hrs_id, a.signal_type`;
}

/** The assignment's state, or undefined for none. */
export async function assignmentState(db: Db, originatorId: string, hrsId: string, signalType: string): Promise<string | undefined> {
  const [row] = await db<{ state: string }[]>`
    SELECT state FROM assignments WHERE originator_id = ${originatorId} AND hrs_id = ${hrsId} AND signal_type = ${signalType}`;
  return row?.state;
}

/** Sets the assignment (null: removes it). */
export async function setAssignment(tx: Tx, originatorId: string, hrsId: string, signalType: string, state: string | null): Promise<void> {
  if (state === null) {
    await tx`DELETE FROM assignments WHERE originator_id = ${originatorId} AND hrs_id = ${hrsId} AND signal_type = ${signalType}`;
    return;
  }
  await tx`
    INSERT INTO assignments (originator_id, hrs_id, signal_type, state) VALUES (${originatorId}, ${hrsId}, ${signalType}, ${state})
    ON CONFLICT (originator_id, hrs_id, signal_type) DO UPDATE SET state = EXCLUDED.state, updated_at = clock_timestamp()
    WHERE assignments.state <> EXCLUDED.state`;
}

// Originators ------------------------------------------------------------------------------------------

export interface OriginatorRow {
  id: string;
  name: string;
  call_log_mode: string;
  deactivated_at: Date | null;
}

export async function originatorRow(db: Db, id: string): Promise<OriginatorRow | undefined> {
  const [row] = await db<OriginatorRow[]>`SELECT id, name, call_log_mode, deactivated_at FROM originators WHERE id = ${id}`;
  return row;
}

/** Every originator (an operator assigns any of them), sandbox's never. */
export async function listOriginators(db: Db, exclude: string): Promise<Named[]> {
  return db<Named[]>`SELECT id, name FROM originators WHERE id <> ${exclude} ORDER BY id`;
}

export async function setCallLogMode(tx: Tx, id: string, mode: string): Promise<void> {
  await tx`UPDATE originators SET call_log_mode = ${mode} WHERE id = ${id}`;
}

export interface ImportTokenRow {
  id: string;
  generation: 'import_v1' | 'import_v2';
  name: string;
  hint: string | null;
  created_at: Date;
  created_by: string | null;
  expires_at: Date | null;
  revoked_at: Date | null;
  last_used_at: Date | null;
}

const IMPORT_TOKEN = 'id::text, generation, name, hint, created_at, created_by, expires_at, revoked_at, last_used_at';

export async function importTokens(db: Db, originatorId: string): Promise<ImportTokenRow[]> {
  return db<ImportTokenRow[]>`
    SELECT ${db.unsafe(IMPORT_TOKEN)} FROM tokens
    WHERE originator_id = ${originatorId} AND generation IN ('import_v1', 'import_v2') ORDER BY created_at DESC, tokens.id DESC`;
}

/** Serialises token changes of one originator (its active-token limit is checked under it). */
export async function lockOriginatorTokens(tx: Tx, originatorId: string): Promise<void> {
  await tx`SELECT pg_advisory_xact_lock(hashtext('hrs:originator-tokens'), hashtext(${originatorId}))`;
}

export async function activeImportTokens(db: Db, originatorId: string, now: Date): Promise<number> {
  const [row] = await db<{ n: number }[]>`
    SELECT count(*)::int AS n FROM tokens WHERE originator_id = ${originatorId} AND generation IN ('import_v1', 'import_v2')
      AND revoked_at IS NULL AND (expires_at IS NULL OR expires_at > ${now})`;
  return row?.n ?? 0;
}

export async function insertImportToken(
  tx: Tx,
  t: { generation: 'import_v1' | 'import_v2'; originatorId: string; name: string; hash: Buffer; hint: string; expiresAt: Date | null; createdBy: string | null },
): Promise<ImportTokenRow> {
  const [row] = await tx<ImportTokenRow[]>`
    INSERT INTO tokens (generation, originator_id, name, hash, hint, expires_at, created_by)
    VALUES (${t.generation}, ${t.originatorId}, ${t.name}, ${t.hash}, ${t.hint}, ${t.expiresAt}, ${t.createdBy})
    RETURNING ${tx.unsafe(IMPORT_TOKEN)}`;
  return row!;
}

/** Revokes the originator's import token; undefined when it has no such token, `false` when it was revoked already. */
export async function revokeImportToken(tx: Tx, originatorId: string, tokenId: string): Promise<{ before: ImportTokenRow; after: ImportTokenRow } | undefined> {
  const [before] = await tx<ImportTokenRow[]>`
    SELECT ${tx.unsafe(IMPORT_TOKEN)} FROM tokens
    WHERE id = ${tokenId} AND originator_id = ${originatorId} AND generation IN ('import_v1', 'import_v2') FOR UPDATE`;
  if (!before) return undefined;
  const [after] = await tx<ImportTokenRow[]>`
    UPDATE tokens SET revoked_at = COALESCE(revoked_at, clock_timestamp()), revoked_by = COALESCE(revoked_by, 'owner')
    WHERE id = ${tokenId} RETURNING ${tx.unsafe(IMPORT_TOKEN)}`;
  return { before, after: after! };
}

