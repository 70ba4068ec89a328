import { randomBytes } from 'node:crypto';
import type { Logger } from 'pino';
import { z } from 'zod';
import type { Sql } from '../../../db/connect.js';
import {
  deleteWebhook,
  insertWebhook,
  knownStations,
  queuePing,
  rotateWebhookSecret,
  updateWebhook,
  userWebhook,
  userWebhooks,
  webhookDeliveries,
  type DeliveryRow,
  type WebhookRow,
} from '../../../db/queries/webhooks.js';
import { NameUnavailableError, urlRefusal, type Resolver } from '../../infra/name-resolver.js';
import { newWebhookSecret, sealSecret } from '../../domain/webhooks/secrets.js';
import { MAX_DELIVERIES_SHOWN, MAX_WEBHOOKS, newWebhookSchema, webhookPatchSchema } from '../../domain/webhooks/schemas.js';
import { HttpError, json, PROBLEM_ERRORS, type Reply } from '../../http/errors.js';
import { rateLimitGuard } from '../../http/rate-limit-guard.js';
import type { RateLimiter } from '../../infra/rate-limit.js';
import type { Family, InvalidInput } from '../../http/family.js';
import type { Request } from '../../http/request.js';
import type { HttpServer } from '../../http/server.js';
import { invalidInput, portalBody } from '../accounts/input.js';
import { webhookDocs, webhookIdParameter } from './docs/webhooks.js';
import { portalUserOf } from './family.js';
import { fieldErrors, hostUnresolved, limitReached, noSuchWebhook, notConfigured, unsubscribedRefusal, urlRefused, webhookLimit } from './webhook-words.js';

/**
 * A token owner's webhook subscriptions (`/portal/v1/webhooks`): list, make (the signing secret in
 * the answer, once), read, change, re-enable, delete, rotate the secret (the previous one signs on
 * for WEBHOOK_SECRET_OVERLAP), ping, and the last deliveries. Each account sees only its own (another
 * account's is a 404, admins' included). The URL is checked against server-side request forgery
 * when it is set (src/domain/webhooks/addresses.ts), its host name resolved by the bounded resolver
 * (src/infra/name-resolver.ts: a 503 `host_unresolved` when no answer came in time); delivery checks
 * every connection again. Setting a URL and pinging spend the account's WEBHOOK_RATE_LIMIT. A ping asked for
 * and a subscription enabled again are written to its row, and the webhook workers told (NOTIFY): the
 * subscriptions' rows are the webhook workers' queue (workers/webhooks/processor.ts).
 */

export interface WebhookDeps {
  sql: Sql;
  /** WEBHOOK_SECRET_KEY: without it no route works (503 `webhooks_not_configured`). */
  secretKey: Buffer | undefined;
  /** WEBHOOK_ALLOW_LOOPBACK. */
  allowLoopback: boolean;
  /** WEBHOOK_SECRET_OVERLAP: how long a rotated secret still signs. */
  overlapMs: number;
  /** How URLs' host names are resolved (src/infra/name-resolver.ts: bounded in time and number). */
  resolver: Resolver;
  /** The shared rate limiter, and WEBHOOK_RATE_LIMIT: what reaches out (a new subscription, a URL changed, a test ping) per minute per account. */
  limiter: RateLimiter;
  perMinute: number;
  log: Logger;
}

const NO_STORE = { 'Cache-Control': 'no-store' };
const WEBHOOK_ID = z.object({ id: webhookIdParameter() });

/** A webhook body that does not match its schema: a 400 `invalid_field` naming each field; anything else as the portal refuses it. */
const webhookInvalid = (problem: InvalidInput) => (problem.part === 'body' ? fieldErrors(problem.issues) : invalidInput(problem));

/** A new subscription's id: `wh_` and 24 lowercase letters and digits. */
function newWebhookId(): string {
  const alphabet = 'abcdefghijklmnopqrstuvwxyz0123456789';
  return `wh_${[...randomBytes(24)].map((b) => alphabet[b % alphabet.length]).join('')}`;
}

const iso = (d: Date | null) => d?.toISOString() ?? null;

/** A subscription as its owner sees it. */
export function webhookView(row: WebhookRow) {
  return {
    id: row.id,
    url: row.url,
    description: row.description,
    kinds: row.kinds,
    hrs_ids: row.hrs_ids,
    bbox: row.bbox,
    state: row.state,
    created_at: row.created_at.toISOString(),
    disabled_at: iso(row.disabled_at),
    disabled_reason: row.disabled_reason,
    failing_since: iso(row.failing_since),
    last_delivery_at: iso(row.last_delivery_at),
    secret_rotated_at: iso(row.secret_rotated_at),
    previous_secret_valid_until: iso(row.previous_secret_until),
  };
}

const deliveryView = (d: DeliveryRow) => ({ ...d, at: d.at.toISOString() });

