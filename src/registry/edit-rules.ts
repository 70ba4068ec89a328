import { randomBytes } from 'node:crypto';
import type { Tx } from '../../db/connect.js';
import type { LayoutInput } from '../../db/queries/layouts.js';
import { lockChangeLog } from '../../db/queries/change-log.js';
import { stationRecord, type EventRow, type ImportTokenRow, type StationRecordRow } from '../../db/queries/portal-registry.js';
import type { UserRoles } from '../../db/queries/roles.js';
import { CATEGORIES } from '../domain/categories/index.js';
import { layoutContradictions } from '../domain/import-v1/options.js';
import { eventSchema, formatPath, type EventFixture } from './file/schema.js';
import type { RegistryChange } from '../domain/registry-change.js';

export type { RegistryChange };

/**
 * What the registry editor (./editor.ts) decides with: who acts, how a refusal is told, what a change
 * announces, the limits of import tokens, and the checks and shapes its changes share (the v1 fuel types
 * against the layout, events through the registry file's schema, what the audit trail keeps).
 */

/** Who makes a change: `user:<id>` through the portal, `admin-token` through the admin API. */
export interface Actor {
  id: string;
  via: 'portal' | 'admin';
  /** The portal account, when there is one (an import token made in the portal records it). */
  userId: string | null;
}

/** A change refused; `status` is the HTTP status it is answered with. Nothing was changed. */
export class EditError extends Error {
  override readonly name = 'EditError';
  constructor(
    readonly status: 400 | 404 | 409 | 413 | 415 | 422,
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

/** Import tokens an originator may hold at once: enough to rotate every system it runs. */
export const MAX_ACTIVE_IMPORT_TOKENS = 10;
/** An import token made without an expiry lasts this long. */
export const IMPORT_TOKEN_DEFAULT_DAYS = 365;

/** What an originator is assigned for: a category of import v2, or `v1` (the legacy import's availability). */
export const SIGNAL_TYPES = [...CATEGORIES, 'v1'] as const;
export type SignalType = (typeof SIGNAL_TYPES)[number];

export const noSuchStation = (hrsId: string) => new EditError(404, 'not_found', `No station "${hrsId}".`);
export const noSuchOriginator = (id: string) => new EditError(404, 'not_found', `No originator "${id}".`);

/** The record as audited and answered: what the portal edits, without the bookkeeping. */
export const recordOf = (r: StationRecordRow) => ({
  name: r.name,
  heavy_duty: r.heavy_duty,
  opening_hours: r.opening_hours,
  time_zone: r.time_zone,
  details: r.details,
  v1_fuel_types: r.v1_fuel_types,
});

export const eventOf = (e: EventRow): EventFixture => ({
  id: e.id,
  kind: e.kind as EventFixture['kind'],
  starts_at: e.starts_at.toISOString(),
  ends_at: e.ends_at?.toISOString() ?? null,
  description: e.description,
});

export const rolesAudit = (r: UserRoles) => ({ admin: r.admin, operators: r.operators.map((o) => o.id), originators: r.originators.map((o) => o.id) });
export const tokenAudit = (t: ImportTokenRow) => ({
  generation: t.generation,
  name: t.name,
  hint: t.hint,
  expires_at: t.expires_at?.toISOString() ?? null,
  revoked_at: t.revoked_at?.toISOString() ?? null,
});

/**
 * Locks the station's row for the transaction; its operator. The change log's lock comes first: every
 * writer takes it before any station row (a registry load holds it while it locks many), so a station
 * locked here can never wait on the log while the log's holder waits on the station.
 */
export async function lockStation(tx: Tx, hrsId: string): Promise<string> {
  await lockChangeLog(tx);
  const record = await stationRecord(tx, hrsId, true);
  if (!record) throw noSuchStation(hrsId);
  return record.operator;
}

/** The confirmed layout (to be) and the v1 fuel types must describe the same fuelling options (the legacy import checks against both). */
export function checkFuelTypes(layout: LayoutInput | null, v1FuelTypes: readonly string[], field: string): void {
  if (!layout) return;
  const options = layout.dispensers.flatMap((d) => d.nozzles.flatMap((n) => n.fuelling_options));
  const problems = layoutContradictions(options, v1FuelTypes);
  if (problems.length > 0) throw new EditError(422, 'layout_contradiction', problems.map((p) => `${field}: ${p}`).join('; '));
}

/** An event through the registry file's schema: the same rules, the same messages. */
export function validEvent(input: Partial<EventFixture>): EventFixture {
  const parsed = eventSchema.safeParse(input);
  if (!parsed.success) {
    throw new EditError(400, 'invalid_body', parsed.error.issues.map((i) => `${formatPath(i.path) || '(body)'}: ${i.message}`).join('; '));
  }
  return parsed.data;
}

/** An event id when none is given: `ev-` and 12 hex digits. */
export const newEventId = () => `ev-${randomBytes(6).toString('hex')}`;
