import { z } from 'zod';
import type { Sql } from '../../../db/connect.js';
import { userRoles } from '../../../db/queries/roles.js';
import { listTransmissions } from '../../../db/queries/signals.js';
import { HttpError, json, notFound } from '../../http/errors.js';
import type { Family } from '../../http/family.js';
import type { Request } from '../../http/request.js';
import type { HttpServer } from '../../http/server.js';
import { EditError, type RegistryEditor } from '../../registry/editor.js';
import { ADMIN_ACTOR } from './actor.js';
import { callLogModeSchema, rolesRequestSchema } from '../accounts/bodies.js';
import { auditPage, decodeCursor, encodeCursor, nextLink } from '../accounts/pages.js';
import { portalBody } from '../accounts/input.js';
import { parseQuery, queryNames } from './query.js';
import { parseInstant } from '../../http/dates.js';

/**
 * The registry's administration beside the portal's:
 * - `GET`/`PUT /admin/v1/users/{id}/roles` {admin, operators, originators}: what the account may do in
 *   the portal (the whole set at once; audited);
 * - `PATCH /admin/v1/originators/{id}` {call_log_mode}: applies on every instance from the next call;
 * - `GET /admin/v1/transmissions?state=testing|unassigned&originator=`: the latest unpublished
 *   transmission per originator, station and category with its payload, newest first, a page at a time;
 * - `GET /admin/v1/audit?operator=&hrs_id=&originator=&actor=`: the audit trail, newest first.
 */


const edited = (err: unknown): never => {
  if (err instanceof EditError) throw new HttpError(err.status, err.code, err.message);
  throw err;
};

const transmissionsQuery = z.strictObject({
  state: z.enum(['testing', 'unassigned'], { error: 'must be testing or unassigned' }),
  originator: z.string().min(1).max(64).optional(),
  limit: z
    .string()
    .regex(/^\d{1,4}$/, 'must be a whole number from 1 to 500')
    .transform(Number)
    .pipe(z.number().min(1, 'must be from 1 to 500').max(500, 'must be from 1 to 500'))
    .default(100),
  cursor: z.string().max(1000).optional(),
});

const auditQuery = z.strictObject({
  operator: z.string().max(64).optional(),
  hrs_id: z.string().max(64).optional(),
  originator: z.string().max(64).optional(),
  actor: z.string().max(200).optional(),
  limit: z.string().optional(),
  cursor: z.string().optional(),
});

export function adminRegistryRoutes(server: HttpServer, family: Family, deps: { sql: Sql; editor: RegistryEditor }): void {
  const { sql, editor } = deps;
  server.route({
    family,
    method: 'GET',
    path: '/admin/v1/users/:id/roles',
    handler: async (req) => {
      const roles = await userRoles(sql, req.params.id!);
      if (!roles) throw notFound('No such user.');
      return json(200, roles);
    },
  });
  server.route({
    family,
    method: 'PUT',
    path: '/admin/v1/users/:id/roles',
    body: portalBody(rolesRequestSchema),
    handler: async (req, input) => {
      return json(200, await editor.setRoles(ADMIN_ACTOR, req.params.id!, input.body!).catch(edited));
    },
  });
  server.route({
    family,
    method: 'PATCH',
    path: '/admin/v1/originators/:id',
    body: portalBody(callLogModeSchema),
    handler: async (req, input) => {
      return json(200, await editor.setCallLogMode(ADMIN_ACTOR, req.params.id!, input.body!.call_log_mode).catch(edited));
    },
  });
  server.route({
    family,
    method: 'GET',
    path: '/admin/v1/transmissions',
    query: queryNames(transmissionsQuery),
    handler: async (req: Request) => {
      const { state, originator, limit, cursor } = parseQuery(transmissionsQuery, req);
      let after: { received_at: string; key: string } | undefined;
      if (cursor) {
        const [receivedAt, key] = decodeCursor(cursor, 2) as [string, string];
        if (!parseInstant(receivedAt).ok) throw new HttpError(400, 'invalid_query', 'cursor: not a cursor of this list');
        after = { received_at: receivedAt, key };
      }
      const rows = await listTransmissions(sql, { state, originator, after, limit });
      const last = rows.at(-1);
      return json(200, {
        transmissions: rows.map((r) => ({ ...r, measured_at: r.measured_at.toISOString(), received_at: r.received_at.toISOString() })),
        next: nextLink(req, rows.length, limit, () => encodeCursor([last!.received_at.toISOString(), `${last!.originator} ${last!.hrs_id} ${last!.category}`])),
      });
    },
  });
  server.route({
    family,
    method: 'GET',
    path: '/admin/v1/audit',
    query: queryNames(auditQuery),
    handler: async (req) => {
      const q = parseQuery(auditQuery, req);
      return auditPage(sql, req, {
        ...(q.operator ? { operator: q.operator } : {}),
        ...(q.hrs_id ? { hrsId: q.hrs_id } : {}),
        ...(q.originator ? { originator: q.originator } : {}),
        ...(q.actor ? { actor: q.actor } : {}),
      });
    },
  });
}
