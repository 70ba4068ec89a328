import { CACHE_BUSTER } from '../../http/query.js';
import type { z } from 'zod';
import type { Sql } from '../../../db/connect.js';
import { stationOperator } from '../../../db/queries/portal-registry.js';
import { adminDenial, operatorDenial, originatorDenial } from '../../domain/portal/roles.js';
import { HttpError } from '../../http/errors.js';
import { parseJson, type Request } from '../../http/request.js';
import { EditError } from '../../registry/editor.js';
import { HRS_ID_PATTERN } from '../../domain/vocabulary.js';
import { textFault, textFaults } from '../../domain/text.js';
import { portalUserOf, type PortalPrincipal } from './family.js';

/**
 * Authorisation and the small things every operator and originator route does: the station's
 * operator (404 for no station, 403 naming the membership the account lacks), the originator (the
 * same), bodies through their schemas (400 `invalid_body` naming each field), refused registry changes
 * (src/registry/editor.ts) as problem bodies, and keyset pages.
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

/** A field's path as the `detail` of a 400 names it: `dispensers.0.external_id`, `(body)` for the whole body. */
export const fieldName = (path: readonly PropertyKey[]) =>
  path.map((part) => (typeof part === 'string' && textFault(part) ? JSON.stringify(part) : String(part))).join('.') || '(body)';

/**
 * A JSON body of the portal or the admin API through its schema: 400 `invalid_body` with each issue as
 * `field: message`. First every string and key of the body meets the platform's text rule
 * (src/domain/text.ts: no NUL, no unpaired surrogate), whatever field it is in, so nothing the
 * database cannot store faithfully reaches it; then the schema (names not blank, and the rest).
 */
export function bodyOf<T extends z.ZodType>(schema: T, req: Request): z.output<T> {
  const input = parseJson(req);
  const faults = textFaults(input);
  if (faults.length > 0) throw new HttpError(400, 'invalid_body', faults.map((f) => `${fieldName(f.path)}: ${f.problem}`).join('; '));
  const parsed = schema.safeParse(input);
  if (parsed.success) return parsed.data;
  throw new HttpError(400, 'invalid_body', invalidBodyDetail(parsed.error));
}

/** The `detail` of a 400 `invalid_body`: each issue as `field: message`, `(body)` for the body as a whole. */
export function invalidBodyDetail(error: z.ZodError): string {
  return error.issues.map((i) => `${fieldName(i.path)}: ${i.message}`).join('; ');
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
