import { waitingByOption, waitingCounts } from '../../../db/queries/driver-alerts.js';
import { problemHint, type StationVerdict } from '../../domain/status/verdict.js';
import { isDeepStrictEqual } from 'node:util';
import type { Sql } from '../../../db/connect.js';
import { listPortalStations, listOriginators, stationAssignments, stationRecord, type StationRecordRow, type StoredLayout } from '../../../db/queries/portal-registry.js';
import { stationPhoto } from '../../../db/queries/stations.js';
import { SANDBOX_ORIGINATOR } from '../../domain/sandbox.js';
import { HttpError, json } from '../../http/errors.js';
import type { Family } from '../../http/family.js';
import type { Request } from '../../http/request.js';
import type { HttpServer } from '../../http/server.js';
import { MAX_PHOTO_BYTES } from '../../registry/file/photo.js';
import { SIGNAL_TYPES, type RegistryEditor, type SignalType } from '../../registry/editor.js';
import { recordOf } from '../../registry/edit-rules.js';
import { assignmentRequestSchema, broadcastSchema, confirmSchema, draftLayoutSchema, endEventSchema, eventPatchSchema, newEventSchema, stationPutSchema } from './bodies.js';
import { auditPage } from '../accounts/pages.js';
import { operatorAccess, portalActor, registryRoute, stationAccess } from './access.js';
import { portalUserOf } from './family.js';
import { z } from 'zod';
import { pageQueryFields, photoQuery } from './docs/components.js';
import { portalBody } from '../accounts/input.js';
import { stationDocs } from './docs/stations.js';
import { checkFuelTypesAgainst } from '../../domain/portal/fuel-types.js';
import { diffLayouts } from '../../domain/layout-diff.js';

/**
 * The operator staff's part of the portal (`/portal/v1/stations/...`, `/portal/v1/operators/...`):
 * - stations: the list the account may see; one station's record (GET, PUT with the registry file's
 *   rules and messages);
 * - the layout: the confirmed one and the draft (GET), the draft saved whole (PUT) or thrown away
 *   (DELETE), the diff confirming would make, the confirmation (POST), atomic and at once everywhere;
 * - events: listed (past ones too), created, changed, ended; one event broadcast to many stations;
 * - the photo: uploaded as the request body (JPEG, PNG or WebP, decoded and re-encoded, at most 5 MiB), removed;
 * - assignments: per originator and signal type (`v1`: the legacy transmission state);
 * - the audit trail of a station, and of all the operator's stations.
 * Every change goes through src/registry/editor.ts (one transaction with its audit entry, announced to
 * every instance before the answer).
 */

const NO_STORE = { 'Cache-Control': 'no-store' };

export function stationView(r: StationRecordRow) {
  return { hrs_id: r.hrs_id, operator: r.operator, ...recordOf(r), photo: r.photo, static_modified_at: r.static_modified_at.toISOString() };
}

export const layoutView = (l: StoredLayout | undefined) =>
  l ? { version: l.version, created_at: l.created_at.toISOString(), confirmed_at: l.confirmed_at?.toISOString() ?? null, layout: l.layout } : null;



/**
 * The read-only fields a `PUT` of a station sent back, against what `GET` shows now (inside the change's
 * transaction, the station locked): each one left out or equal is ignored; one that differs is a 400
 * `read_only` naming it; a `static_modified_at` other than the station's is a 409 (it changed since it
 * was read).
 */
