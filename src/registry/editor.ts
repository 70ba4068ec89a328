import type { Sql, Tx } from '../../db/connect.js';
import { deleteLayout } from '../../db/queries/layouts.js';
import { lockChangeLog } from '../../db/queries/change-log.js';
import { activeImportTokens, allStationEvents, assignmentState, insertImportToken, lockOriginatorTokens, originatorRow, readLayout, revokeImportToken, setAssignment, setCallLogMode, setStationPhoto, stationEvent, stationRecord, takenEventIds, updateStationFields, type ImportTokenRow, type StationRecordRow, type StoredLayout } from '../../db/queries/portal-registry.js';
import { knownIds, replaceUserRoles, userRoles, type UserRoles } from '../../db/queries/roles.js';
import { insertAudit, type AuditEntry } from '../../db/queries/audit.js';
import { lockRegistryFile, otherLiveOriginator, setStationTimeZone, touchStation, upsertStationEvent } from '../../db/queries/registry-file.js';
import { diffLayouts, type LayoutDiff } from '../domain/layout-diff.js';
import { SANDBOX_ORIGINATOR } from '../domain/sandbox.js';
import { checkExpiry, newTokenValue, tokenHint } from '../domain/token-values.js';
import { checkedPhoto, PhotoError, MAX_PHOTO_BYTES, type Photo } from './file/photo.js';
import type { EventFixture, LayoutFixture, StationRecord } from './file/schema.js';
import { replaceLayout, replaceV1FuelTypes } from './station-writes.js';
import { stationTimeZone } from './time-zone.js';
import { hashToken } from './tokens.js';
import type { Clock } from '../config/clock.js';
import {
  checkFuelTypes,
  EditError,
  eventOf,
  IMPORT_TOKEN_DEFAULT_DAYS,
  lockStation,
  MAX_ACTIVE_IMPORT_TOKENS,
  newEventId,
  noSuchOriginator,
  noSuchStation,
  recordOf,
  rolesAudit,
  tokenAudit,
  validEvent,
  type Actor,
  type RegistryChange,
  type SignalType,
} from './edit-rules.js';

export { EditError, IMPORT_TOKEN_DEFAULT_DAYS, MAX_ACTIVE_IMPORT_TOKENS, SIGNAL_TYPES, type Actor, type RegistryChange, type SignalType } from './edit-rules.js';

/**
 * Every change the operator and originator portal (and the admin API) makes to the registry: a
 * station's record, its draft layout and its confirmation, events (one station or a broadcast to many),
 * the photo, assignments, originators' import tokens and call-log mode, accounts' roles. Each change is
 * one transaction that also writes its audit entry (who, what, before and after); afterwards the change
 * is announced (this instance's registry reloaded, then every other instance told over the bus) before
 * the call returns, so the next signal on any instance meets it. Validation is the registry file's
 * (./file/schema.ts) and so are the writes (./station-writes.ts); authorisation is the caller's.
 */

export class RegistryEditor {
  constructor(
    private readonly sql: Sql,
    /** Applies a committed change here and tells every other instance; awaited before answering. */
    private readonly announce: (change: RegistryChange) => Promise<void>,
    /** Stamps the stations' versions (`static_modified_at`). */
    private readonly clock: Clock,
  ) {}

  /** One change: its transaction with its audit entries, then its announcement. */
  private async change<T>(work: (tx: Tx, audit: (entry: Omit<AuditEntry, 'actor' | 'via'>) => Promise<void>) => Promise<{ result: T; announce?: RegistryChange }>, actor: Actor): Promise<T> {
    const done = await this.sql.begin((tx) => work(tx, (entry) => insertAudit(tx, { ...entry, actor: actor.id, via: actor.via })));
    if (done.announce && (done.announce.hrsIds.length > 0 || done.announce.tokens || done.announce.registry)) await this.announce(done.announce);
    return done.result;
  }

  // Stations ------------------------------------------------------------------------------------------

