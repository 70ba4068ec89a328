import type { Sql } from '../../../db/connect.js';
import { listAudit, type AuditRow } from '../../../db/queries/audit.js';
import { HttpError, json, type Reply } from '../../http/errors.js';
import type { Request } from '../../http/request.js';

/**
 * Keyset pages as the portal and the admin API give them (`limit`, an opaque `cursor`, a `next` link),
 * and the page both give of the audit trail.
 */

const NO_STORE = { 'Cache-Control': 'no-store' };

export const PAGE_DEFAULT = 100;
export const PAGE_MAX = 500;

/**
 * `limit` (1 to PAGE_MAX, PAGE_DEFAULT when left out) and the opaque `cursor` of a keyset page. Names
 * the route does not declare were refused by the core before this runs.
 */
export function pageQuery(req: Request): { limit: number; cursor: string | undefined } {
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

export const auditView = (a: AuditRow) => ({
  id: a.id,
  at: a.at.toISOString(),
  actor: a.actor,
  via: a.via,
  action: a.action,
  operator_id: a.operator_id,
  hrs_id: a.hrs_id,
  originator_id: a.originator_id,
  subject: a.subject,
  before: a.before,
  after: a.after,
});

/** A page of the audit trail under `filter`, newest first, with its `next` link. */
export async function auditPage(sql: Sql, req: Request, filter: { operator?: string; hrsId?: string; originator?: string; actor?: string }): Promise<Reply> {
  const { limit, cursor } = pageQuery(req);
  const before = cursor ? decodeCursor(cursor, 1)[0] : undefined;
  if (before !== undefined && !/^\d{1,18}$/.test(before)) throw new HttpError(400, 'invalid_query', 'cursor: not a cursor of this list');
  const rows = await listAudit(sql, { ...filter, before, limit });
  return json(200, { entries: rows.map(auditView), next: nextLink(req, rows.length, limit, () => encodeCursor([rows.at(-1)!.id])) }, NO_STORE);
}