function checkReadOnly(
  current: ReturnType<typeof stationView>,
  sent: { hrs_id?: string; operator?: string; photo?: unknown; static_modified_at?: string },
): void {
  const problems: string[] = [];
  if (sent.hrs_id !== undefined && sent.hrs_id !== current.hrs_id) {
    problems.push(`hrs_id: read-only: this is station "${current.hrs_id}" (a station's id never changes)`);
  }
  if (sent.operator !== undefined && sent.operator !== current.operator) {
    problems.push(`operator: read-only: the station belongs to "${current.operator}" (an admin moves a station to another operator with a registry file)`);
  }
  if (sent.photo !== undefined && !isDeepStrictEqual(sent.photo, current.photo)) {
    problems.push(`photo: read-only: upload a photo with PUT /portal/v1/stations/${current.hrs_id}/photo, remove it with DELETE`);
  }
  if (problems.length > 0) throw new HttpError(400, 'read_only', `${problems.join('; ')}. Nothing was changed.`);
  if (sent.static_modified_at !== undefined && Date.parse(sent.static_modified_at) !== Date.parse(current.static_modified_at)) {
    throw new HttpError(
      409,
      'version_conflict',
      `${current.hrs_id} changed at ${current.static_modified_at}, after the copy sent (static_modified_at ${sent.static_modified_at}): ` +
        'nothing was changed. Read it again, redo the change and send it.',
    );
  }
}

function signalTypeOf(req: Request): SignalType {
  const type = req.params.signal_type!;
  if (!(SIGNAL_TYPES as readonly string[]).includes(type)) {
    throw new HttpError(404, 'not_found', `No signal type "${type}": one of ${SIGNAL_TYPES.join(', ')}.`);
  }
  return type as SignalType;
}

