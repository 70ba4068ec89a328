import type { StationVerdict } from '../../domain/status/verdict.js';
import { z } from 'zod';
import type { Logger } from 'pino';
import { userPersonalTokens, type PersonalTokenRow } from '../../../db/queries/personal-tokens.js';
import {
  closeSession,
  consumeSignInLink,
  insertSignInLinkFor,
  markRevealLinkUsed,
  usableRevealLink,
} from '../../../db/queries/portal.js';
import type { MailIntent } from '../../../db/queries/token-mail.js';
import type { TokenEvent } from '../../domain/token-events.js';
import { renderSignInMail } from '../../domain/token-mail.js';
import {
  newTokenRequestSchema,
  revealRequestSchema,
  sessionRequestSchema,
  signInRequestSchema,
  tokenExpiryRequestSchema,
  type PersonalTokenView,
  type TokenLimits,
} from '../../domain/portal/schemas.js';
import { MAX_ACTIVE_PERSONAL_TOKENS, PERSONAL_TOKEN_EXPIRY } from '../../domain/token-values.js';
import type { RateLimit, RateLimiter } from '../../infra/rate-limit.js';
import { HttpError, json, type Reply } from '../../http/errors.js';
import type { Family } from '../../http/family.js';
import type { HttpServer } from '../../http/server.js';
import { TOKEN_RULE_MESSAGES, TokenRuleError, type PersonalTokens } from '../../registry/personal-tokens.js';
import { hashSecret, newSecret } from '../secrets.js';
import { checkOrigin, portalFamily, portalUserOf, sessionAuth, sessionOf, type PortalPrincipal, type PortalSettings } from './family.js';
import { LINK_GONE, sessionCookie, SIGN_IN_ANSWER, SIGN_IN_LINK_MS, SIGN_IN_PER_ADDRESS, SIGN_IN_PER_CLIENT, signInThrottled, signInUnavailable } from './session-words.js';
import { portalPageRoutes } from './page.js';
import { portalStationRoutes } from './stations.js';
import { portalActor } from './access.js';
import { portalBody } from '../accounts/input.js';
import { portalOriginatorRoutes } from './originators.js';
import { portalHistoryRoutes } from './history.js';
import { portalWebhookRoutes, type WebhookDeps } from './webhooks.js';
import { closeSessionDoc, getSessionDoc, openSessionDoc, sessionStateDoc, signInDoc } from './docs/session.js';
import { changeExpiryDoc, createTokenDoc, listTokensDoc, revealDoc, revokeTokenDoc } from './docs/tokens.js';
import { tokenIdMeta } from './docs/components.js';
import type { HistoryDeps } from '../history.js';
import type { Forecasts } from '../forecast.js';
import type { RegistryEditor } from '../../registry/editor.js';
import { userRoles } from '../../../db/queries/roles.js';
import { isDatabaseUnavailable } from '../../../db/connect.js';
import { insertAudit } from '../../../db/queries/audit.js';

/**
 * The portal's JSON API (`/portal/v1/`), what the API tokens page (`/portal/`, ./page.ts) uses:
 * - `POST /portal/v1/sign-in` {email}: 202, the same answer whether or not the address has an account;
 *   an active account gets an e-mailed single-use link `/portal/#sign-in=<secret>` (15 minutes). Limited
 *   per address and per client.
 * - `POST /portal/v1/session` {token}: uses the link (a POST: a mail scanner's GET of the page does not)
 *   and opens a session (cookie); 410 when the link was used or has expired.
 * - `GET /portal/v1/session`, `DELETE /portal/v1/session` (sign out); `GET /portal/v1/session/state`: the
 *   page's probe, public, a 200 whether signed in or not.
 * - `GET /portal/v1/tokens`, `POST /portal/v1/tokens` {name, expires_at} (the value in the answer,
 *   once), `PATCH /portal/v1/tokens/{id}` {expires_at}, `POST /portal/v1/tokens/{id}/revoke`.
 * - `POST /portal/v1/reveal` {secret}: a token an admin issued for the address is made now and its value
 *   shown, once; 410 afterwards or when the link has expired.
 *
 * The bodies are the schemas of src/domain/portal/schemas.ts; each route carries its operation of the
 * OpenAPI document served at `/portal/v1/doc/` (./docs/).
 */

