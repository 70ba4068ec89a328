import type { z } from 'zod';
import { MAX_WEBHOOKS } from '../../domain/webhooks/schemas.js';
import { HttpError } from '../../http/errors.js';
import type { RateLimit } from '../../infra/rate-limit.js';
import { notQueued, RETRY_AFTER_SECONDS } from '../unavailable.js';
import { fieldName } from '../accounts/input.js';

/**
 * The refusals of the portal's webhook API (./webhooks.ts), one place for their words: the API and
 * its document (./docs/webhooks.ts) build them alike. A bad field is a 400 `invalid_field` whose
 * `errors` member maps each field (top-level name, `(body)` for the body as a whole) to what is wrong
 * with it, so a form can show each message beside its field; `detail` lists them all.
 */

/** The 400 of fields the schema or the checks beyond it refuse. */
export function fieldErrors(issues: readonly Pick<z.core.$ZodIssue, 'path' | 'message'>[]): HttpError {
  const errors: Record<string, string> = {};
  for (const issue of issues) {
    const [field, ...rest] = issue.path;
    const name = field === undefined ? '(body)' : fieldName([field]);
    const message = rest.length > 0 ? `${fieldName(rest)}: ${issue.message}` : issue.message;
    errors[name] = errors[name] ? `${errors[name]}; ${message}` : message;
  }
  const detail = Object.entries(errors).map(([name, message]) => `${name}: ${message}`).join('; ');
  return new HttpError(400, 'invalid_field', detail, { extensions: { errors } });
}

/** The 400 of a URL that may not be delivered to (server-side request forgery, or not https). */
export const urlRefused = (reason: string) => new HttpError(400, 'url_refused', `url: ${reason}`, { extensions: { errors: { url: reason } } });

export const limitReached = () =>
  new HttpError(409, 'webhook_limit', `The account has ${MAX_WEBHOOKS} webhook subscriptions already (unsubscribed ones not counted): delete one first.`);

export const noSuchWebhook = (id: string) => new HttpError(404, 'not_found', `No webhook subscription "${id}" of this account.`);

export const unsubscribedRefusal = () =>
  new HttpError(409, 'webhook_unsubscribed', 'The receiver unsubscribed (it answered 410 Gone): make a new subscription instead.');

export const notConfigured = () =>
  new HttpError(503, 'webhooks_not_configured', 'Webhooks are not set up on this platform (no WEBHOOK_SECRET_KEY): ask its operators.', { asConfigured: true });

/** WEBHOOK_RATE_LIMIT as a limit: what reaches out, per minute per account. */
export const webhookLimit = (perMinute: number): RateLimit => ({
  limit: perMinute,
  windowSeconds: 60,
  name: 'webhooks-minute',
  description: `at most ${perMinute} webhook subscriptions made, URLs changed and test pings sent per minute per account`,
});

/** Why a host name could not be resolved now, by the resolver's code. */
function unresolvedReason(hostname: string, code: string | undefined): string {
  if (code === 'ETIMEOUT') return `the host ${hostname} could not be resolved in time (its name servers did not answer)`;
  if (code === 'EBUSY') return `the host ${hostname} was not resolved: the platform is resolving too many host names at once`;
  return `the host ${hostname} could not be resolved now (${code ?? 'resolver error'})`;
}

/** The 503 of a URL whose host could not be resolved now: nothing was changed; its `errors` name the field, as a refusal's do. */
export const hostUnresolved = (hostname: string, code: string | undefined) => {
  const reason = unresolvedReason(hostname, code);
  return new HttpError(503, 'host_unresolved', `url: ${reason}; nothing was changed: try again shortly.`, {
    headers: { 'Retry-After': String(RETRY_AFTER_SECONDS) },
    extensions: { errors: { url: reason } },
  });
};
