import { hash } from 'node:crypto';
import type { Sql } from '../../db/connect.js';
import { findTokenByHash, recordTokensUsed, type TokenRow } from '../../db/queries/tokens.js';
import { SANDBOX_TOKEN } from '../domain/sandbox.js';
import type { TokenRecord } from '../domain/tokens.js';

/** The only form in which a token value is ever kept: its SHA-256. */
export function hashToken(value: string): Buffer {
  return Buffer.from(hashKey(value), 'base64');
}

/** The SHA-256 of a token value in base64: one call, no Hash object (every authenticated request computes it). */
const hashKey = (value: string): string => hash('sha256', value, 'base64');

/** How long after a failed lookup cached tokens past their TTL are served without trying again. */
const STALE_AFTER_FAILURE_MS = 1000;

interface Cached {
  record: TokenRecord | null;
  at: number;
}

export interface TokenStoreOptions {
  /** How long a looked-up token (or its absence) is trusted without asking PostgreSQL again. */
  cacheTtlMs?: number;
  maxCached?: number;
  now?: () => number;
  /** Whether the shared sandbox token (SANDBOX_TOKEN) is known (the `SANDBOX` setting); it is never stored. */
  sandbox?: boolean;
}

/** The shared sandbox token, as found: an export v1/v1.1 token flagged `sandbox`, with no owner and no expiry. */
export const SANDBOX_TOKEN_RECORD: Readonly<TokenRecord> = Object.freeze({
  id: 'sandbox',
  generation: 'export_v1',
  originatorId: null,
  userId: null,
  name: 'export v1.1 sandbox',
  expiresAt: null,
  revokedAt: null,
  ownerDeactivated: false,
  sandbox: true,
});

/**
 * Finds tokens by the hash of their value, so the time a lookup takes never depends on how much of a
 * guessed value matches a real one. Lookups are cached briefly; every registry change announced on the
 * bus clears the cache, so a revoked token stops working at once on every instance. Last-used times
 * are gathered in memory and written in one statement per flush, never one write per request.
 *
 * While PostgreSQL is unavailable a token looked up before keeps being served from the cache, past its
 * TTL (what the instance knew last; a revocation announced meanwhile still clears it), so reads served
 * from memory keep working; a token not in the cache cannot be checked and its lookup fails with the
 * database's error (a 503, not a 401: the token may well be valid).
 */
export class TokenStore {
  private readonly cache = new Map<string, Cached>();
  private readonly used = new Map<string, number>();
  private readonly ttl: number;
  private readonly maxCached: number;
  private readonly now: () => number;
  private readonly sandbox: boolean;
  /** Until when cached tokens past their TTL are served without a lookup (one failed just before). */
  private failingUntil = -Infinity;

  constructor(
    private readonly sql: Sql,
    options: TokenStoreOptions = {},
  ) {
    this.ttl = options.cacheTtlMs ?? 30_000;
    this.maxCached = options.maxCached ?? 50_000;
    this.now = options.now ?? Date.now;
    this.sandbox = options.sandbox ?? false;
  }

  /**
   * The record of a token looked up recently (null: known not to exist), or undefined when it is not in
   * the cache or its entry is too old: `find` then asks the database. Lets a request whose token is
   * cached be authenticated without waiting for a promise.
   */
  cached(value: string): TokenRecord | null | undefined {
    if (this.sandbox && value === SANDBOX_TOKEN) return SANDBOX_TOKEN_RECORD;
    const cached = this.cache.get(hashKey(value));
    if (cached && (this.now() - cached.at < this.ttl || this.now() < this.failingUntil)) return cached.record;
    return undefined;
  }

  async find(value: string): Promise<TokenRecord | null> {
    const hit = this.cached(value);
    if (hit !== undefined) return hit;
    const key = hashKey(value);
    // Past its TTL, kept to answer with while the database fails.
    const cached = this.cache.get(key);
    let row: TokenRow | undefined;
    try {
      row = await findTokenByHash(this.sql, Buffer.from(key, 'base64'));
    } catch (err) {
      // Known tokens are not asked for again for a moment: they do not wait for the failure each time.
      this.failingUntil = this.now() + STALE_AFTER_FAILURE_MS;
      if (cached) return cached.record;
      throw err;
    }
    const record = row ? toRecord(row) : null;
    if (this.cache.size >= this.maxCached) this.cache.clear();
    this.cache.set(key, { record, at: this.now() });
    return record;
  }

  /** Forget every cached lookup (a token was added, changed or revoked somewhere). */
  invalidate(): void {
    this.cache.clear();
  }

  markUsed(id: string): void {
    this.used.set(id, this.now());
  }

  /** Writes the gathered last-used times in one statement. */
  async flushLastUsed(): Promise<number> {
    if (this.used.size === 0) return 0;
    const entries = [...this.used];
    this.used.clear();
    try {
      await recordTokensUsed(
        this.sql,
        entries.map(([id]) => id),
        entries.map(([, at]) => new Date(at)),
      );
    } catch (err) {
      for (const [id, at] of entries) if (!this.used.has(id)) this.used.set(id, at);
      throw err;
    }
    return entries.length;
  }
}

function toRecord(row: TokenRow): TokenRecord {
  return {
    id: String(row.id),
    generation: row.generation,
    originatorId: row.originator_id ?? null,
    userId: row.user_id ?? null,
    name: row.name,
    expiresAt: row.expires_at ?? null,
    revokedAt: row.revoked_at ?? null,
    ownerDeactivated: row.owner_deactivated === true,
  };
}
