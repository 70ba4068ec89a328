import { randomBytes } from 'node:crypto';
import { z } from 'zod';
import type { Sql } from '../../../db/connect.js';
import { listMail } from '../../../db/queries/token-mail.js';
import { insertUser, listUsers, setUserActive } from '../../../db/queries/users.js';
import { closeUserSessions, insertRevealLink } from '../../../db/queries/portal.js';
import { renderRevealMail } from '../../domain/token-mail.js';
import { checkExpiry, defaultExpiry } from '../../domain/token-values.js';
import { hashSecret, newSecret } from '../secrets.js';
import { HttpError, json, notFound } from '../../http/errors.js';
import type { Family } from '../../http/family.js';
import { portalBody } from '../accounts/input.js';
import { BLANK_NAME, boundedDateTime, boundedString, storedName, emailAddress } from '../../domain/text.js';
import type { HttpServer } from '../../http/server.js';
import { parseQuery, queryNames } from './query.js';
import { ADMIN_ACTOR } from './actor.js';
import type { RegistryEditor } from '../../registry/editor.js';

/**
 * Portal accounts and the token e-mails, for admins:
 * - `POST /admin/v1/users` {email, name}: an account (its id the address in lower case where it fits
 *   the id rule, else a generated one); 409 when the address has one already;
 * - `GET /admin/v1/users` (`?email=`), `POST /admin/v1/users/{id}/deactivate` and `/reactivate`: a
 *   deactivated account's tokens are refused at once, on every instance;
 * - `GET /admin/v1/mail` (`?state=failed`, `?token=`): the token e-mails' outbox and ledger, newest first.
 */

const USER_ID = /^[a-z0-9][a-z0-9._@-]{0,63}$/;

const newUser = z.strictObject({
  email: emailAddress(),
  name: storedName(boundedString(200).trim().min(1, BLANK_NAME)).nullable().optional(),
});

const usersQuery = z.strictObject({ email: z.string().optional() });

const mailQuery = z.strictObject({
  state: z.enum(['pending', 'sending', 'sent', 'cancelled', 'failed']).optional(),
  token: z.string().regex(/^\d{1,18}$/, 'must be a token id').optional(),
  limit: z.coerce.number().int().min(1).max(500).default(100),
  offset: z.coerce.number().int().min(0).default(0),
});

export function adminUserRoutes(server: HttpServer, family: Family, deps: { sql: Sql; tokensChanged: () => Promise<void>; editor: Pick<RegistryEditor, 'record'> }): void {
  const { sql } = deps;
  server.route({
    family,
    method: 'POST',
    path: '/admin/v1/users',
    body: portalBody(newUser),
    handler: async (_req, input) => {
      const { email, name } = input.body!;
      const lower = email.toLowerCase();
      const id = USER_ID.test(lower) ? lower : `user-${randomBytes(6).toString('hex')}`;
      const user = await insertUser(sql, { id, email, name: name ?? null });
      if (!user) throw new HttpError(409, 'conflict', `An account with the e-mail address "${email}" exists already.`);
      await deps.editor.record(ADMIN_ACTOR, { action: 'user.create', subject: user.id, before: null, after: { email: user.email, name: user.name } });
      return json(201, user);
    },
  });
  server.route({
    family,
    method: 'GET',
    path: '/admin/v1/users',
    query: queryNames(usersQuery),
    handler: async (req) => json(200, { users: await listUsers(sql, parseQuery(usersQuery, req)) }),
  });
  for (const [action, active] of [['deactivate', false], ['reactivate', true]] as const) {
    server.route({
      family,
      method: 'POST',
      path: `/admin/v1/users/:id/${action}`,
      handler: async (req) => {
        const [before] = (await listUsers(sql, {})).filter((u) => u.id === req.params.id);
        const user = await setUserActive(sql, req.params.id!, active);
        if (!user) throw notFound('No such user.');
        if (before && (before.deactivated_at === null) !== active) {
          await deps.editor.record(ADMIN_ACTOR, { action: `user.${action}`, subject: user.id, before: { deactivated_at: before.deactivated_at }, after: { deactivated_at: user.deactivated_at } });
        }
        // A deactivated account's portal sessions end at once (its tokens are refused by the check below).
        if (!active) await closeUserSessions(sql, user.id);
        await deps.tokensChanged();
        return json(200, user);
      },
    });
  }
  server.route({
    family,
    method: 'GET',
    path: '/admin/v1/mail',
    query: queryNames(mailQuery),
    handler: async (req) => json(200, { mail: await listMail(sql, parseQuery(mailQuery, req)) }),
  });
}

