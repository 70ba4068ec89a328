import {
  createdWebhookSchema,
  deliveryListSchema,
  MAX_WEBHOOKS,
  newWebhookSchema,
  pingAcceptedSchema,
  rotatedSecretSchema,
  webhookListSchema,
  webhookPatchSchema,
  webhookSchema,
} from '../../../domain/webhooks/schemas.js';
import type { RouteDoc } from '../../../http/contract.js';
import { HttpError, PROBLEM_ERRORS } from '../../../http/errors.js';
import { examplesOf, headerRef, responseRef, schemaRef } from '../../../http/openapi.js';
import { pathParameter } from '../../../http/parameters.js';
import { describeLimit, describeWait } from '../../../http/rate-limit-guard.js';
import { fieldErrors, hostUnresolved, limitReached, noSuchWebhook, notConfigured, unsubscribedRefusal, urlRefused, webhookLimit } from '../webhook-words.js';
import { BODY_ERRORS, json, parseErrorExample, problem, problemOf, SESSION_ERRORS, type Examples } from './shared.js';

/**
 * The signed-in account's webhook subscriptions (src/api/portal/webhooks.ts). Every refusal example is
 * the service's own error, built by the same functions (../webhook-words.ts). The messages themselves
 * (payloads, headers, signatures) are described in the export v2 document's `webhooks` section.
 */

export const webhookSchemas = () => ({
  Webhook: webhookSchema,
  WebhookList: webhookListSchema,
  CreatedWebhook: createdWebhookSchema,
  RotatedSecret: rotatedSecretSchema,
  PingAccepted: pingAcceptedSchema,
  DeliveryList: deliveryListSchema,
});

export const webhookRequestSchemas = () => ({ NewWebhook: newWebhookSchema, WebhookPatch: webhookPatchSchema });

/** A subscription's `id` in its path (`:id`), as its routes declare it (../webhooks.ts). */
export const webhookIdParameter = () =>
  pathParameter({
    component: 'webhook_id',
    description: 'The subscription\'s `id` (`wh_…`), as the list gives it. Another account\'s subscription, or one that does not exist, is 404.',
    example: 'wh_3k9v2m7q1x8c5t4b6n0p',
  });

const example = (err: Parameters<typeof problemOf>[0], summary?: string) => ({ ...(summary ? { summary } : {}), value: problemOf(err) });

/** The problem bodies of bad fields, as the service words them. */
const badFields = (): Examples => ({
  no_kinds: example(fieldErrors([{ path: ['kinds'], message: 'must name at least one kind' }]), 'No kind named'),
  bad_bbox: example(fieldErrors([{ path: ['bbox'], message: 'minLon must be less than maxLon' }]), 'A box whose west edge is east of its east edge'),
  unknown_station: example(fieldErrors([{ path: ['hrs_ids'], message: 'no station ZZZZZ' }]), 'A station the platform does not have'),
  private_address: example(urlRefused('refused: 10.0.0.7 is a private address'), 'A URL to a private address'),
  loopback_name: example(urlRefused('refused: localhost resolves to 127.0.0.1 is a loopback address'), 'A name resolving to a loopback address'),
  ...parseErrorExample(),
});

const notFound = () =>
  problem('The account has no subscription with this `id` (another account\'s are not found either).', { not_found: example(noSuchWebhook('wh_3k9v2m7q1x8c5t4b6n0p')) });
const unavailable = (resolves: boolean) => {
  const examples = {
    not_configured: example(notConfigured()),
    ...(resolves ? { host_unresolved: example(hostUnresolved('hooks.example.com', 'ETIMEOUT'), 'The URL\'s host name could not be resolved in time') } : {}),
  };
  return problem(
    'Webhooks are not set up on this platform (`WEBHOOK_SECRET_KEY` is not set: no webhook operation works)' +
      (resolves
        ? ', or the URL\'s host name could not be resolved now (`host_unresolved`: its name servers gave no answer within ' +
          '`WEBHOOK_RESOLVE_TIMEOUT`, or the platform is resolving too many names at once; nothing was changed, try again after `Retry-After` seconds)'
        : '') +
      '.',
    examples,
  );
};

