import { z } from 'zod';
import { listTokens, revokeToken } from '../../../db/queries/tokens.js';
import { json, notFound } from '../../http/errors.js';
import { parseQuery } from './query.js';
import type { Family } from '../../http/family.js';
import type { HttpServer } from '../../http/server.js';
import type { Sql } from '../../../db/connect.js';
import { GENERATIONS } from '../../domain/vocabulary.js';

const listQuery = z.object({
  originator: z.string().min(1).optional(),
  user: z.string().min(1).optional(),
  generation: z.enum(GENERATIONS).optional(),
});

export interface AdminTokenDeps {
  sql: Sql;
  /** Tells this instance and every other that tokens changed (caches cleared, open streams checked). */
  tokensChanged: () => Promise<void>;
}

/** Token administration: metadata listing and revocation (final; every instance notices at once). */
export function adminTokenRoutes(server: HttpServer, family: Family, { sql, tokensChanged }: AdminTokenDeps): void {
  server.route({
    family,
    method: 'GET',
    path: '/admin/v1/tokens',
    handler: async (req) => {
      return json(200, { tokens: await listTokens(sql, parseQuery(listQuery, req)) });
    },
  });
  server.route({
    family,
    method: 'POST',
    path: '/admin/v1/tokens/:id/revoke',
    handler: async (req) => {
      const id = req.params.id!;
      if (!/^\d{1,18}$/.test(id)) throw notFound('No such token.');
      const token = await revokeToken(sql, id);
      if (!token) throw notFound('No such token.');
      await tokensChanged();
      return json(200, token);
    },
  });
}
