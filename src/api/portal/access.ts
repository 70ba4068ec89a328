import type { z } from 'zod';
import { CACHE_BUSTER, type QuerySchema } from '../../http/query.js';
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

/**
 * Authorisation and the small things every operator and originator route does: the station's
 * operator (404 for no station, 403 naming the membership the account lacks), the originator (the
 * same), refused registry changes (src/registry/editor.ts) as problem bodies, and keyset pages. Bodies
 * and their refusals: ./input.ts.
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
 * Registers the routes of operator staff and originator managers (`route(method, path, doc, handler)`):
 * a refused registry change is answered as its problem, and a JSON body (`body`, see ./input.ts) is
 * checked by the core before the handler gets it.
 */
export function registryRoute(server: HttpServer, family: Family) {
  return <B extends z.ZodType = z.ZodNever>(
    method: Method,
    path: string,
    doc: RouteDoc,
    handler: (req: Request, body: z.output<B>) => Promise<Reply>,
    extra: { body?: B | true; maxBodyBytes?: number; query?: QuerySchema } = {},
  ) => server.route({ family, method, path, doc, handler: (req, input) => handler(req, input.body as z.output<B>).catch(editFailure), ...extra });
}

/** A refused registry change as the HTTP error it is answered with; anything else unchanged. */
export function editFailure(err: unknown): never {
  if (err instanceof EditError) throw new HttpError(err.status, err.code, err.message);
  throw err;
}

export const PAGE_DEFAULT = 100;
export const PAGE_MAX = 500;

/** `limit` (1 to PAGE_MAX, PAGE_DEFAULT when left out) and the opaque `cursor` of a keyset page. */
export function pageQuery(req: Request): { limit: number; cursor: string | undefined } {
  const unknown = [...req.query.keys()].filter((k) => !['limit', 'cursor', 'family', 'state', 'originator', 'operator', 'hrs_id', 'actor', CACHE_BUSTER].includes(k));
  if (unknown.length > 0) throw new HttpError(400, 'invalid_query', `unknown parameter(s): ${unknown.join(', ')}`);
  const raw = req.query.get('limit');
  let limit = PAGE_DEFAULT;
  if (raw !== null) {
    if (!/^\d{1,4}$/.test(raw) || Number(raw) < 1 || Number(raw) > PAGE_MAX) {
      throw new HttpError(400, 'invalid_query', `limit: must be a whole number from 1 to ${PAGE_MAX}`);
    }
    limit = Number(raw);
  }
  return { limit, cursor: req.query.get('cursor') ?? undefined };
}

/** An opaque cursor from the values that place an entry in its order, and back (400 when malformed). */
export const encodeCursor = (values: readonly string[]) => Buffer.from(JSON.stringify(values)).toString('base64url');
export function decodeCursor(cursor: string, size: number): string[] {
  try {
    const values = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8')) as unknown;
    if (Array.isArray(values) && values.length === size && values.every((v) => typeof v === 'string' && v.length < 200 && !v.includes('\u0000'))) return values as string[];
  } catch {
    // answered below
  }
  throw new HttpError(400, 'invalid_query', 'cursor: not a cursor of this list; use the `next` link of a previous page');
}

/** The `next` link of a page: the request's path and query with the cursor of its last entry, or null on the last page. */
export function nextLink(req: Request, rows: number, limit: number, cursor: () => string): string | null {
  if (rows < limit) return null;
  const query = new URLSearchParams(req.query);
  query.set('cursor', cursor());
  return `${req.path}?${query.toString()}`;
}
