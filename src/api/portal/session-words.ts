import { HttpError } from '../../http/errors.js';
import { describeWait } from '../../http/rate-limit-guard.js';
import type { RateLimit } from '../../infra/rate-limit.js';
import { notQueued, RETRY_AFTER_SECONDS } from '../unavailable.js';

/**
 * The portal's session and sign-in, in the words and figures its routes answer with and its document
 * (./docs/) describes: the cookie, the sign-in link's lifetime and limits, and what a refused request
 * is told. Both read them here; this module imports neither.
 */

export const SESSION_COOKIE = 'hrs_portal';

export const NOT_SIGNED_IN = 'Not signed in, or the session has ended: sign in again with a link sent to your e-mail address.';

/** Why a state-changing request with this `Origin` (or none) is refused, `expected` being the service's own. */
export function originRefusal(origin: string | undefined, expected: string): string {
  return origin === undefined
    ? `This request changes something: it must carry an Origin header naming ${expected}.`
    : `Requests from ${origin} are not accepted here: only pages of ${expected} may change anything.`;
}

/** `Set-Cookie` opening a session (`maxAgeSeconds`), or, without a value, ending it. */
export function sessionCookie(baseUrl: string, value?: string, maxAgeSeconds = 0): string {
  const secure = baseUrl.startsWith('https:') ? '; Secure' : '';
  return `${SESSION_COOKIE}=${value ?? ''}; Path=/portal/; HttpOnly; SameSite=Strict; Max-Age=${value ? maxAgeSeconds : 0}${secure}`;
}

export const SIGN_IN_LINK_MS = 15 * 60_000;
/** Sign-in requests per address and per client, in 15 minutes. */
export const SIGN_IN_PER_ADDRESS: RateLimit = { limit: 5, windowSeconds: 900, name: 'sign-in-address' };
export const SIGN_IN_PER_CLIENT: RateLimit = { limit: 20, windowSeconds: 900, name: 'sign-in-client' };

export const SIGN_IN_ANSWER =
  'If an account has this address, a sign-in link is on its way to it. The link works once, for 15 minutes. ' +
  'Nothing arrived? Check the address and your spam folder, or ask the platform contact for an account.';

/** What a refused sign-in request is told (`what`: `from this client`, `for this address`). */
export const signInThrottled = (what: string, seconds: number) => `Too many sign-in requests ${what}: try again in ${describeWait(seconds)}.`;

/**
 * The 503 of a sign-in request whose link could not be stored (PostgreSQL) or its e-mail queued (Redis):
 * nothing was sent, whether or not the address has an account.
 */
export function signInUnavailable(what: 'database' | 'mail'): HttpError {
  if (what === 'mail') return notQueued('sign-in mail');
  const detail = 'No sign-in link could be made now (the database is unavailable); nothing was sent: try again in a few seconds.';
  return new HttpError(503, 'service_unavailable', detail, { headers: { 'Retry-After': String(RETRY_AFTER_SECONDS) } });
}

/** What a link that cannot be used any more is told (410). */
export const LINK_GONE = {
  signIn: 'This sign-in link was used already or has expired: ask for a new one.',
  reveal: 'This link was used already or has expired: ask the platform contact for a new one.',
} as const;

/**
 * The 503 of a request the portal could not answer within PORTAL_REQUEST_TIMEOUT (whatever it still
 * waits on): a read may simply be asked again; a change may still be applied when what it waited on
 * resumes, and the answer says so.
 */
export function notAnsweredInTime(method: string, timeoutMs: number): HttpError {
  const within = `within ${describeWait(Math.max(1, Math.round(timeoutMs / 1000)))}`;
  const detail =
    method === 'GET' || method === 'HEAD'
      ? `The platform could not answer ${within}: try again later.`
      : `The platform could not finish this request ${within}: the change may still be applied. Check before sending it again, or try again later.`;
  return new HttpError(503, 'service_unavailable', detail, { headers: { 'Retry-After': String(RETRY_AFTER_SECONDS) } });
}
