import type { z } from 'zod';
import type { QuerySchema } from '../../http/query.js';
import type { Sql } from '../../../db/connect.js';
import { stationOperator } from '../../../db/queries/portal-registry.js';
import { adminDenial, operatorDenial, originatorDenial } from '../../domain/portal/roles.js';
import type { RouteDoc } from '../../http/contract.js';
import { HttpError, type Reply } from '../../http/errors.js';
import type { Family } from '../../http/family.js';
import type { Method } from '../../http/router.js';
import type { HttpServer } from '../../http/server.js';
import type { Request } from '../../http/request.js';
import { EditError } from '../../registry/editor.js';
import { HRS_ID_PATTERN } from '../../domain/vocabulary.js';
import { portalUserOf, type PortalPrincipal } from './family.js';
import { PORTAL_PATH } from './docs/components.js';
import { pathParams } from '../../http/parameters.js';

/**
 * Authorisation and the small things every operator and originator route does: the station's
 * operator (404 for no station, 403 naming the membership the account lacks), the originator (the
 * same) and refused registry changes (src/registry/editor.ts) as problem bodies. Keyset pages are
 * in ../accounts/pages.ts, bodies and their refusals in ../accounts/input.ts (the admin API shares them).
 */

export const forbidden = (detail: string) => new HttpError(403, 'forbidden', detail);

/** The station's operator, when the account may act for it: 404 for no station, 403 without the membership. */
export async function stationAccess(sql: Sql, req: Request, what = 'This station'): Promise<{ hrsId: string; operator: string; user: PortalPrincipal }> {
  const hrsId = req.params.hrs_id!;
  const user = portalUserOf(req);
  const operator = HRS_ID_PATTERN.test(hrsId) ? await stationOperator(sql, hrsId) : undefined;
  if (operator === undefined) throw new HttpError(404, 'not_found', `No station "${hrsId}".`);
  const denial = operatorDenial(user.roles, operator, what);
  if (denial) throw forbidden(denial);
  return { hrsId, operator, user };
}

/** The operator named in the path, when the account may act for it (403 otherwise). */
export function operatorAccess(req: Request): { operator: string; user: PortalPrincipal } {
  const operator = req.params.operator_id!;
  const user = portalUserOf(req);
  const denial = operatorDenial(user.roles, operator, 'This');
  if (denial) throw forbidden(denial);
  return { operator, user };
}

/** The originator named in the path, when the account may act for it (403 otherwise). */
export function originatorAccess(req: Request): { originator: string; user: PortalPrincipal } {
  const originator = req.params.originator_id!;
  const user = portalUserOf(req);
  const denial = originatorDenial(user.roles, originator);
  if (denial) throw forbidden(denial);
  return { originator, user };
}

export function adminAccess(req: Request): PortalPrincipal {
  const user = portalUserOf(req);
  const denial = adminDenial(user.roles);
  if (denial) throw forbidden(denial);
  return user;
}

/** The actor of a portal change, for the audit trail. */
export const portalActor = (user: PortalPrincipal) => ({ id: `user:${user.id}`, via: 'portal' as const, userId: user.id });

/**
 * Registers the routes of operator staff and originator managers (`route(method, path, doc, handler)`),
 * their path parameters those the path names (PORTAL_PATH):
 * a refused registry change is answered as its problem, and a JSON body (`body`, see ../accounts/input.ts) is
 * checked by the core before the handler gets it.
 */
export function registryRoute(server: HttpServer, family: Family) {
  return <B extends z.ZodType = z.ZodNever>(
    method: Method,
    path: string,
    doc: RouteDoc,
    handler: (req: Request, body: z.output<B>) => Promise<Reply>,
    extra: { body?: B | true; maxBodyBytes?: number; query?: QuerySchema } = {},
  ) => {
    const params = pathParams(path, PORTAL_PATH);
    return server.route({ family, method, path, doc, ...(params ? { params } : {}), handler: (req, input) => handler(req, input.body as z.output<B>).catch(editFailure), ...extra });
  };
}

/** A refused registry change as the HTTP error it is answered with; anything else unchanged. */
export function editFailure(err: unknown): never {
  if (err instanceof EditError) throw new HttpError(err.status, err.code, err.message);
  throw err;
}

