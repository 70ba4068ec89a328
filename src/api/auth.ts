import { createHash, timingSafeEqual } from 'node:crypto';
import { decideToken, TOKEN_MESSAGES, type Principal, type TokenAudience, type TokenRecord } from '../domain/tokens.js';
import type { Logger } from 'pino';
import type { Audience } from '../domain/sandbox.js';
import { BEARER_MESSAGES, bearerToken, type AuthAttempts, type AuthScheme } from '../http/auth.js';
import { DRF_ERRORS, HttpError, unauthorized, type ErrorStyle } from '../http/errors.js';
import type { Guard } from '../http/family.js';
import { describeLimit, describeWait, rateLimitGuard } from '../http/rate-limit-guard.js';
import type { RateLimit, RateLimiter } from '../infra/rate-limit.js';
import type { Request } from '../http/request.js';

/**
 * The families' authentication schemes: a family's token generation through the token store and the
 * domain's rule (src/domain/tokens.ts), or the admin token; narrowing a request's principal; and the
 * import generations' limit, whose budget is the authenticated originator's.
 */

/** Every message a refused credential gets. */
export const MESSAGES = { ...BEARER_MESSAGES, ...TOKEN_MESSAGES } as const;

/** Where tokens are found by value (the registry's token store: by hash, cached) and their use noted. */
export interface TokenFinder {
  find(value: string): Promise<TokenRecord | null>;
  /** A recent lookup's record without waiting (undefined: not cached; `find` then). */
  cached?(value: string): TokenRecord | null | undefined;
  markUsed(id: string): void;
}

/**
 * Bearer tokens of one generation, looked up by value; a 401 says why one is refused. A token the
 * finder has cached is decided at once (no promise to wait for), others after the lookup.
 */