/** The 429 of an operation that reaches out (a URL resolved, a ping sent): the account's budget, or the failed-authentication throttle. */
const throttled = (perMinute: number) =>
  problem(
    `The account's budget for what reaches out is spent: ${describeLimit(webhookLimit(perMinute), 'account')} (\`WEBHOOK_RATE_LIMIT\`), ` +
      'counted on every instance together; wait `Retry-After` seconds (`RateLimit-Limit`, `RateLimit-Remaining` and `RateLimit-Reset` tell ' +
      'where the budget stands on every answer that spent it). Also the failed-authentication throttle, as on every operation.',
    { throttled: example(new HttpError(429, 'throttled', PROBLEM_ERRORS.throttled(webhookLimit(perMinute).description!, describeWait(42)))) },
    { 'Retry-After': headerRef('Retry-After') },
  );

interface Operation {
  method: 'GET' | 'POST' | 'PATCH' | 'DELETE';
  path: string;
  id: string;
  summary: string;
  description: string;
  body?: { schema: string; zod: typeof newWebhookSchema | typeof webhookPatchSchema };
  ok: { status: string; description: string; schema?: string; zod?: Parameters<typeof examplesOf>[0]; noStore?: boolean };
  more?: Record<string, unknown>;
  /** It resolves the URL's host name (a 503 when no answer could be had). */
  resolves?: boolean;
  /** It spends the account's WEBHOOK_RATE_LIMIT budget (a 429 past it). */
  limited?: boolean;
}

function operation(op: Operation, perMinute: number): RouteDoc {
  const changes = op.method !== 'GET';
  const byId = op.path.includes(':id');
  const ok = op.ok.schema
    ? {
        description: op.ok.description,
        ...(op.ok.noStore ? { headers: { 'Cache-Control': headerRef('Cache-Control') } } : {}),
        content: json(op.ok.schema, examplesOf(op.ok.zod!)),
      }
    : { description: op.ok.description };
  return {
    tags: ['Webhooks'],
    operationId: op.id,
    summary: op.summary,
    description: `${op.description}${changes ? ' Needs `Origin`.' : ''}`,
    ...(op.body
      ? { requestBody: { required: true, content: { 'application/json': { schema: schemaRef(op.body.schema), examples: examplesOf(op.body.zod) } } } }
      : {}),
    responses: {
      [op.ok.status]: ok,
      ...(op.body
        ? {
            '400': problem(
              'The body is not JSON (`parse_error`), a field is wrong (`invalid_field`; `errors` maps each field to its message), or the ' +
                'URL may not be delivered to (`url_refused`: not https, or its host resolves to a private, loopback, link-local or reserved address).',
              badFields(),
            ),
            ...BODY_ERRORS,
          }
        : {}),
      ...(changes ? { '403': responseRef('ForbiddenOrigin') } : {}),
      ...(byId ? { '404': notFound() } : {}),
      ...op.more,
      '503': unavailable(op.resolves ?? false),
      ...SESSION_ERRORS,
      ...(op.limited ? { '429': throttled(perMinute) } : {}),
    },
  };
}

