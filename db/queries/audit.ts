import type { Sql, Tx } from '../connect.js';

/*
 * The audit trail (migration 0008): every change made through the portal or the admin API, who, when,
 * what, before and after. No foreign keys: the trail outlives what it speaks of.
 */

type Db = Sql | Tx;

export interface AuditEntry {
  actor: string;
  via: 'portal' | 'admin';
  action: string;
  operator_id?: string | null;
  hrs_id?: string | null;
  originator_id?: string | null;
  subject?: string | null;
  before?: unknown;
  after?: unknown;
}

export interface AuditRow extends Required<AuditEntry> {
  id: string;
  at: Date;
}

export async function insertAudit(tx: Tx, e: AuditEntry): Promise<void> {
  await tx`
    INSERT INTO audit_log (actor, via, action, operator_id, hrs_id, originator_id, subject, before, after)
    VALUES (${e.actor}, ${e.via}, ${e.action}, ${e.operator_id ?? null}, ${e.hrs_id ?? null}, ${e.originator_id ?? null},
            ${e.subject ?? null}, ${e.before === undefined || e.before === null ? null : tx.json(e.before as never)},
            ${e.after === undefined || e.after === null ? null : tx.json(e.after as never)})`;
}

/** Entries newest first, `before` an id to page on from; filters combine. */
export async function listAudit(
  db: Db,
  filter: { operator?: string | undefined; hrsId?: string | undefined; originator?: string | undefined; actor?: string | undefined; before?: string | undefined; limit: number },
): Promise<AuditRow[]> {
  return db<AuditRow[]>`
    SELECT id::text, at, actor, via, action, operator_id, hrs_id, originator_id, subject, before, after FROM audit_log
    WHERE true
      ${filter.operator ? db`AND operator_id = ${filter.operator}` : db``}
      ${filter.hrsId ? db`AND hrs_id = ${filter.hrsId}` : db``}
      ${filter.originator ? db`AND originator_id = ${filter.originator}` : db``}
      ${filter.actor ? db`AND actor = ${filter.actor}` : db``}
      ${filter.before ? db`AND id < ${filter.before}` : db``}
    ORDER BY audit_log.id DESC LIMIT ${filter.limit}`;
}