export function tokenAuth(tokens: TokenFinder, audience: TokenAudience, now: () => number = Date.now): AuthScheme {
  // A record's acceptance, kept with the record (a new lookup makes a new record) until it expires:
  // the same token's requests share one principal, decided once.
  const accepted = new WeakMap<TokenRecord, { principal: Principal; until: number }>();
  const decide = (record: TokenRecord | null): Principal => {
    const at = now();
    const kept = record === null ? undefined : accepted.get(record);
    let principal: Principal;
    if (kept !== undefined && at < kept.until) principal = kept.principal;
    else {
      const decision = decideToken(record, audience, at);
      if (!decision.ok) throw unauthorized(decision.reason);
      principal = decision.principal;
      accepted.set(record!, { principal, until: record!.expiresAt?.getTime() ?? Number.POSITIVE_INFINITY });
    }
    // The shared sandbox token is not stored: there is no last use to record.
    if (principal.kind !== 'admin' && principal.kind !== 'sandbox') tokens.markUsed(principal.tokenId);
    return principal;
  };
  return (header) => {
    const value = bearerToken(header);
    const hit = tokens.cached?.(value);
    return hit === undefined ? tokens.find(value).then(decide) : decide(hit);
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

/** Failed authentications allowed per client address and minute before its failures get 429. */
export const AUTH_FAILURE_LIMIT: RateLimit = { limit: 30, windowSeconds: 60, name: 'auth-failures' };

const WARN_EVERY_MS = 60_000;

/** Addresses held refused at once, at most (the oldest go first past it). */
const MAX_BLOCKED = 100_000;

/**
 * Limits failed authentications (401s, any family) per client address (`Request.clientAddress`: the
 * peer, or the address a trusted proxy forwarded). The credential is always checked first, so a
 * request with a valid token is never refused here, whoever else shares its address: only failures are
 * throttled. Each failure is counted through the rate limiter in Redis (shared by every instance);
 * once an address has `limit.limit` failures within the window, this instance answers that address's
 * further failures with 429 and `Retry-After` instead of 401 (with no Redis call) until the window has
 * passed since then; another instance learns of the address at its own next failure from it.
 * Successful authentications count nothing. "The failing client" is its address: keying by the token
 * presented would never slow a client that tries a new one each time.
 * With Redis unreachable nothing is limited (as the rate limits), with a warning at most once a minute.
 */
export function failedAuthLimit(limiter: Pick<RateLimiter, 'ready' | 'hit'> & Partial<Pick<RateLimiter, 'failed'>>, log: Logger, limit: RateLimit = AUTH_FAILURE_LIMIT): AuthAttempts {
  const key = (address: string) => `auth-failures:${address}`;
  /** Address → until when (epoch ms) its failures are refused. */
  const blocked = new Map<string, number>();
  let lastWarning = -Infinity;
  // During a Redis outage the process's one warning says so (src/infra/redis-outage.ts): a debug line.
  const warn = (err: unknown) => {
    if (Date.now() - lastWarning < WARN_EVERY_MS) return;
    const msg = 'failed authentications not limited: Redis unavailable';
    if (!limiter.failed) log.warn({ err }, msg);
    if ((limiter.failed?.(log, err, msg) ?? 'fault') === 'fault') lastWarning = Date.now();
  };
  const block = (address: string) => {
    if (blocked.size >= MAX_BLOCKED) forgetExpired(blocked);
    if (blocked.size >= MAX_BLOCKED) blocked.delete(blocked.keys().next().value!);
    blocked.delete(address);
    blocked.set(address, Date.now() + limit.windowSeconds * 1000);
  };
  const description = describeLimit(limit, 'client address', 'failed authentication');
  const refusal = (style: ErrorStyle, waitMs: number) => {
    const seconds = Math.max(1, Math.ceil(waitMs / 1000));
    return new HttpError(429, 'throttled', style.throttled(description, describeWait(seconds)), { headers: { 'Retry-After': String(seconds) } });
  };
  /** How long the address's failures are still refused (0: not refused). */
  const blockedFor = (address: string) => {
    const until = blocked.get(address);
    if (until === undefined) return 0;
    const waitMs = until - Date.now();
    if (waitMs <= 0) blocked.delete(address);
    return Math.max(0, waitMs);
  };
  return {
    async failed(req, err, style) {
      if (!(err instanceof HttpError && err.status === 401)) return undefined;
      const address = req.clientAddress;
      const waitMs = blocked.size === 0 ? 0 : blockedFor(address);
      if (waitMs > 0) return refusal(style, waitMs);
      if (!limiter.ready) return undefined;
      try {
        const result = await limiter.hit(key(address), [limit]);
        if (!result.allowed || result.remaining === 0) block(address);
        // Over the limit already (counted by another instance): this failure is refused too.
        if (!result.allowed) return refusal(style, limit.windowSeconds * 1000);
      } catch (failure) {
        warn(failure);
      }
      return undefined;
    },
  };
}

function forgetExpired(blocked: Map<string, number>): void {
  const now = Date.now();
  for (const [address, until] of blocked) if (until <= now) blocked.delete(address);
}

function sha256(value: string): Buffer {
  return createHash('sha256').update(value, 'utf8').digest();
}

/** Which stations a request may see: the sandbox token's sample stations, or production data for everyone else. */
export function audienceOf(req: Request): Audience {
  return principalOf(req)?.kind === 'sandbox' ? 'sandbox' : 'production';
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

/**
 * The import generations' limit: one budget per signal originator across every endpoint of the
 * generation (`generation` names the keys; v1 and v1.1 share `import_v1`), refused in the import error style.
 */
export function originatorLimitGuard(limiter: RateLimiter, limit: RateLimit, generation: 'import_v1' | 'import_v2', log: Logger): Guard {
  return rateLimitGuard(limiter, {
    limits: [limit],
    key: (req) => `${generation}:originator:${originatorOf(req)}`,
    style: DRF_ERRORS,
    per: 'signal originator',
    log,
  });
}

/** The user an export v2 route acts for; reaching one without is a wiring error (500). */
export function userOf(req: Request): string {
  const principal = principalOf(req);
  if (principal?.kind !== 'user') throw new Error(`${req.path} reached without a user`);
  return principal.id;
}