export interface PortalDeps extends PortalSettings {
  log: Logger;
  limiter: RateLimiter;
  personalTokens: PersonalTokens;
  /** Sends a plain mail job: sign-in links (their secret never reaches PostgreSQL; the job goes once sent). */
  sendMail: (to: string, mail: { subject: string; text: string; html: string }) => Promise<unknown>;
  /** Whether a mail job can be queued now (Redis connected). */
  mailReady: () => boolean;
  /** After a committed token change: its e-mails get their jobs, its events reach the admins' feed. */
  committed: (change: { mail: readonly MailIntent[]; events: readonly TokenEvent[] }) => Promise<unknown>;
  /** Tells every instance that tokens changed (a revoked token is refused at once everywhere). */
  tokensChanged: () => Promise<void>;
  timeZone: string;
  /** Every registry change of operator staff and originator managers goes through it. */
  editor: RegistryEditor;
  /** Every originator (the sandbox's left out): what an admin manages. */
  allOriginators: () => Promise<{ id: string; name: string }[]>;
  /** The status history's reads (signals, timeline, reliability). */
  history: HistoryDeps;
  /** The availability forecasts, export v2's and the map's (a station's Signals pane shows them). */
  forecasts: Pick<Forecasts, 'station'>;
  /**
   * Writes this instance's gathered last-used times of tokens now (they are otherwise written every
   * few seconds), so a token list read just after a use shows it.
   */
  recordTokenUse?: () => Promise<unknown>;
  /** The webhook subscriptions' settings. */
  webhooks: Omit<WebhookDeps, 'sql' | 'log'>;
  /** Each station's verdict (src/domain/status/verdict.ts), for the station list's state and hint. */
  verdicts?: { of(hrsId: string): StationVerdict | undefined };
}

/** A token as the page lists it: never its value or hash. */
export function tokenView(t: PersonalTokenRow, now = Date.now()): PersonalTokenView {
  const state = t.revoked_at ? 'revoked' : t.expires_at && t.expires_at.getTime() <= now ? 'expired' : 'active';
  return {
    id: t.id,
    name: t.name,
    hint: t.hint,
    created_at: t.created_at.toISOString(),
    expires_at: t.expires_at?.toISOString() ?? null,
    last_used_at: t.last_used_at?.toISOString() ?? null,
    revoked_at: t.revoked_at?.toISOString() ?? null,
    state,
  };
}

const LIMITS: TokenLimits = {
  max_active: MAX_ACTIVE_PERSONAL_TOKENS,
  min_days: PERSONAL_TOKEN_EXPIRY.minDays,
  max_days: PERSONAL_TOKEN_EXPIRY.maxDays,
  default_days: PERSONAL_TOKEN_EXPIRY.defaultDays,
};

/** A token's id in the path: decimal digits, or no token of the account (404). */
const TOKEN_ID = z.object({ id: z.string().regex(/^\d{1,18}$/, TOKEN_RULE_MESSAGES.noSuchToken).meta({ ...tokenIdMeta() }) });

const ruleError = (err: unknown): never => {
  if (err instanceof TokenRuleError) throw new HttpError(err.status, 'token_rule', err.message);
  throw err;
};

