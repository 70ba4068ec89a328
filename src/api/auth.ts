import { createHash, timingSafeEqual } from 'node:crypto';
import { decideToken, TOKEN_MESSAGES, type Principal, type TokenAudience, type TokenRecord } from '../domain/tokens.js';
import type { Logger } from 'pino';
import { BEARER_MESSAGES, bearerToken, type AuthAttempts, type AuthScheme } from '../http/auth.js';
import { HttpError, unauthorized } from '../http/errors.js';
import { describeLimit, describeWait } from '../http/rate-limit-guard.js';
import type { RateLimit, RateLimiter } from '../http/rate-limit.js';
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

/** Failed authentications allowed per client address and minute before it is refused without a lookup. */
export const AUTH_FAILURE_LIMIT: RateLimit = { limit: 30, windowSeconds: 60, name: 'auth-failures' };

const WARN_EVERY_MS = 60_000;

/**
 * Limits failed authentications (401s, any family) per client address through the rate limiter: once
 * an address has `limit.limit` failures within the window, its requests are refused with 429 and
 * `Retry-After` before any token lookup, until the window has passed since its last counted failure.
 * Successful authentications count nothing. With Redis unreachable nothing is limited (as the rate
 * limits), and a warning is logged at most once a minute.
 */
export function failedAuthLimit(limiter: Pick<RateLimiter, 'ready' | 'counted' | 'hit'>, log: Logger, limit: RateLimit = AUTH_FAILURE_LIMIT): AuthAttempts {
  const key = (address: string) => `auth-failures:${address}`;
  let lastWarning = -Infinity;
  const warn = (err: unknown) => {
    if (Date.now() - lastWarning < WARN_EVERY_MS) return;
    lastWarning = Date.now();
    log.warn({ err }, 'failed authentications not limited: Redis unavailable');
  };
  const description = `${describeLimit(limit, 'client address').replace('request', 'failed authentication')}`;
  return {
    async admit(req, style) {
      if (!limiter.ready) return;
      let failures: number;
      try {
        failures = await limiter.counted(key(req.remoteAddress), limit);
      } catch (err) {
        warn(err);
        return;
      }
      if (failures < limit.limit) return;
      const seconds = Math.ceil(limit.windowSeconds);
      throw new HttpError(429, 'throttled', style.throttled(description, describeWait(seconds)), { headers: { 'Retry-After': String(seconds) } });
    },
    async failed(req, err) {
      if (!(err instanceof HttpError && err.status === 401) || !limiter.ready) return;
      await limiter.hit(key(req.remoteAddress), [limit]).catch(warn);
    },
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
