import type { Sql } from '../../../db/connect.js';
import type { Clock } from '../../config/clock.js';
import { openSession } from '../../../db/queries/portal.js';
import { userRoles } from '../../../db/queries/roles.js';
import type { Roles } from '../../domain/portal/roles.js';
import type { AuthScheme } from '../../http/auth.js';
import { HttpError, PROBLEM_ERRORS, unauthorized } from '../../http/errors.js';
import type { Family } from '../../http/family.js';
import type { Request } from '../../http/request.js';
import { hashSecret } from '../secrets.js';
import { PORTAL_DOCUMENT } from './docs/document.js';
import { invalidInput } from '../accounts/input.js';
import { NOT_SIGNED_IN, notAnsweredInTime, originRefusal, SESSION_COOKIE } from './session-words.js';

/**
 * The portal family (`/portal/`): the page and its JSON API under `/portal/v1/`, for token owners.
 * It authenticates by a server-side session behind an `HttpOnly`, `SameSite=Strict` cookie (`Secure`
 * when BASE_URL is https), opened by an e-mailed single-use link; every state-changing request must
 * come from the service's own origin (`Origin`), so another site cannot act with the cookie.
 */

const SESSION_TOUCH_MS = 60_000;

export interface PortalSettings {
  sql: Sql;
  /** The absolute base of the service (BASE_URL, or the address listened on): its origin is the only one allowed. */
  baseUrl: () => string;
  /** Seconds a session may go unused (PORTAL_SESSION_IDLE) and may last at all (PORTAL_SESSION_MAX). */
  idleMs: number;
  maxMs: number;
  /** The platform's clock, by which sign-in links and sessions expire. */
  clock: Clock;
  /** How long a request may go without an answer (PORTAL_REQUEST_TIMEOUT): past it, a 503 with Retry-After. None when absent. */
  requestTimeoutMs?: number;
}

/** The principal of a portal request: the signed-in account. */
export interface PortalPrincipal {
  kind: 'portal';
  id: string;
  email: string;
  name: string | null;
  /** What the account may do beyond its own tokens: admin, operator staff, originator manager. */
  roles: Roles;
}

const sessions = new WeakMap<Request, Buffer>();

/** The cookie's value, if the request carries it. */
function cookieValue(req: Request, name: string): string | undefined {
  const header = req.headers.cookie;
  if (!header) return undefined;
  for (const part of header.split(';')) {
    const eq = part.indexOf('=');
    if (eq > 0 && part.slice(0, eq).trim() === name) return part.slice(eq + 1).trim();
  }
  return undefined;
}

/** The session behind the cookie → the account; 401 without one. */
export function sessionAuth(settings: PortalSettings): AuthScheme {
  return async (_header, req) => {
    const secret = req ? cookieValue(req, SESSION_COOKIE) : undefined;
    if (!req || !secret || !/^[\w-]{43}$/.test(secret)) throw unauthorized(NOT_SIGNED_IN);
    const hash = hashSecret(secret);
    const user = await openSession(settings.sql, hash, settings.idleMs, SESSION_TOUCH_MS, settings.clock);
    if (!user) throw unauthorized(NOT_SIGNED_IN);
    sessions.set(req, hash);
    const roles = await userRoles(settings.sql, user.id);
    return {
      kind: 'portal',
      id: user.id,
      email: user.email,
      name: user.name,
      roles: {
        admin: roles?.admin ?? false,
        operators: new Set(roles?.operators.map((o) => o.id)),
        originators: new Set(roles?.originators.map((o) => o.id)),
      },
    } satisfies PortalPrincipal;
  };
}

/** The hash of the request's session (after authentication). */
export function sessionOf(req: Request): Buffer {
  const hash = sessions.get(req);
  if (!hash) throw new Error('portal route reached without a session');
  return hash;
}

export function portalUserOf(req: Request): PortalPrincipal {
  const principal = req.principal as PortalPrincipal | undefined;
  if (principal?.kind !== 'portal') throw new Error('portal route reached without a session');
  return principal;
}

/** State-changing requests must name the service's own origin; anything else is a 403. */
export function checkOrigin(req: Request, baseUrl: string): void {
  if (req.method === 'GET' || req.method === 'HEAD' || req.method === 'OPTIONS') return;
  const expected = new URL(baseUrl).origin;
  const origin = req.headers.origin;
  if (origin !== expected) throw new HttpError(403, 'forbidden_origin', originRefusal(origin, expected));
}

export function portalFamily(settings: PortalSettings): Family {
  return {
    name: 'portal',
    prefix: '/portal/',
    auth: sessionAuth(settings),
    errors: PROBLEM_ERRORS,
    guards: [(req) => checkOrigin(req, settings.baseUrl())],
    invalid: invalidInput,
    document: PORTAL_DOCUMENT,
    ...(settings.requestTimeoutMs ? { deadline: { ms: settings.requestTimeoutMs, refusal: (req) => notAnsweredInTime(req.method, settings.requestTimeoutMs!) } } : {}),
  };
}