export function portalApi(server: HttpServer, deps: PortalDeps): Family {
  const family = portalFamily(deps);
  // The page (`/portal/`, its script and style sheet): public, the API below is what it calls.
  portalPageRoutes(server, family);
  const { sql, personalTokens } = deps;
  const base = () => deps.baseUrl();
  // A failed write keeps the times for the next one; the list is answered with what is stored.
  const recordTokenUse = () => (deps.recordTokenUse ? deps.recordTokenUse().catch(() => undefined) : Promise.resolve());

  /** The session's account and its roles (with the names of its operators and originators), as both session routes answer. */
  const sessionAnswer = async ({ id, email, name }: PortalPrincipal) => ({
    user: { id, email, name },
    roles: (await userRoles(sql, id)) ?? { admin: false, operators: [], originators: [] },
  });

  const limited = async (key: string, limit: RateLimit, what: string) => {
    if (!deps.limiter.ready) return;
    const result = await deps.limiter.hit(key, [limit]).catch(() => undefined);
    if (!result || result.allowed) return;
    const seconds = result.retryAfterSeconds ?? 1;
    throw new HttpError(429, 'throttled', signInThrottled(what, seconds), {
      headers: { 'Retry-After': String(seconds) },
    });
  };

  /**
   * Stores the link and queues its e-mail before answering, so a 202 means it is on its way. Whether
   * the address has an account shows neither in the answer nor in its cost: the queue is checked first
   * for every address, and the link is stored (or not) by one statement either way.
   */
  const sendLink = async (email: string) => {
    if (!deps.mailReady()) throw signInUnavailable('mail');
    const secret = newSecret();
    let user: Awaited<ReturnType<typeof insertSignInLinkFor>>;
    try {
      user = await insertSignInLinkFor(sql, email, hashSecret(secret), SIGN_IN_LINK_MS, deps.clock);
    } catch (err) {
      if (isDatabaseUnavailable(err)) throw signInUnavailable('database');
      throw err;
    }
    if (!user) return;
    const mail = renderSignInMail({ recipient: user, link: `${base()}/portal/#sign-in=${secret}`, validMinutes: SIGN_IN_LINK_MS / 60_000 });
    await deps.sendMail(user.email, mail);
  };

  // The public POST routes (sign-in, session, reveal) are declared alike and check the origin first,
  // each on its own line: a wrapper would hide that check from the handler it guards, for three routes.
  server.route({
    family,
    public: true,
    method: 'POST',
    path: '/portal/v1/sign-in',
    doc: signInDoc(),
    body: portalBody(signInRequestSchema),
    handler: async (req, input): Promise<Reply> => {
      checkOrigin(req, base());
      const { email } = input.body!;
      await limited(`portal:sign-in:client:${req.clientAddress}`, SIGN_IN_PER_CLIENT, 'from this client');
      await limited(`portal:sign-in:address:${email.toLowerCase()}`, SIGN_IN_PER_ADDRESS, 'for this address');
      await sendLink(email);
      return json(202, { detail: SIGN_IN_ANSWER });
    },
  });

  server.route({
    family,
    public: true,
    method: 'POST',
    path: '/portal/v1/session',
    doc: openSessionDoc(),
    body: portalBody(sessionRequestSchema),
    handler: async (req, input): Promise<Reply> => {
      checkOrigin(req, base());
      const { token } = input.body!;
      const secret = newSecret();
      const opened = await consumeSignInLink(sql, hashSecret(token), { hash: hashSecret(secret), maxMs: deps.maxMs }, deps.clock);
      if (!opened) throw new HttpError(410, 'link_gone', LINK_GONE.signIn);
      return json(201, { user: opened.user }, { 'Set-Cookie': sessionCookie(base(), secret, Math.floor(deps.maxMs / 1000)), 'Cache-Control': 'no-store' });
    },
  });

  server.route({
    family,
    method: 'GET',
    path: '/portal/v1/session',
    doc: getSessionDoc(),
    handler: async (req) => json(200, await sessionAnswer(portalUserOf(req)), { 'Cache-Control': 'no-store' }),
  });

  // What the page asks first: a 200 either way, so a visitor not signed in meets no refusal (no 401 in the console).
  const probe = sessionAuth(deps);
  server.route({
    family,
    public: true,
    method: 'GET',
    path: '/portal/v1/session/state',
    doc: sessionStateDoc(),
    handler: async (req) => {
      let principal: PortalPrincipal;
      try {
        principal = (await probe(undefined, req)) as PortalPrincipal;
      } catch (err) {
        if (err instanceof HttpError && err.status === 401) return json(200, { signed_in: false }, { 'Cache-Control': 'no-store' });
        throw err;
      }
      return json(200, { signed_in: true, ...(await sessionAnswer(principal)) }, { 'Cache-Control': 'no-store' });
    },
  });

  server.route({
    family,
    method: 'DELETE',
    path: '/portal/v1/session',
    doc: closeSessionDoc(),
    handler: async (req) => {
      await closeSession(sql, sessionOf(req));
      return { status: 204, headers: { 'Set-Cookie': sessionCookie(base()) } };
    },
  });

  server.route({
    family,
    method: 'GET',
    path: '/portal/v1/tokens',
    doc: listTokensDoc(),
    handler: async (req) => {
      await recordTokenUse();
      const tokens = await userPersonalTokens(sql, portalUserOf(req).id);
      return json(200, { tokens: tokens.map((t) => tokenView(t)), limits: LIMITS }, { 'Cache-Control': 'no-store' });
    },
  });

  server.route({
    family,
    method: 'POST',
    path: '/portal/v1/tokens',
    doc: createTokenDoc(),
    body: portalBody(newTokenRequestSchema),
    handler: async (req, input) => {
      const { name, expires_at } = input.body!;
      const user = portalUserOf(req);
      const created = await personalTokens.create(user.id, name, expires_at ? new Date(expires_at) : undefined).catch(ruleError);
      await deps.editor.record(portalActor(user), { action: 'personal_token.create', subject: created.token.id, before: null, after: tokenView(created.token) });
      await deps.committed(created);
      return json(201, { token: tokenView(created.token), value: created.value }, { 'Cache-Control': 'no-store' });
    },
  });

  server.route({
    family,
    method: 'PATCH',
    path: '/portal/v1/tokens/:id',
    doc: changeExpiryDoc(),
    params: TOKEN_ID,
    body: portalBody(tokenExpiryRequestSchema),
    handler: async (req, input) => {
      const { id } = input.params;
      const { expires_at } = input.body!;
      const user = portalUserOf(req);
      const before = (await userPersonalTokens(sql, user.id)).find((t) => t.id === id);
      const changed = await personalTokens.changeExpiry(id, new Date(expires_at), user.id).catch(ruleError);
      await deps.editor.record(portalActor(user), {
        action: 'personal_token.expiry', subject: id, before: before ? tokenView(before) : null, after: tokenView(changed.token),
      });
      await deps.tokensChanged();
      await deps.committed(changed);
      return json(200, { token: tokenView(changed.token) });
    },
  });

  server.route({
    family,
    method: 'POST',
    path: '/portal/v1/tokens/:id/revoke',
    doc: revokeTokenDoc(),
    params: TOKEN_ID,
    handler: async (req, input) => {
      const { id } = input.params;
      const user = portalUserOf(req).id;
      const revoked = await personalTokens.revoke(id, 'owner', user);
      if (!revoked) throw new HttpError(404, 'not_found', TOKEN_RULE_MESSAGES.noSuchToken);
      await deps.tokensChanged();
      await deps.committed(revoked);
      const token = (await userPersonalTokens(sql, user)).find((t) => t.id === id)!;
      if (revoked.events.length > 0) {
        await deps.editor.record(portalActor(portalUserOf(req)), { action: 'personal_token.revoke', subject: id, before: null, after: tokenView(token) });
      }
      return json(200, { token: tokenView(token) });
    },
  });

  server.route({
    family,
    public: true,
    method: 'POST',
    path: '/portal/v1/reveal',
    doc: revealDoc(),
    body: portalBody(revealRequestSchema),
    handler: async (req, input): Promise<Reply> => {
      checkOrigin(req, base());
      const { secret } = input.body!;
      const hash = hashSecret(secret);
      const created = await sql
        .begin(async (tx) => {
          const link = await usableRevealLink(tx, hash);
          if (!link) throw new HttpError(410, 'link_gone', LINK_GONE.reveal);
          const made = await personalTokens.createIn(tx, link.user_id, link.token_name, link.token_expires_at);
          await markRevealLinkUsed(tx, hash, made.token.id);
          await insertAudit(tx, { actor: `user:${link.user_id}`, via: 'portal', action: 'personal_token.reveal', subject: made.token.id, before: null, after: tokenView(made.token) });
          return made;
        })
        .catch(ruleError);
      await deps.committed(created);
      return json(201, { token: tokenView(created.token), value: created.value }, { 'Cache-Control': 'no-store' });
    },
  });

  portalStationRoutes(server, family, deps);
  portalOriginatorRoutes(server, family, { ...deps, recordTokenUse });
  portalHistoryRoutes(server, family, deps);
  portalWebhookRoutes(server, family, { sql, log: deps.log, ...deps.webhooks });
  return family;
}
