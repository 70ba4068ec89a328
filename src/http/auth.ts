import { createHash, timingSafeEqual } from 'node:crypto';
import type { Generation } from '../domain/vocabulary.js';
import type { TokenStore } from '../registry/tokens.js';
import { unauthorized } from './errors.js';

/** The API families; each accepts exactly one token generation (the admin API takes ADMIN_TOKEN). */
export const API_FAMILIES = {
  import_v1: { label: 'import v1', accepts: 'import_v1' },
  'import_v1.1': { label: 'import v1.1', accepts: 'import_v1' },
  import_v2: { label: 'import v2', accepts: 'import_v2' },
  export_v1: { label: 'export v1', accepts: 'export_v1' },
  'export_v1.1': { label: 'export v1.1', accepts: 'export_v1' },
  export_v2: { label: 'export v2', accepts: 'export_v2' },
} as const satisfies Record<string, { label: string; accepts: Generation }>;

export type ApiFamily = keyof typeof API_FAMILIES;

const GENERATION_LABEL: Record<Generation, string> = {
  import_v1: 'an import v1/v1.1 token',
  import_v2: 'an import v2 token',
  export_v1: 'an export v1/v1.1 token',
  export_v2: 'a personal export v2 token',
};

/** Who a request acts for once authenticated. */
export type Principal =
  | { kind: 'originator'; id: string; tokenId: string; generation: Generation }
  | { kind: 'user'; id: string; tokenId: string; generation: Generation }
  | { kind: 'client'; tokenId: string; generation: Generation }
  | { kind: 'admin' };

export const MESSAGES = {
  missing: 'Authentication credentials were not provided.',
  malformed: 'Invalid Authorization header: expected "Bearer <token>".',
  unknown: 'Invalid token.',
  revoked: 'Token has been revoked.',
  expired: 'Token has expired.',
  deactivated: 'The account this token belongs to has been deactivated.',
  exportV1OnV2:
    'Export v1 and v1.1 tokens do not authenticate on export v2. Export v2 accepts personal tokens only: ' +
    'create one on the API tokens page of your portal account, or request one from the platform contact.',
  personalOnV1: 'Personal export v2 tokens are rejected on export v1 and v1.1; use an export v1/v1.1 token.',
  adminDisabled: 'The admin API is disabled: ADMIN_TOKEN is not set.',
} as const;

function wrongGeneration(family: ApiFamily, generation: Generation): string {
  const { label, accepts } = API_FAMILIES[family];
  if (accepts === 'export_v2' && generation === 'export_v1') return MESSAGES.exportV1OnV2;
  if (accepts === 'export_v1' && generation === 'export_v2') return MESSAGES.personalOnV1;
  return `This is ${GENERATION_LABEL[generation]}; ${label} accepts ${GENERATION_LABEL[accepts]} only.`;
}

/** `Bearer <token>` → the token, or a 401. */
export function bearerToken(header: string | undefined): string {
  if (header === undefined || header.trim() === '') throw unauthorized(MESSAGES.missing);
  const match = /^Bearer +([\x21-\x7e]+) *$/i.exec(header);
  if (!match) throw unauthorized(MESSAGES.malformed);
  return match[1]!;
}

export class Authenticator {
  private readonly adminHash: Buffer | undefined;

  constructor(
    private readonly tokens: TokenStore,
    adminToken: string | undefined,
    private readonly now: () => number = Date.now,
  ) {
    this.adminHash = adminToken === undefined ? undefined : sha256(adminToken);
  }

  /** The principal behind the Authorization header for a family, or a 401 saying why not. */
  async authenticate(family: ApiFamily, header: string | undefined): Promise<Principal> {
    const value = bearerToken(header);
    const token = await this.tokens.find(value);
    if (!token) throw unauthorized(MESSAGES.unknown);
    if (token.generation !== API_FAMILIES[family].accepts) throw unauthorized(wrongGeneration(family, token.generation));
    if (token.revokedAt) throw unauthorized(MESSAGES.revoked);
    if (token.expiresAt && token.expiresAt.getTime() <= this.now()) throw unauthorized(MESSAGES.expired);
    if (token.ownerDeactivated) throw unauthorized(MESSAGES.deactivated);
    this.tokens.markUsed(token.id);
    if (token.originatorId) return { kind: 'originator', id: token.originatorId, tokenId: token.id, generation: token.generation };
    if (token.userId) return { kind: 'user', id: token.userId, tokenId: token.id, generation: token.generation };
    return { kind: 'client', tokenId: token.id, generation: token.generation };
  }

  /** The admin API: ADMIN_TOKEN compared in constant time; unset means every request is refused. */
  authenticateAdmin(header: string | undefined): Principal {
    if (!this.adminHash) throw unauthorized(MESSAGES.adminDisabled);
    const value = bearerToken(header);
    if (!timingSafeEqual(sha256(value), this.adminHash)) throw unauthorized(MESSAGES.unknown);
    return { kind: 'admin' };
  }
}

function sha256(value: string): Buffer {
  return createHash('sha256').update(value, 'utf8').digest();
}
