import { z } from 'zod';
import { listTokens, revokeToken } from '../../../db/queries/tokens.js';
import { json, notFound } from '../../http/errors.js';
import { parseQuery } from './query.js';
import type { HttpServer } from '../../http/server.js';
import type { Services } from '../../services.js';

const listQuery = z.object({
  originator: z.string().min(1).optional(),
  user: z.string().min(1).optional(),
  generation: z.enum(['import_v1', 'import_v2', 'export_v1', 'export_v2']).optional(),
});

/** Token administration: metadata listing and revocation (final; every instance notices at once). */
export function adminTokenRoutes(server: HttpServer, { sql, bus, tokens }: Services): void {
  server.route({
    method: 'GET',
    path: '/admin/v1/tokens',
    auth: 'admin',
    handler: async (req) => {
      return json(200, { tokens: await listTokens(sql, parseQuery(listQuery, req)) });
    },
  });
  server.route({
    method: 'POST',
    path: '/admin/v1/tokens/:id/revoke',
    auth: 'admin',
    handler: async (req) => {
      const id = req.params.id!;
      if (!/^\d{1,18}$/.test(id)) throw notFound('No such token.');
      const token = await revokeToken(sql, id);
      if (!token) throw notFound('No such token.');
      tokens.invalidate();
      await bus.publish({ type: 'registry', hrs_ids: [], tokens: true, registry: false });
      return json(200, token);
    },
  });
}
