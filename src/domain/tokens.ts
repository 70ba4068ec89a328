import type { Generation } from './vocabulary.js';

/**
 * Whether a presented token may act on an API family, and who it acts for: the rule every family's
 * authentication applies to the token record found by the value's hash.
 */

/** A token as the rule needs it (the registry's token store fills it). */
export interface TokenRecord {
  id: string;
  generation: Generation;
  originatorId: string | null;
  userId: string | null;
  name: string;
  expiresAt: Date | null;
  revokedAt: Date | null;
  ownerDeactivated: boolean;
  /** The shared sandbox token (src/domain/sandbox.ts): export v1.1 only, sandbox stations only. */
  sandbox?: boolean;
}

/** Who a request acts for once authenticated. */
export type Principal =
  | { kind: 'originator'; id: string; tokenId: string; generation: Generation }
  | { kind: 'user'; id: string; tokenId: string; generation: Generation }
  | { kind: 'client'; tokenId: string; generation: Generation }
  /** The shared sandbox token: sees the sandbox's sample stations only. */
  | { kind: 'sandbox'; tokenId: string; generation: Generation }
  | { kind: 'admin' };

/** What an API family accepts: one token generation, named in refusals by `label` (`import v2`). */
export interface TokenAudience {
  label: string;
  accepts: Generation;
  /** Whether the shared sandbox token is accepted too (export v1.1 only). */
  sandbox?: boolean;
}

/** Why a token is refused, in the words the API answers with. */
export const TOKEN_MESSAGES = {
  unknown: 'Invalid token.',
  revoked: 'Token has been revoked.',
  expired: 'Token has expired.',
  deactivated: 'The account this token belongs to has been deactivated.',
  exportV1OnV2:
    'Export v1 and v1.1 tokens do not authenticate on export v2. Export v2 accepts personal tokens only: ' +
    'create one on the API tokens page of your portal account, or request one from the platform contact.',
  personalOnV1: 'Personal export v2 tokens are rejected on export v1 and v1.1; use an export v1/v1.1 token.',
  adminDisabled: 'The admin API is disabled: ADMIN_TOKEN is not set.',
  sandboxOnV2:
    'The shared sandbox token does not authenticate on export v2: it works on the export v1.1 sandbox (/v1.1/) only. ' +
    'Export v2 accepts personal tokens only: create one on the API tokens page of your portal account, or request one from the platform contact.',
  sandboxElsewhere: 'The shared sandbox token works on the export v1.1 sandbox (/v1.1/) only.',
} as const;

const GENERATION_LABEL: Record<Generation, string> = {
  import_v1: 'an import v1/v1.1 token',
  import_v2: 'an import v2 token',
  export_v1: 'an export v1/v1.1 token',
  export_v2: 'a personal export v2 token',
};

const audienceName = (audience: TokenAudience) => audience.label.charAt(0).toUpperCase() + audience.label.slice(1);

function wrongGeneration(audience: TokenAudience, generation: Generation): string {
  if (audience.accepts === 'export_v2' && generation === 'export_v1') return TOKEN_MESSAGES.exportV1OnV2;
  if (audience.accepts === 'export_v1' && generation === 'export_v2') return TOKEN_MESSAGES.personalOnV1;
  return `This is ${GENERATION_LABEL[generation]}; ${audience.label} accepts ${GENERATION_LABEL[audience.accepts]} only.`;
}

export type TokenDecision = { ok: true; principal: Principal } | { ok: false; reason: string };

/**
 * The decision on a token found (or not) for a presented value. The wrong generation is said first,
 * even for a token also revoked or expired: the caller learns first that it holds the wrong kind.
 */
export function decideToken(token: TokenRecord | null, audience: TokenAudience, now: number): TokenDecision {
  if (!token) return { ok: false, reason: TOKEN_MESSAGES.unknown };
  if (token.sandbox === true) {
    if (audience.sandbox === true) return { ok: true, principal: { kind: 'sandbox', tokenId: token.id, generation: token.generation } };
    if (audience.accepts === 'export_v2') return { ok: false, reason: TOKEN_MESSAGES.sandboxOnV2 };
    const instead = audience.accepts === 'export_v1' ? 'has no sandbox' : `accepts ${GENERATION_LABEL[audience.accepts]} only`;
    return { ok: false, reason: `${TOKEN_MESSAGES.sandboxElsewhere} ${audienceName(audience)} ${instead}.` };
  }
  if (token.generation !== audience.accepts) return { ok: false, reason: wrongGeneration(audience, token.generation) };
  if (token.revokedAt) return { ok: false, reason: TOKEN_MESSAGES.revoked };
  if (token.expiresAt && token.expiresAt.getTime() <= now) return { ok: false, reason: TOKEN_MESSAGES.expired };
  if (token.ownerDeactivated) return { ok: false, reason: TOKEN_MESSAGES.deactivated };
  const { id: tokenId, generation } = token;
  if (token.originatorId) return { ok: true, principal: { kind: 'originator', id: token.originatorId, tokenId, generation } };
  if (token.userId) return { ok: true, principal: { kind: 'user', id: token.userId, tokenId, generation } };
  return { ok: true, principal: { kind: 'client', tokenId, generation } };
}
