import { z } from 'zod';
import { listTokens } from '../../../db/queries/tokens.js';
import type { MailIntent } from '../../../db/queries/token-mail.js';
import type { TokenEvent } from '../../domain/token-events.js';
import type { PersonalTokens } from '../../registry/personal-tokens.js';
import { json, notFound } from '../../http/errors.js';
import { parseQuery, queryNames } from './query.js';
import type { Family } from '../../http/family.js';
import type { HttpServer } from '../../http/server.js';
import type { Sql } from '../../../db/connect.js';
import { GENERATIONS } from '../../domain/vocabulary.js';
import type { RegistryEditor } from '../../registry/editor.js';
import { ADMIN_ACTOR } from './actor.js';

const listQuery = z.object({
  originator: z.string().min(1).optional(),
  user: z.string().min(1).optional(),
  generation: z.enum(GENERATIONS).optional(),
});

export interface AdminTokenDeps {
  sql: Sql;
  /** Tells this instance and every other that tokens changed (caches cleared, open streams checked). */
  tokensChanged: () => Promise<void>;
  /** Personal tokens' lifecycle: a revocation tells the owner by e-mail (src/registry/personal-tokens.ts). */
  personalTokens: Pick<PersonalTokens, 'revoke'>;
  /** After a committed token change: its e-mails get their jobs, its events reach the admins' feed; never throws. */
  committed: (change: { mail: readonly MailIntent[]; events: readonly TokenEvent[] }) => Promise<unknown>;
  /** Keeps the audit trail of the changes made here. */
  editor: Pick<RegistryEditor, 'record'>;
}

/** Token administration: metadata listing and revocation (final; every instance notices at once). */
export function adminTokenRoutes(server: HttpServer, family: Family, { sql, tokensChanged, personalTokens, committed, editor }: AdminTokenDeps): void {
  server.route({
    family,
    method: 'GET',
    path: '/admin/v1/tokens',
    query: queryNames(listQuery),
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
      const [before] = await listTokens(sql, { id });
      const revoked = await personalTokens.revoke(id, 'admin');
      if (!revoked) throw notFound('No such token.');
      await tokensChanged();
      await committed(revoked);
      const [token] = await listTokens(sql, { id });
      if (before && !before.revoked_at) {
        await editor.record(ADMIN_ACTOR, { action: 'token.revoke', originator_id: token?.originator ?? null, subject: id, before, after: token });
      }
      return json(200, token);
    },
  });
}
