import type { Sql } from '../../../db/connect.js';
import { originatorCallStats } from '../../../db/queries/call-stats.js';
import { originatorLastSignals } from '../../../db/queries/history-reads.js';
import { json } from '../../http/errors.js';
import type { Family } from '../../http/family.js';
import type { HttpServer } from '../../http/server.js';

/**
 * `GET /admin/v1/originators`: every originator with what an admin tailing live state needs of it:
 * when it was last seen (its last import call, whatever the answer), its calls and refused calls of
 * the last 24 hours with the error rate, when it last sent a transmission that was stored, and the
 * link to its call log; and its `health`:
 * - `refused`: its last call was refused;
 * - `silent`: its last call is longer ago than `silent_after` seconds (STATUS_STALE_AFTER: its readings
 *   are going stale), whatever that call's answer;
 * - `never_seen`: no import call of it was ever counted;
 * - `ok` otherwise.
 * Listed by id (the dashboard puts the failing ones first).
 */
export type OriginatorHealth = 'refused' | 'silent' | 'never_seen' | 'ok';

export function originatorHealth(lastCall: Date | null, lastRejected: Date | null, now: number, silentAfterMs: number): OriginatorHealth {
  if (lastCall === null) return 'never_seen';
  if (now - lastCall.getTime() > silentAfterMs) return 'silent';
  return lastRejected !== null && lastRejected.getTime() >= lastCall.getTime() ? 'refused' : 'ok';
}

export function adminOriginatorRoutes(server: HttpServer, family: Family, deps: { sql: Sql; baseUrl: () => string; exclude: string; silentAfterMs: number }): void {
  server.route({
    family,
    method: 'GET',
    path: '/admin/v1/originators',
    handler: async () => {
      const now = Date.now();
      const since = new Date(now - 24 * 3600_000);
      const [rows, calls] = await Promise.all([originatorLastSignals(deps.sql, deps.exclude), originatorCallStats(deps.sql, since)]);
      const byId = new Map(calls.map((c) => [c.originator_id, c]));
      const originators = rows.map((o) => {
        const c = byId.get(o.id);
        const total = c?.calls ?? 0;
        const rejected = c?.rejected ?? 0;
        return {
          id: o.id,
          name: o.name,
          health: originatorHealth(c?.last_call_at ?? null, c?.last_rejected_at ?? null, now, deps.silentAfterMs),
          call_log_mode: o.call_log_mode,
          last_seen: c?.last_call_at?.toISOString() ?? null,
          last_rejected: c?.last_rejected_at?.toISOString() ?? null,
          last_transmission: o.last_received?.toISOString() ?? null,
          calls_24h: total,
          rejected_24h: rejected,
          error_rate_24h: total > 0 ? Math.round((rejected / total) * 10_000) / 10_000 : null,
          call_logs: `${deps.baseUrl()}/admin/v1/call-logs?originator=${encodeURIComponent(o.id)}`,
        };
      });
      return json(200, { since: since.toISOString(), silent_after: deps.silentAfterMs / 1000, originators });
    },
  });
}