export function portalWebhookRoutes(server: HttpServer, family: Family, deps: WebhookDeps): void {
  const { sql } = deps;
  const docs = webhookDocs(deps.perMinute);
  /** The key, or the 503 that says webhooks are not set up on this platform. */
  const key = (): Buffer => {
    if (!deps.secretKey) throw notConfigured();
    return deps.secretKey;
  };
  /**
   * A webhook route; a JSON `body` is checked by the core through the text rule and its schema, a bad
   * field refused as a 400 `invalid_field` naming each (`webhookInvalid`).
   */
  const route = <B extends z.ZodType = z.ZodNever>(
    method: 'GET' | 'POST' | 'PATCH' | 'DELETE',
    path: string,
    handler: (req: Request, id: string, body: z.output<B>) => Promise<Reply>,
    body?: B,
  ) =>
    server.route({
      family,
      method,
      path,
      doc: docs[`${method} ${path}`],
      ...(path.includes(':id') ? { params: WEBHOOK_ID } : {}),
      ...(body ? { body: portalBody(body), invalid: webhookInvalid } : {}),
      handler: async (req, input) => {
        key();
        return handler(req, req.params.id ?? '', input.body as z.output<B>);
      },
    });

  /** What reaches out (a URL resolved, a test ping sent) spends the account's budget: 429 past it. */
  const reachesOut = rateLimitGuard(deps.limiter, {
    limits: [webhookLimit(deps.perMinute)],
    key: (req) => `portal:webhooks:user:${portalUserOf(req).id}`,
    style: PROBLEM_ERRORS,
    log: deps.log,
  });

  /** The URL may be reached: its host resolves (503 when no answer could be had now) to addresses a delivery may go to. */
  const reachable = async (url: string) => {
    let refused: string | undefined;
    try {
      refused = await urlRefusal(url, deps.allowLoopback, deps.resolver);
    } catch (err) {
      if (err instanceof NameUnavailableError) throw hostUnresolved(err.hostname, err.failure.code);
      throw err;
    }
    if (refused) throw urlRefused(refused);
  };

  /** The checks beyond the schema: the URL may be reached (counted against the account's budget), the stations exist. */
  const checked = async (req: Request, fields: { url?: string; hrs_ids?: string[] | null }) => {
    if (fields.url !== undefined) {
      await reachesOut(req);
      await reachable(fields.url);
    }
    if (fields.hrs_ids) {
      const known = await knownStations(sql, fields.hrs_ids);
      const unknown = fields.hrs_ids.filter((id) => !known.has(id));
      if (unknown.length > 0) {
        const shown = unknown.slice(0, 10).join(', ') + (unknown.length > 10 ? ` and ${unknown.length - 10} more` : '');
        throw fieldErrors([{ path: ['hrs_ids'], message: `no station ${shown}` }]);
      }
    }
  };

  const own = async (req: Request, id: string) => {
    const row = await userWebhook(sql, portalUserOf(req).id, id);
    if (!row) throw noSuchWebhook(id);
    return row;
  };

  route('GET', '/portal/v1/webhooks', async (req) => {
    const rows = await userWebhooks(sql, portalUserOf(req).id);
    return json(200, { webhooks: rows.map(webhookView) }, NO_STORE);
  });

  route('POST', '/portal/v1/webhooks', async (req, _id, body) => {
    await checked(req, body);
    const id = newWebhookId();
    const secret = newWebhookSecret();
    const created = await insertWebhook(
      sql,
      {
        id,
        userId: portalUserOf(req).id,
        url: body.url,
        description: body.description ?? '',
        kinds: body.kinds,
        hrs_ids: body.hrs_ids ?? null,
        bbox: body.bbox ?? null,
        secretSealed: sealSecret(key(), secret, id),
      },
      MAX_WEBHOOKS,
    );
    if (created === 'limit') throw limitReached();
    return json(201, { ...webhookView(created), secret }, NO_STORE);
  }, newWebhookSchema);

  route('GET', '/portal/v1/webhooks/:id', async (req, id) => json(200, webhookView(await own(req, id)), NO_STORE));

  route('PATCH', '/portal/v1/webhooks/:id', async (req, id, { state, ...fields }) => {
    const before = await own(req, id);
    if (state === 'active' && before.state === 'unsubscribed') {
      throw unsubscribedRefusal();
    }
    await checked(req, fields);
    const updated = await updateWebhook(sql, portalUserOf(req).id, id, fields, state === 'active');
    if (!updated) throw noSuchWebhook(id);
    return json(200, webhookView(updated));
  }, webhookPatchSchema);

  route('DELETE', '/portal/v1/webhooks/:id', async (req, id) => {
    if (!(await deleteWebhook(sql, portalUserOf(req).id, id))) throw noSuchWebhook(id);
    return { status: 204 };
  });

  route('POST', '/portal/v1/webhooks/:id/rotate-secret', async (req, id) => {
    const secret = newWebhookSecret();
    const row = await rotateWebhookSecret(sql, portalUserOf(req).id, id, sealSecret(key(), secret, id), deps.overlapMs);
    if (!row) throw noSuchWebhook(id);
    return json(200, { secret, previous_secret_valid_until: row.previous_secret_until!.toISOString() }, NO_STORE);
  });

  route('POST', '/portal/v1/webhooks/:id/ping', async (req, id) => {
    await reachesOut(req);
    const messageId = await queuePing(sql, portalUserOf(req).id, id);
    if (messageId === undefined) throw noSuchWebhook(id);
    return json(202, { message_id: messageId });
  });

  route('GET', '/portal/v1/webhooks/:id/deliveries', async (req, id) => {
    await own(req, id);
    const rows = await webhookDeliveries(sql, id, MAX_DELIVERIES_SHOWN);
    return json(200, { deliveries: rows.map(deliveryView) }, NO_STORE);
  });
}
