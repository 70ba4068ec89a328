import type { Sql } from '../../../db/connect.js';
import type { Family } from '../../http/family.js';
import type { HttpServer } from '../../http/server.js';
import { adminCallLogRoutes } from './call-logs.js';
import { adminFamily } from './family.js';
import { adminTokenRoutes, type AdminTokenDeps } from './tokens.js';
import { adminIssueRoute, adminUserRoutes, type IssueDeps } from './users.js';
import { adminRegistryRoutes } from './registry.js';
import { adminOriginatorRoutes } from './originators.js';
import { SANDBOX_ORIGINATOR } from '../../domain/sandbox.js';
import type { RegistryEditor } from '../../registry/editor.js';

export interface AdminDeps extends AdminTokenDeps, Omit<IssueDeps, 'sql'> {
  adminToken: string | undefined;
  sql: Sql;
  tokensChanged: () => Promise<void>;
  editor: RegistryEditor;
  /** STATUS_STALE_AFTER: an originator not seen for longer is `silent` (GET /admin/v1/originators). */
  silentAfterMs: number;
}

/** The admin API: its family (./family.ts), token and account administration, the token e-mails, call logs, originators with their call figures, roles, call-log modes, unpublished transmissions, the audit trail. */
export function adminApi(server: HttpServer, deps: AdminDeps): Family {
  const family = adminFamily(deps.adminToken);
  adminTokenRoutes(server, family, deps);
  adminUserRoutes(server, family, deps);
  adminIssueRoute(server, family, deps);
  adminCallLogRoutes(server, family, deps.sql);
  adminRegistryRoutes(server, family, deps);
  adminOriginatorRoutes(server, family, { sql: deps.sql, baseUrl: deps.baseUrl, exclude: SANDBOX_ORIGINATOR, silentAfterMs: deps.silentAfterMs });
  return family;
}
