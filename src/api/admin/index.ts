import type { Sql } from '../../../db/connect.js';
import type { Family } from '../../http/family.js';
import type { HttpServer } from '../../http/server.js';
import { adminCallLogRoutes } from './call-logs.js';
import { adminFamily } from './family.js';
import { adminTokenRoutes } from './tokens.js';

export interface AdminDeps {
  adminToken: string | undefined;
  sql: Sql;
  tokensChanged: () => Promise<void>;
}

/** The admin API: its family (./family.ts), token administration and call logs. */
export function adminApi(server: HttpServer, deps: AdminDeps): Family {
  const family = adminFamily(deps.adminToken);
  adminTokenRoutes(server, family, deps);
  adminCallLogRoutes(server, family, deps.sql);
  return family;
}