  /**
   * The station's record becomes `record` (validated by the caller with stationRecordSchema). `check`
   * sees the station as it is, locked, before anything is written: what it throws refuses the change.
   */
  updateStation(actor: Actor, hrsId: string, record: StationRecord, check?: (before: StationRecordRow) => void): Promise<StationRecordRow> {
    return this.change(async (tx, audit) => {
      await lockChangeLog(tx);
      const before = await stationRecord(tx, hrsId, true);
      if (!before) throw noSuchStation(hrsId);
      check?.(before);
      const confirmed = await readLayout(tx, hrsId, 'confirmed');
      checkFuelTypes(confirmed?.layout ?? null, record.v1_fuel_types, 'v1_fuel_types');
      let changed = await updateStationFields(tx, hrsId, record, this.clock);
      if (await replaceV1FuelTypes(tx, hrsId, record.v1_fuel_types)) {
        if (!changed) await touchStation(tx, hrsId, this.clock);
        changed = true;
      }
      // Hours read in another zone open and close at other instants: the summary and the clock follow.
      const zoneChanged = await setStationTimeZone(tx, hrsId, stationTimeZone(record.time_zone, record.details), this.clock);
      const after = (await stationRecord(tx, hrsId))!;
      if (changed || zoneChanged) {
        await audit({ action: 'station.update', operator_id: before.operator, hrs_id: hrsId, before: recordOf(before), after: recordOf(after) });
      }
      return { result: after, announce: { hrsIds: changed || zoneChanged ? [hrsId] : [] } };
    }, actor);
  }

  // Layouts -------------------------------------------------------------------------------------------

  /** The confirmed layout and the draft; either may be missing. */
  async layouts(hrsId: string): Promise<{ confirmed: StoredLayout | undefined; draft: StoredLayout | undefined }> {
    const [confirmed, draft] = await Promise.all([readLayout(this.sql, hrsId, 'confirmed'), readLayout(this.sql, hrsId, 'draft')]);
    return { confirmed, draft };
  }

  /** The draft becomes `layout` (validated by the caller with layoutSchema); invisible to import and export until confirmed. */
  putDraft(actor: Actor, hrsId: string, layout: LayoutFixture): Promise<{ draft: StoredLayout; diff: LayoutDiff }> {
    return this.change(async (tx, audit) => {
      const operator = await lockStation(tx, hrsId);
      const before = await readLayout(tx, hrsId, 'draft');
      if (await replaceLayout(tx, hrsId, 'draft', layout)) {
        await audit({ action: 'layout.draft', operator_id: operator, hrs_id: hrsId, before: before?.layout ?? null, after: layout });
      }
      const draft = (await readLayout(tx, hrsId, 'draft'))!;
      const confirmed = await readLayout(tx, hrsId, 'confirmed');
      return { result: { draft, diff: diffLayouts(confirmed?.layout ?? null, draft.layout) } };
    }, actor);
  }

  /** Throws the draft away; false when there was none. */
  discardDraft(actor: Actor, hrsId: string): Promise<boolean> {
    return this.change(async (tx, audit) => {
      const operator = await lockStation(tx, hrsId);
      const before = await readLayout(tx, hrsId, 'draft');
      if (!before) return { result: false };
      await deleteLayout(tx, hrsId, 'draft');
      await audit({ action: 'layout.discard', operator_id: operator, hrs_id: hrsId, before: before.layout, after: null });
      return { result: true };
    }, actor);
  }

  /**
   * Confirms the draft: it becomes the confirmed layout (its version one more) in one transaction, the
   * draft is gone, the export record's `Last-Modified` moves, and every instance validates and publishes
   * against it before this returns. `expectedVersion` (the confirmed version the editor saw; 0 for
   * none) refuses a confirmation over someone else's. `v1FuelTypes`, when given, become the station's v1
   * fuel types in the same transaction (a draft with a nozzle offering a new option needs its v1 code).
   */
  confirmDraft(actor: Actor, hrsId: string, expectedVersion?: number, v1FuelTypes?: readonly string[]): Promise<{ confirmed: StoredLayout; diff: LayoutDiff }> {
    return this.change(async (tx, audit) => {
      // The registry file's lock: a confirmation and a load never interleave.
      await lockRegistryFile(tx);
      const operator = await lockStation(tx, hrsId);
      const draft = await readLayout(tx, hrsId, 'draft');
      if (!draft) throw new EditError(409, 'no_draft', `${hrsId} has no draft layout to confirm: save a draft first.`);
      const before = await readLayout(tx, hrsId, 'confirmed');
      const current = before?.version ?? 0;
      if (expectedVersion !== undefined && expectedVersion !== current) {
        throw new EditError(409, 'version_conflict', `The confirmed layout of ${hrsId} is version ${current}, not ${expectedVersion}: someone confirmed another layout meanwhile. Reload and review the change again.`);
      }
      const record = (await stationRecord(tx, hrsId))!;
      checkFuelTypes(draft.layout, v1FuelTypes ?? record.v1_fuel_types, v1FuelTypes ? 'v1_fuel_types' : 'layout');
      const diff = diffLayouts(before?.layout ?? null, draft.layout);
      if (v1FuelTypes && (await replaceV1FuelTypes(tx, hrsId, v1FuelTypes))) {
        const after = (await stationRecord(tx, hrsId))!;
        await audit({ action: 'station.update', operator_id: operator, hrs_id: hrsId, before: recordOf(record), after: recordOf(after) });
      }
      await replaceLayout(tx, hrsId, 'confirmed', draft.layout);
      await deleteLayout(tx, hrsId, 'draft');
      await touchStation(tx, hrsId, this.clock);
      const confirmed = (await readLayout(tx, hrsId, 'confirmed'))!;
      await audit({
        action: 'layout.confirm',
        operator_id: operator,
        hrs_id: hrsId,
        subject: `version ${confirmed.version}`,
        before: before?.layout ?? null,
        after: confirmed.layout,
      });
      return { result: { confirmed, diff }, announce: { hrsIds: [hrsId] } };
    }, actor);
  }

