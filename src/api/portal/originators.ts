import type { Sql } from '../../../db/connect.js';
import { listCallLogs } from '../../../db/queries/call-logs.js';
import { importTokens, originatorAssignments, originatorRow, type ImportTokenRow } from '../../../db/queries/portal-registry.js';
import { SANDBOX_ORIGINATOR } from '../../domain/sandbox.js';
import { HttpError, json } from '../../http/errors.js';
import type { Family } from '../../http/family.js';
import type { HttpServer } from '../../http/server.js';
import { MAX_ACTIVE_IMPORT_TOKENS, IMPORT_TOKEN_DEFAULT_DAYS, type RegistryEditor } from '../../registry/editor.js';
import { callLogView, FAMILY_PREFIXES } from '../call-log.js';
import { newImportTokenSchema } from './bodies.js';
import { originatorDocs } from './docs/originators.js';
import { decodeCursor, encodeCursor, nextLink, pageQuery } from '../accounts/pages.js';
import { originatorAccess, portalActor, registryRoute } from './access.js';
import { portalBody } from '../accounts/input.js';
import { callLogQuery } from './docs/components.js';
import { parseInstant } from '../../http/dates.js';
import { portalUserOf } from './family.js';

/**
 * The originator managers' part of the portal (`/portal/v1/originators/...`): the originators the
 * account manages; one originator with the stations and assignments it reports on; its import tokens
 * (v2 and v1/v1.1: made with a name and an expiry, the value shown once in the answer, listed with a
 * hint, revoked at once everywhere); its API call log, newest first, a page at a time.
 */

const NO_STORE = { 'Cache-Control': 'no-store' };

export function importTokenView(t: ImportTokenRow, now = Date.now()) {
  const state = t.revoked_at ? 'revoked' : t.expires_at && t.expires_at.getTime() <= now ? 'expired' : 'active';
  return {
    id: t.id,
    generation: t.generation,
    name: t.name,
    hint: t.hint,
    created_at: t.created_at.toISOString(),
    created_by: t.created_by,
    expires_at: t.expires_at?.toISOString() ?? null,
    last_used_at: t.last_used_at?.toISOString() ?? null,
    revoked_at: t.revoked_at?.toISOString() ?? null,
    state,
  };
}

const TOKEN_LIMITS = { max_active: MAX_ACTIVE_IMPORT_TOKENS, default_days: IMPORT_TOKEN_DEFAULT_DAYS, min_days: 1, max_days: 366 };

async function existing(sql: Sql, id: string) {
  const row = id === SANDBOX_ORIGINATOR ? undefined : await originatorRow(sql, id);
  if (!row) throw new HttpError(404, 'not_found', `No originator "${id}".`);
  return row;
}

export function portalOriginatorRoutes(server: HttpServer, family: Family, deps: { sql: Sql; editor: RegistryEditor; allOriginators: () => Promise<{ id: string; name: string }[]>; recordTokenUse?: () => Promise<unknown> }): void {
  const { sql, editor } = deps;
  const docs = originatorDocs();
  const route = registryRoute(server, family);

  route('GET', '/portal/v1/originators', docs.listOriginators, async (req) => {
    const { roles } = portalUserOf(req);
    const all = await deps.allOriginators();
    return json(200, { originators: roles.admin ? all : all.filter((o) => roles.originators.has(o.id)) }, NO_STORE);
  });

  route('GET', '/portal/v1/originators/:originator_id', docs.getOriginator, async (req) => {
    const { originator } = originatorAccess(req);
    const row = await existing(sql, originator);
    const assignments = await originatorAssignments(sql, originator);
    const stations = new Map<string, { hrs_id: string; name: string; assignments: Record<string, string> }>();
    for (const a of assignments) {
      const entry = stations.get(a.hrs_id) ?? { hrs_id: a.hrs_id, name: a.station_name, assignments: {} };
      entry.assignments[a.signal_type] = a.state;
      stations.set(a.hrs_id, entry);
    }
    return json(200, { id: row.id, name: row.name, call_log_mode: row.call_log_mode, stations: [...stations.values()] }, NO_STORE);
  });

  route('GET', '/portal/v1/originators/:originator_id/tokens', docs.listImportTokens, async (req) => {
    const { originator } = originatorAccess(req);
    await existing(sql, originator);
    await deps.recordTokenUse?.();
    return json(200, { tokens: (await importTokens(sql, originator)).map((t) => importTokenView(t)), limits: TOKEN_LIMITS }, NO_STORE);
  });

  route('POST', '/portal/v1/originators/:originator_id/tokens', docs.createImportToken, async (req, input) => {
    const { originator, user } = originatorAccess(req);
    const { token, value } = await editor.createImportToken(portalActor(user), originator, input);
    return json(201, { token: importTokenView(token), value }, NO_STORE);
  }, { body: portalBody(newImportTokenSchema) });

  route('POST', '/portal/v1/originators/:originator_id/tokens/:token_id/revoke', docs.revokeImportToken, async (req) => {
    const { originator, user } = originatorAccess(req);
    const id = req.params.token_id!;
    const revoked = /^\d{1,18}$/.test(id) ? await editor.revokeImportToken(portalActor(user), originator, id) : undefined;
    if (!revoked) throw new HttpError(404, 'not_found', `The originator "${originator}" has no import token ${id}.`);
    return json(200, { token: importTokenView(revoked) });
  });

  route('GET', '/portal/v1/originators/:originator_id/call-logs', docs.originatorCallLogs, async (req) => {
    const { originator } = originatorAccess(req);
    await existing(sql, originator);
    const { limit, cursor } = pageQuery(req);
    const familyName = req.query.get('family');
    if (familyName !== null && !(familyName in FAMILY_PREFIXES)) {
      throw new HttpError(400, 'invalid_query', `family: must be one of ${Object.keys(FAMILY_PREFIXES).join(', ')}`);
    }
    for (const name of ['state', 'originator', 'operator', 'hrs_id', 'actor']) {
      if (req.query.has(name)) throw new HttpError(400, 'invalid_query', `unknown parameter(s): ${name}`);
    }
    let before: { time: Date; id: string } | undefined;
    if (cursor) {
      const [time, id] = decodeCursor(cursor, 2) as [string, string];
      if (!/^\d{1,18}$/.test(id) || !parseInstant(time).ok) throw new HttpError(400, 'invalid_query', 'cursor: not a cursor of this list');
      before = { time: new Date(time), id };
    }
    const rows = await listCallLogs(sql, {
      originator,
      limit,
      before,
      pathPrefix: familyName === null ? undefined : FAMILY_PREFIXES[familyName as keyof typeof FAMILY_PREFIXES],
    });
    const last = rows.at(-1);
    return json(200, {
      call_logs: rows.map(callLogView),
      next: nextLink(req, rows.length, limit, () => encodeCursor([last!.request_time.toISOString(), last!.id])),
    }, NO_STORE);
  }, { query: callLogQuery() });
}