/** The operations by `METHOD path`, as ../webhooks.ts registers them. */
export function webhookDocs(perMinute: number): Record<string, RouteDoc> {
  const ops: Operation[] = [
    {
      method: 'GET', path: '/portal/v1/webhooks', id: 'listWebhooks', summary: 'The account\'s webhook subscriptions',
      description: 'Every webhook subscription of the signed-in account, oldest first, with its delivery state; never a secret.',
      ok: { status: '200', description: 'The subscriptions.', schema: 'WebhookList', zod: webhookListSchema, noStore: true },
    },
    {
      method: 'POST', path: '/portal/v1/webhooks', id: 'createWebhook', summary: 'Subscribe: the signing secret, shown once',
      description:
        'Makes a subscription: from now on every change of the kinds named (to the stations named, or inside the box) is POSTed to ' +
        'the URL, signed per Standard Webhooks (see the export v2 reference, "Webhooks"). The answer holds the signing secret **this once**. ' +
        `At most ${MAX_WEBHOOKS} subscriptions per account that are not unsubscribed.`,
      body: { schema: 'NewWebhook', zod: newWebhookSchema },
      ok: { status: '201', description: 'Subscribed: the subscription and its secret (only here, only now).', schema: 'CreatedWebhook', zod: createdWebhookSchema, noStore: true },
      more: { '409': problem(`The account has ${MAX_WEBHOOKS} subscriptions already (unsubscribed ones not counted).`, { limit: example(limitReached()) }) },
      resolves: true,
      limited: true,
    },
    {
      method: 'GET', path: '/portal/v1/webhooks/:id', id: 'getWebhook', summary: 'One subscription',
      description: 'The subscription and its delivery state; never its secret.',
      ok: { status: '200', description: 'The subscription.', schema: 'Webhook', zod: webhookSchema, noStore: true },
    },
    {
      method: 'PATCH', path: '/portal/v1/webhooks/:id', id: 'changeWebhook', summary: 'Change a subscription, or re-enable it',
      description:
        'Changes the fields given. `"state": "active"` re-enables a disabled subscription: its failures are forgotten and delivery ' +
        'resumes where it stopped (nothing is skipped). An unsubscribed one (its receiver answered 410) cannot be re-enabled. Asked of an ' +
        'active one, it tells the webhook workers to look at it again.',
      body: { schema: 'WebhookPatch', zod: webhookPatchSchema },
      ok: { status: '200', description: 'The subscription as it is now.', schema: 'Webhook', zod: webhookSchema },
      resolves: true,
      limited: true,
      more: { '409': problem('Re-enabling a subscription its receiver unsubscribed.', { unsubscribed: example(unsubscribedRefusal()) }) },
    },
    {
      method: 'DELETE', path: '/portal/v1/webhooks/:id', id: 'deleteWebhook', summary: 'Delete a subscription',
      description: 'Deletes the subscription and its deliveries; nothing more is sent to it.',
      ok: { status: '204', description: 'Deleted.' },
    },
    {
      method: 'POST', path: '/portal/v1/webhooks/:id/rotate-secret', id: 'rotateWebhookSecret', summary: 'A new signing secret',
      description:
        'Makes a new secret, shown **this once**. Until `previous_secret_valid_until` every message carries two signatures (the new ' +
        'secret\'s first, then the previous one\'s), so the receiver can switch to the new secret without losing a message. Rotating ' +
        'again during that window drops the oldest secret.',
      ok: { status: '200', description: 'The new secret.', schema: 'RotatedSecret', zod: rotatedSecretSchema, noStore: true },
    },
    {
      method: 'POST', path: '/portal/v1/webhooks/:id/ping', id: 'pingWebhook', summary: 'Send a test message',
      description: 'Queues a `webhook.ping` message to the URL; its delivery shows in the deliveries.',
      ok: { status: '202', description: 'Queued.', schema: 'PingAccepted', zod: pingAcceptedSchema },
      limited: true,
    },
    {
      method: 'GET', path: '/portal/v1/webhooks/:id/deliveries', id: 'listWebhookDeliveries', summary: 'The last deliveries',
      description: 'The last 100 delivery attempts of the subscription, newest first: status, latency, attempt.',
      ok: { status: '200', description: 'The deliveries.', schema: 'DeliveryList', zod: deliveryListSchema, noStore: true },
    },
  ];
  return Object.fromEntries(ops.map((op) => [`${op.method} ${op.path}`, operation(op, perMinute)]));
}