  // Events --------------------------------------------------------------------------------------------

  events(hrsId: string): Promise<EventFixture[]> {
    return allStationEvents(this.sql, hrsId).then((rows) => rows.map(eventOf));
  }

  /** A new event (its id made when left out); 409 when the id is taken. */
  createEvent(actor: Actor, hrsId: string, input: Partial<EventFixture>): Promise<EventFixture> {
    return this.change(async (tx, audit) => {
      const operator = await lockStation(tx, hrsId);
      const event = validEvent({ ...input, id: input.id ?? newEventId() });
      if ((await takenEventIds(tx, hrsId, [event.id])).size > 0) {
        throw new EditError(409, 'conflict', `${hrsId} has an event "${event.id}" already: change it, or choose another id.`);
      }
      await upsertStationEvent(tx, hrsId, event);
      await touchStation(tx, hrsId, this.clock);
      await audit({ action: 'event.create', operator_id: operator, hrs_id: hrsId, subject: event.id, before: null, after: event });
      return { result: event, announce: { hrsIds: [hrsId] } };
    }, actor);
  }

  /** Changes an event's fields (those given); `ends_at` now (or given) ends it. */
  changeEvent(actor: Actor, hrsId: string, id: string, patch: Partial<Omit<EventFixture, 'id'>>, action = 'event.change'): Promise<EventFixture> {
    return this.change(async (tx, audit) => {
      const operator = await lockStation(tx, hrsId);
      const row = await stationEvent(tx, hrsId, id);
      if (!row) throw new EditError(404, 'not_found', `${hrsId} has no event "${id}".`);
      const before = eventOf(row);
      const after = validEvent({ ...before, ...patch, id });
      if (JSON.stringify(before) === JSON.stringify(after)) return { result: after };
      await upsertStationEvent(tx, hrsId, after);
      await touchStation(tx, hrsId, this.clock);
      await audit({ action, operator_id: operator, hrs_id: hrsId, subject: id, before, after });
      return { result: after, announce: { hrsIds: [hrsId] } };
    }, actor);
  }

  /** Ends a running event at `at` (now by default); one that has ended, or not started yet, is refused (409). */
  async endEvent(actor: Actor, hrsId: string, id: string, at = new Date()): Promise<EventFixture> {
    const row = await stationEvent(this.sql, hrsId, id);
    if (!row) throw new EditError(404, 'not_found', `${hrsId} has no event "${id}".`);
    if (row.ends_at && row.ends_at <= at) throw new EditError(409, 'conflict', `The event "${id}" ended already (${row.ends_at.toISOString()}).`);
    if (row.starts_at >= at) {
      throw new EditError(409, 'conflict', `The event "${id}" has not started yet (${row.starts_at.toISOString()}): change its times or its description instead.`);
    }
    return this.changeEvent(actor, hrsId, id, { ends_at: at.toISOString() }, 'event.end');
  }

  /**
   * One event on many stations of an operator at once (the maintenance broadcast): every station gets
   * it with the same id, or none does (a station where the id is taken refuses the whole broadcast).
   */
  broadcastEvent(actor: Actor, operatorId: string, hrsIds: readonly string[], input: Partial<EventFixture>): Promise<{ id: string; hrs_ids: string[]; event: EventFixture }> {
    return this.change(async (tx, audit) => {
      const event = validEvent({ ...input, id: input.id ?? newEventId() });
      // Many stations: the change log's lock before the first of them (lockStation takes it too).
      await lockChangeLog(tx);
      const stations = [...new Set(hrsIds)].sort();
      for (const hrsId of stations) {
        const operator = await lockStation(tx, hrsId);
        if (operator !== operatorId) throw new EditError(422, 'not_operator_station', `${hrsId} is not a station of the operator "${operatorId}".`);
        if ((await takenEventIds(tx, hrsId, [event.id])).size > 0) {
          throw new EditError(409, 'conflict', `${hrsId} has an event "${event.id}" already: nothing was broadcast. Choose another id.`);
        }
        await upsertStationEvent(tx, hrsId, event);
        await touchStation(tx, hrsId, this.clock);
        await audit({ action: 'event.broadcast', operator_id: operatorId, hrs_id: hrsId, subject: event.id, before: null, after: event });
      }
      return { result: { id: event.id, hrs_ids: stations, event }, announce: { hrsIds: stations } };
    }, actor);
  }