const issueBody = z.strictObject({
  email: emailAddress(),
  name: storedName(boundedString(200).trim().min(1, BLANK_NAME)).nullable().optional(),
  token_name: storedName(boundedString(100).trim().min(1, BLANK_NAME)),
  expires_at: boundedDateTime('must be a date and time in ISO 8601').optional(),
});

export interface IssueDeps {
  sql: Sql;
  editor: Pick<RegistryEditor, 'record'>;
  baseUrl: () => string;
  revealLinkTtlMs: number;
  timeZone: string;
  /** Sends the reveal link (a plain mail job: the link's secret never reaches PostgreSQL). */
  sendMail: (to: string, mail: { subject: string; text: string; html: string }) => Promise<unknown>;
}

/**
 * `POST /admin/v1/personal-tokens` {email, name?, token_name, expires_at?}: a personal token for an
 * address, whether or not it has an account (one is made, active, when it has none). The address gets a
 * single-use link; the token is made when the link is used (`POST /portal/v1/reveal`), so its value is
 * never stored or seen by the admin. 201 with the account, the token's name and expiry, and until when
 * the link works.
 */
export function adminIssueRoute(server: HttpServer, family: Family, deps: IssueDeps): void {
  server.route({
    family,
    method: 'POST',
    path: '/admin/v1/personal-tokens',
    // Every field is checked before anything is written: a refused token name leaves no account behind.
    body: portalBody(issueBody),
    handler: async (_req, input) => {
      const { email, name, token_name, expires_at } = input.body!;
      const now = new Date();
      const tokenExpiresAt = expires_at ? new Date(expires_at) : defaultExpiry(now);
      // The link outlives its use by at most its TTL: the token's bounds are checked against its latest use.
      const problem = checkExpiry(tokenExpiresAt, new Date(now.getTime() + deps.revealLinkTtlMs));
      if (problem) throw new HttpError(400, 'invalid_body', `${problem} (counted from when the link expires at the latest)`);
      const lower = email.toLowerCase();
      let [user] = await listUsers(deps.sql, { email });
      if (!user) {
        user = await insertUser(deps.sql, { id: USER_ID.test(lower) ? lower : `user-${randomBytes(6).toString('hex')}`, email, name: name ?? null });
        [user] = user ? [user] : await listUsers(deps.sql, { email });
      }
      if (!user) throw new HttpError(409, 'conflict', 'The account could not be made; try again.');
      if (user.deactivated_at) throw new HttpError(409, 'conflict', `The account "${user.id}" is deactivated: reactivate it first.`);
      const secret = newSecret();
      const linkExpiresAt = await insertRevealLink(deps.sql, {
        hash: hashSecret(secret),
        userId: user.id,
        tokenName: token_name,
        tokenExpiresAt,
        ttlMs: deps.revealLinkTtlMs,
      });
      await deps.sendMail(
        user.email,
        renderRevealMail({ recipient: user, link: `${deps.baseUrl()}/portal/#reveal=${secret}`, tokenName: token_name, linkExpiresAt, timeZone: deps.timeZone }),
      );
      await deps.editor.record(ADMIN_ACTOR, {
        action: 'personal_token.issue',
        subject: user.id,
        before: null,
        after: { token_name, token_expires_at: tokenExpiresAt.toISOString(), link_expires_at: linkExpiresAt.toISOString() },
      });
      return json(201, { user, token_name, token_expires_at: tokenExpiresAt.toISOString(), link_expires_at: linkExpiresAt.toISOString() });
    },
  });
}
