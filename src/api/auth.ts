import { createHash, timingSafeEqual } from 'node:crypto';
import { decideToken, TOKEN_MESSAGES, type Principal, type TokenAudience, type TokenRecord } from '../domain/tokens.js';
import { BEARER_MESSAGES, bearerToken, type AuthScheme } from '../http/auth.js';
import { unauthorized } from '../http/errors.js';
import type { Request } from '../http/request.js';

/**
 * The families' authentication schemes: a family's token generation through the token store and the
 * domain's rule (src/domain/tokens.ts), or the admin token; and narrowing a request's principal.
 */

/** Every message a refused credential gets. */
export const MESSAGES = { ...BEARER_MESSAGES, ...TOKEN_MESSAGES } as const;

/** Where tokens are found by value (the registry's token store: by hash, cached) and their use noted. */
export interface TokenFinder {
  find(value: string): Promise<TokenRecord | null>;
  markUsed(id: string): void;
}

/** Bearer tokens of one generation, looked up by value; a 401 says why one is refused. */
export function tokenAuth(tokens: TokenFinder, audience: TokenAudience, now: () => number = Date.now): AuthScheme {
  return async (header) => {
    const decision = decideToken(await tokens.find(bearerToken(header)), audience, now());
    if (!decision.ok) throw unauthorized(decision.reason);
    if (decision.principal.kind !== 'admin') tokens.markUsed(decision.principal.tokenId);
    return decision.principal;
  };
}

/** The admin API: ADMIN_TOKEN compared in constant time; unset means every request is refused. */
export function adminAuth(adminToken: string | undefined): AuthScheme {
  const expected = adminToken === undefined ? undefined : sha256(adminToken);
  return (header) => {
    if (!expected) throw unauthorized(MESSAGES.adminDisabled);
    if (!timingSafeEqual(sha256(bearerToken(header)), expected)) throw unauthorized(MESSAGES.unknown);
    return { kind: 'admin' };
  };
}

function sha256(value: string): Buffer {
  return createHash('sha256').update(value, 'utf8').digest();
}

/** The request's principal as the domain knows it (every family's scheme above makes one). */
export function principalOf(req: Request): Principal | undefined {
  return req.principal as Principal | undefined;
}

/** The originator an import route acts for; reaching one without is a wiring error (500). */
export function originatorOf(req: Request): string {
  const principal = principalOf(req);
  if (principal?.kind !== 'originator') throw new Error(`${req.path} reached without an originator`);
  return principal.id;
}

/** The user an export v2 route acts for; reaching one without is a wiring error (500). */
export function userOf(req: Request): string {
  const principal = principalOf(req);
  if (principal?.kind !== 'user') throw new Error(`${req.path} reached without a user`);
  return principal.id;
}