  // The photo -----------------------------------------------------------------------------------------

  /**
   * Stores the photo, decoded and re-encoded (./file/photo.ts: JPEG, PNG or WebP told from the bytes,
   * at most MAX_PHOTO_BYTES and MAX_PHOTO_PIXELS, metadata and trailing bytes gone); null removes it.
   */
  async setPhoto(actor: Actor, hrsId: string, bytes: Buffer | null): Promise<StationRecordRow['photo']> {
    let photo: Photo | null = null;
    if (bytes !== null) {
      if (bytes.length === 0) throw new EditError(400, 'invalid_body', 'The photo is empty: send the image\'s bytes as the request body.');
      if (bytes.length > MAX_PHOTO_BYTES) throw new EditError(413, 'too_large', `The photo is ${bytes.length} bytes; a photo may be at most ${MAX_PHOTO_BYTES} bytes.`);
      try {
        photo = await checkedPhoto(bytes);
      } catch (err) {
        if (err instanceof PhotoError) throw new EditError(err.status, err.code, err.message);
        throw err;
      }
    }
    return this.change(async (tx, audit) => {
      await lockChangeLog(tx);
      const before = await stationRecord(tx, hrsId, true);
      if (!before) throw noSuchStation(hrsId);
      if (!(await setStationPhoto(tx, hrsId, photo, this.clock))) return { result: before.photo };
      const after = (await stationRecord(tx, hrsId))!;
      await audit({ action: photo ? 'photo.set' : 'photo.remove', operator_id: before.operator, hrs_id: hrsId, before: before.photo, after: after.photo });
      return { result: after.photo, announce: { hrsIds: [hrsId] } };
    }, actor);
  }

  // Assignments ---------------------------------------------------------------------------------------

  /**
   * The originator's assignment for the station and signal type (`v1`: the legacy transmission state)
   * becomes `state` (null: not assigned). At most one originator is live per station and type.
   */
  setAssignment(actor: Actor, hrsId: string, originatorId: string, signalType: SignalType, state: string | null): Promise<{ state: string | null }> {
    if (state === 'inactive' && signalType !== 'v1') {
      throw new EditError(400, 'invalid_body', 'state: must be live, testing or none for a v2 signal type ("inactive" exists only for v1)');
    }
    return this.change(async (tx, audit) => {
      await lockRegistryFile(tx);
      const operator = await lockStation(tx, hrsId);
      if (originatorId === SANDBOX_ORIGINATOR || !(await originatorRow(tx, originatorId))) throw noSuchOriginator(originatorId);
      const before = (await assignmentState(tx, originatorId, hrsId, signalType)) ?? null;
      if (before === state) return { result: { state } };
      if (state === 'live') {
        const other = await otherLiveOriginator(tx, hrsId, signalType, originatorId);
        if (other !== undefined) {
          throw new EditError(409, 'conflict', `${hrsId} already has a live ${signalType} originator ("${other}"); at most one may be live. Set that one to testing or none first.`);
        }
      }
      await setAssignment(tx, originatorId, hrsId, signalType, state);
      await audit({ action: 'assignment.set', operator_id: operator, hrs_id: hrsId, originator_id: originatorId, subject: signalType, before: { state: before }, after: { state } });
      return { result: { state }, announce: { hrsIds: [hrsId] } };
    }, actor);
  }

  // Originators ---------------------------------------------------------------------------------------

