import { unauthorized, type ErrorStyle, type HttpError } from './errors.js';
import type { Principal, Request } from './request.js';

export type { Principal };

/**
 * Bearer authentication as the HTTP core knows it: reading the token out of `Authorization`, and the
 * shape of a scheme a family hands the core. Which tokens are valid, and for whom, is the families'
 * business (src/api/auth.ts).
 */

/**
 * A family's authentication: the `Authorization` header → the principal, or an HttpError (401). The
 * request is there for schemes that read something else (the portal's session cookie).
 */
export type AuthScheme = (header: string | undefined, req?: Request) => Promise<Principal> | Principal;

/**
 * A watch on failed authentications, run around every family's scheme (routes and sockets alike). The
 * credential is always checked first: a request whose credential is valid is never refused by the
 * watch. `failed` is told of each refusal and may answer it otherwise: a 429 (an HttpError worded in
 * the family's `style`) for a client that failed too often, returned to be thrown instead of `err`;
 * undefined keeps the refusal as it is.
 */
export interface AuthAttempts {
  failed(req: Request, err: unknown, style: ErrorStyle): Promise<HttpError | undefined> | HttpError | undefined;
}

export const BEARER_MESSAGES = {
  missing: 'Authentication credentials were not provided.',
  malformed: 'Invalid Authorization header: expected "Bearer <token>".',
} as const;

/** `Bearer <token>` → the token, or a 401. */
export function bearerToken(header: string | undefined): string {
  if (header === undefined || header.trim() === '') throw unauthorized(BEARER_MESSAGES.missing);
  const match = /^Bearer +([\x21-\x7e]+) *$/i.exec(header);
  if (!match) throw unauthorized(BEARER_MESSAGES.malformed);
  return match[1]!;
}

/** The access log's fields for a principal: `{originator: id, token_id}`, `{token_id}`, `{admin: 'true'}`. */
export function principalFields(principal: Principal): Record<string, string> {
  const fields: Record<string, string> = {};
  if (principal.id !== undefined) fields[principal.kind] = principal.id;
  if (principal.tokenId !== undefined) fields.token_id = principal.tokenId;
  else if (principal.id === undefined) fields[principal.kind] = 'true';
  return fields;
}
