import { z } from 'zod';
import { listCallLogs } from '../../../db/queries/call-logs.js';
import { json } from '../../http/errors.js';
import { callLogView, FAMILY_PREFIXES } from '../call-log.js';
import { parseQuery, queryNames } from './query.js';
import { parseInstant } from '../../http/dates.js';
import type { Family } from '../../http/family.js';
import type { HttpServer } from '../../http/server.js';
import type { Sql } from '../../../db/connect.js';

export const CALL_LOG_DEFAULT_LIMIT = 100;
export const CALL_LOG_MAX_LIMIT = 1000;

const listQuery = z.strictObject({
  originator: z.string({ error: 'required' }).min(1, 'required'),
  // A date-time with an offset in the accepted range (src/http/dates.ts; an unencoded "+" is read as one).
  since: z
    .string()
    .transform((s, ctx) => {
      const parsed = parseInstant(s);
      if (parsed.ok) return new Date(parsed.ms);
      ctx.addIssue({ code: 'custom', message: parsed.problem });
      return z.NEVER;
    })
    .optional(),
  family: z
    .enum(Object.keys(FAMILY_PREFIXES) as [keyof typeof FAMILY_PREFIXES], { error: `must be one of ${Object.keys(FAMILY_PREFIXES).join(', ')}` })
    .optional(),
  limit: z
    .string()
    .regex(/^\d{1,9}$/, `must be a whole number from 1 to ${CALL_LOG_MAX_LIMIT}`)
    .transform(Number)
    .pipe(z.number().min(1, `must be from 1 to ${CALL_LOG_MAX_LIMIT}`).max(CALL_LOG_MAX_LIMIT, `must be from 1 to ${CALL_LOG_MAX_LIMIT}`))
    .default(CALL_LOG_DEFAULT_LIMIT),
});

/** The raw API call log of one originator, newest first (what its `call_log_mode` kept). */
export function adminCallLogRoutes(server: HttpServer, family: Family, sql: Sql): void {
  server.route({
    family,
    method: 'GET',
    path: '/admin/v1/call-logs',
    query: queryNames(listQuery),
    handler: async (req) => {
      const { family, ...query } = parseQuery(listQuery, req);
      return json(200, { call_logs: (await listCallLogs(sql, { ...query, pathPrefix: family && FAMILY_PREFIXES[family] })).map(callLogView) });
    },
  });
}