  /** A new import token of the originator: the value returned here once, stored as its SHA-256. */
  createImportToken(
    actor: Actor,
    originatorId: string,
    input: { generation: 'import_v1' | 'import_v2'; name: string; expires_at?: string | undefined },
    now = new Date(),
  ): Promise<{ token: ImportTokenRow; value: string }> {
    const expiresAt = input.expires_at ? new Date(input.expires_at) : new Date(now.getTime() + IMPORT_TOKEN_DEFAULT_DAYS * 86_400_000);
    const problem = checkExpiry(expiresAt, now);
    if (problem) throw new EditError(400, 'invalid_body', `expires_at: ${problem}`);
    return this.change(async (tx, audit) => {
      const originator = await originatorRow(tx, originatorId);
      if (!originator || originatorId === SANDBOX_ORIGINATOR) throw noSuchOriginator(originatorId);
      await lockOriginatorTokens(tx, originatorId);
      const active = await activeImportTokens(tx, originatorId, now);
      if (active >= MAX_ACTIVE_IMPORT_TOKENS) {
        throw new EditError(409, 'token_limit', `The originator "${originatorId}" has ${active} active import tokens; at most ${MAX_ACTIVE_IMPORT_TOKENS} are allowed. Revoke one first.`);
      }
      const value = newTokenValue(input.generation);
      const token = await insertImportToken(tx, {
        generation: input.generation,
        originatorId,
        name: input.name,
        hash: hashToken(value),
        hint: tokenHint(value),
        expiresAt,
        createdBy: actor.userId,
      });
      await audit({ action: 'token.create', originator_id: originatorId, subject: token.id, before: null, after: tokenAudit(token) });
      return { result: { token, value }, announce: { hrsIds: [], tokens: true } };
    }, actor);
  }

  /** Revokes one of the originator's import tokens at once, on every instance; undefined when it has no such token. */
  revokeImportToken(actor: Actor, originatorId: string, tokenId: string): Promise<ImportTokenRow | undefined> {
    return this.change(async (tx, audit) => {
      const revoked = await revokeImportToken(tx, originatorId, tokenId);
      if (!revoked) return { result: undefined };
      if (revoked.before.revoked_at) return { result: revoked.after };
      await audit({ action: 'token.revoke', originator_id: originatorId, subject: tokenId, before: tokenAudit(revoked.before), after: tokenAudit(revoked.after) });
      return { result: revoked.after, announce: { hrsIds: [], tokens: true } };
    }, actor);
  }

  /** The originator's call-log mode (disabled, errors, always); applies on every instance from the next call. */
  setCallLogMode(actor: Actor, originatorId: string, mode: string): Promise<{ id: string; call_log_mode: string }> {
    return this.change(async (tx, audit) => {
      const before = await originatorRow(tx, originatorId);
      if (!before) throw noSuchOriginator(originatorId);
      if (before.call_log_mode === mode) return { result: { id: originatorId, call_log_mode: mode } };
      await setCallLogMode(tx, originatorId, mode);
      await audit({ action: 'originator.call_log_mode', originator_id: originatorId, before: { call_log_mode: before.call_log_mode }, after: { call_log_mode: mode } });
      // Not a station's change: every instance reloads (the modes live in the registry cache).
      return { result: { id: originatorId, call_log_mode: mode }, announce: { hrsIds: [], registry: true } };
    }, actor);
  }

  // Accounts ------------------------------------------------------------------------------------------

  /** The account's roles become exactly these; unknown operators or originators are refused together. */
  setRoles(actor: Actor, userId: string, roles: { admin: boolean; operators: string[]; originators: string[] }): Promise<UserRoles> {
    return this.change(async (tx, audit) => {
      const before = await userRoles(tx, userId);
      if (!before) throw new EditError(404, 'not_found', `No user "${userId}".`);
      const operators = [...new Set(roles.operators)].sort();
      const originators = [...new Set(roles.originators)].sort();
      const knownOperators = await knownIds(tx, 'operators', operators);
      const knownOriginators = await knownIds(tx, 'originators', originators);
      const problems = [
        ...operators.filter((id) => !knownOperators.has(id)).map((id) => `operators: unknown operator "${id}"`),
        ...originators.filter((id) => !knownOriginators.has(id) || id === SANDBOX_ORIGINATOR).map((id) => `originators: unknown originator "${id}"`),
      ];
      if (problems.length > 0) throw new EditError(400, 'invalid_body', problems.join('; '));
      await replaceUserRoles(tx, userId, { admin: roles.admin, operators, originators });
      const after = (await userRoles(tx, userId))!;
      if (JSON.stringify(before) !== JSON.stringify(after)) {
        await audit({ action: 'user.roles', subject: userId, before: rolesAudit(before), after: rolesAudit(after) });
      }
      return { result: after };
    }, actor);
  }

  /** An audit entry for a change made elsewhere (the admin API's account and token routes), in its own transaction. */
  async record(actor: Actor, entry: Omit<AuditEntry, 'actor' | 'via'>): Promise<void> {
    await this.sql.begin((tx) => insertAudit(tx, { ...entry, actor: actor.id, via: actor.via }));
  }
}