export function portalStationRoutes(
  server: HttpServer,
  family: Family,
  deps: { sql: Sql; editor: RegistryEditor; verdicts?: { of(hrsId: string): StationVerdict | undefined } },
): void {
  const { sql, editor } = deps;
  const docs = stationDocs();
  const route = registryRoute(server, family);
  const auditQuery = z.object(pageQueryFields());

  route('GET', '/portal/v1/stations', docs.listStations, async (req) => {
    const { roles } = portalUserOf(req);
    const stations = await listPortalStations(sql, roles.admin ? null : [...roles.operators]);
    const waiting = await waitingCounts(sql, roles.admin ? null : stations.map((s) => s.hrs_id));
    return json(200, {
      stations: stations.map((s) => {
        const verdict = deps.verdicts?.of(s.hrs_id);
        const counts = waiting.get(s.hrs_id);
        return {
          ...s, static_modified_at: s.static_modified_at.toISOString(), status: verdict?.status ?? null, hint: problemHint(verdict, s.layout_version !== null),
          drivers_waiting: { available: counts?.up ?? 0, unavailable: counts?.down ?? 0 },
        };
      }),
    }, NO_STORE);
  });

  route('GET', '/portal/v1/stations/:hrs_id', docs.getStation, async (req) => {
    const { hrsId } = await stationAccess(sql, req);
    return json(200, stationView((await stationRecord(sql, hrsId))!), NO_STORE);
  });

  route('PUT', '/portal/v1/stations/:hrs_id', docs.putStation, async (req, body) => {
    const { hrsId, user } = await stationAccess(sql, req);
    const { hrs_id, operator, photo, static_modified_at, ...record } = body;
    const check = (before: StationRecordRow) => checkReadOnly(stationView(before), { hrs_id, operator, photo, static_modified_at });
    return json(200, stationView(await editor.updateStation(portalActor(user), hrsId, record, check)));
  }, { body: portalBody(stationPutSchema) });

  // The layout ---------------------------------------------------------------------------------------

  route('GET', '/portal/v1/stations/:hrs_id/layout', docs.getLayouts, async (req) => {
    const { hrsId } = await stationAccess(sql, req);
    const { confirmed, draft } = await editor.layouts(hrsId);
    return json(200, { confirmed: layoutView(confirmed), draft: layoutView(draft) }, NO_STORE);
  });

  /** The station's v1 fuel types against a draft: what the editor offers to confirm with it. */
  const fuelTypesAgainst = async (hrsId: string, draft: StoredLayout) => checkFuelTypesAgainst(draft.layout, (await stationRecord(sql, hrsId))!.v1_fuel_types);

  route('PUT', '/portal/v1/stations/:hrs_id/layout/draft', docs.putDraft, async (req, layout) => {
    const { hrsId, user } = await stationAccess(sql, req);
    const { draft, diff } = await editor.putDraft(portalActor(user), hrsId, layout);
    return json(200, { draft: layoutView(draft), diff, v1_fuel_types: await fuelTypesAgainst(hrsId, draft) });
  }, { body: portalBody(draftLayoutSchema) });

  route('DELETE', '/portal/v1/stations/:hrs_id/layout/draft', docs.discardDraft, async (req) => {
    const { hrsId, user } = await stationAccess(sql, req);
    if (!(await editor.discardDraft(portalActor(user), hrsId))) throw new HttpError(404, 'not_found', `${hrsId} has no draft layout.`);
    return { status: 204 };
  });

  route('GET', '/portal/v1/stations/:hrs_id/layout/diff', docs.diffDraft, async (req) => {
    const { hrsId } = await stationAccess(sql, req);
    const { confirmed, draft } = await editor.layouts(hrsId);
    if (!draft) throw new HttpError(404, 'not_found', `${hrsId} has no draft layout: save one first.`);
    return json(200, { diff: diffLayouts(confirmed?.layout ?? null, draft.layout), v1_fuel_types: await fuelTypesAgainst(hrsId, draft) }, NO_STORE);
  });

  route('POST', '/portal/v1/stations/:hrs_id/layout/confirm', docs.confirmDraft, async (req, body) => {
    const { hrsId, user } = await stationAccess(sql, req);
    const { expected_version, v1_fuel_types } = body ?? {};
    const { confirmed, diff } = await editor.confirmDraft(portalActor(user), hrsId, expected_version, v1_fuel_types);
    return json(200, { confirmed: layoutView(confirmed), diff });
  }, { body: portalBody(confirmSchema).optional() });

  // Events -------------------------------------------------------------------------------------------

  route('GET', '/portal/v1/stations/:hrs_id/events', docs.listEvents, async (req) => {
    const { hrsId } = await stationAccess(sql, req);
    return json(200, { events: await editor.events(hrsId) }, NO_STORE);
  });

  route('POST', '/portal/v1/stations/:hrs_id/events', docs.createEvent, async (req, event) => {
    const { hrsId, user } = await stationAccess(sql, req);
    return json(201, await editor.createEvent(portalActor(user), hrsId, event));
  }, { body: portalBody(newEventSchema) });

  route('PATCH', '/portal/v1/stations/:hrs_id/events/:event_id', docs.changeEvent, async (req, body) => {
    const { hrsId, user } = await stationAccess(sql, req);
    const { id, ...patch } = body;
    if (id !== undefined && id !== req.params.event_id) {
      throw new HttpError(400, 'read_only', `id: read-only: this is the event "${req.params.event_id}" (an event's id never changes). Nothing was changed.`);
    }
    const defined = Object.fromEntries(Object.entries(patch).filter(([, v]) => v !== undefined));
    return json(200, await editor.changeEvent(portalActor(user), hrsId, req.params.event_id!, defined));
  }, { body: portalBody(eventPatchSchema) });

  route('POST', '/portal/v1/stations/:hrs_id/events/:event_id/end', docs.endEvent, async (req, body) => {
    const { hrsId, user } = await stationAccess(sql, req);
    const { ends_at } = body ?? {};
    return json(200, await editor.endEvent(portalActor(user), hrsId, req.params.event_id!, ends_at ? new Date(ends_at) : undefined));
  }, { body: portalBody(endEventSchema).optional() });

  route('POST', '/portal/v1/operators/:operator_id/events', docs.broadcastEvent, async (req, body) => {
    const { operator, user } = operatorAccess(req);
    const { hrs_ids, ...event } = body;
    const stations = hrs_ids ?? (await listPortalStations(sql, [operator])).map((s) => s.hrs_id);
    if (stations.length === 0) throw new HttpError(409, 'conflict', `The operator "${operator}" has no stations to broadcast to.`);
    return json(201, await editor.broadcastEvent(portalActor(user), operator, stations, event));
  }, { body: portalBody(broadcastSchema) });

  // The photo ----------------------------------------------------------------------------------------

  route('GET', '/portal/v1/stations/:hrs_id/photo', docs.getPhoto, async (req) => {
    const { hrsId } = await stationAccess(sql, req);
    const photo = await stationPhoto(sql, hrsId);
    if (!photo) throw new HttpError(404, 'not_found', `${hrsId} has no photo.`);
    return { status: 200, headers: { 'Content-Type': photo.mediaType, 'X-Content-Type-Options': 'nosniff', ...NO_STORE }, body: photo.bytes };
  }, { query: photoQuery() }); // `v`: the page's cache-buster (the photo's digest)

  route('PUT', '/portal/v1/stations/:hrs_id/photo', docs.putPhoto, async (req) => {
    const { hrsId, user } = await stationAccess(sql, req);
    return json(200, { photo: await editor.setPhoto(portalActor(user), hrsId, req.body ?? Buffer.alloc(0)) });
  }, { body: true, maxBodyBytes: MAX_PHOTO_BYTES });

  route('DELETE', '/portal/v1/stations/:hrs_id/photo', docs.deletePhoto, async (req) => {
    const { hrsId, user } = await stationAccess(sql, req);
    await editor.setPhoto(portalActor(user), hrsId, null);
    return { status: 204 };
  });

  // Assignments --------------------------------------------------------------------------------------

  route('GET', '/portal/v1/stations/:hrs_id/assignments', docs.listAssignments, async (req) => {
    const { hrsId } = await stationAccess(sql, req);
    const [assignments, originators] = await Promise.all([stationAssignments(sql, hrsId), listOriginators(sql, SANDBOX_ORIGINATOR)]);
    return json(200, {
      assignments: assignments.map((a) => ({ originator: a.originator, signal_type: a.signal_type, state: a.state, updated_at: a.updated_at.toISOString() })),
      originators,
      signal_types: SIGNAL_TYPES,
    }, NO_STORE);
  });

  route('PUT', '/portal/v1/stations/:hrs_id/assignments/:originator_id/:signal_type', docs.putAssignment, async (req, body) => {
    const { hrsId, user } = await stationAccess(sql, req);
    const signalType = signalTypeOf(req);
    const { state } = body;
    const originator = req.params.originator_id!;
    const result = await editor.setAssignment(portalActor(user), hrsId, originator, signalType, state === 'none' ? null : state);
    return json(200, { hrs_id: hrsId, originator, signal_type: signalType, state: result.state ?? 'none' });
  }, { body: portalBody(assignmentRequestSchema) });

  // The audit trail ----------------------------------------------------------------------------------

  route('GET', '/portal/v1/stations/:hrs_id/drivers-waiting', docs.driversWaiting, async (req) => {
    const { hrsId } = await stationAccess(sql, req);
    const options = await waitingByOption(sql, hrsId);
    return json(200, { hrs_id: hrsId, fuelling_options: options.map((o) => ({ fuelling_option: o.fuelling_option, available: o.up, unavailable: o.down })) }, NO_STORE);
  });

  route('GET', '/portal/v1/stations/:hrs_id/audit', docs.stationAudit, async (req) => {
    const { hrsId } = await stationAccess(sql, req);
    return auditPage(sql, req, { hrsId });
  }, { query: auditQuery });

  route('GET', '/portal/v1/operators/:operator_id/audit', docs.operatorAudit, async (req) => {
    const { operator } = operatorAccess(req);
    return auditPage(sql, req, { operator });
  }, { query: auditQuery });
}
