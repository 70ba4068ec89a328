import type { Sql, Tx } from '../../db/connect.js';
import {
  activePersonalTokens,
  insertPersonalToken,
  lockUserTokens,
  personalTokenForUpdate,
  setTokenExpiry,
  setTokenRevoked,
  tokenOwner,
  type PersonalTokenRow,
} from '../../db/queries/personal-tokens.js';
import { cancelReminders, insertMailIntents, type MailIntent } from '../../db/queries/token-mail.js';
import type { TokenEvent } from '../domain/token-events.js';
import { reminderSchedule } from '../domain/token-reminders.js';
import {
  checkExpiry,
  defaultExpiry,
  MAX_ACTIVE_PERSONAL_TOKENS,
  newTokenValue,
  tokenHint,
  tooManyTokensMessage,
} from '../domain/token-values.js';
import { hashToken } from './tokens.js';

/**
 * The lifecycle of personal (export v2) tokens: created (the value made here, returned once, stored as
 * its SHA-256 and a four-character hint), expiry changed, revoked. Each change and the e-mails it
 * means (created, revoked, the reminders 30 and 7 days before expiry) are written in one transaction:
 * the e-mails' intents go to the outbox, and the caller hands the returned intents to the mail queue
 * after the commit (workers/mail/outbox.ts). Changing the expiry cancels the reminders not sent yet and
 * schedules the new ones; revoking cancels them.
 */

/** A change refused by a rule; `status` is the HTTP status it is answered with. */
export class TokenRuleError extends Error {
  readonly code = 'TOKEN_RULE';
  constructor(
    readonly status: 400 | 403 | 404 | 409,
    message: string,
  ) {
    super(message);
  }
}

/** How the rules word their refusals (the APIs answer with these words). */
export const TOKEN_RULE_MESSAGES = {
  noSuchToken: 'No such token.',
  revoked: 'This token has been revoked; a revoked token cannot be changed.',
  expired: 'This token has expired; an expired token cannot be renewed: create a new one.',
  deactivated: 'The account is deactivated: it cannot get new tokens.',
} as const;

export interface PersonalTokenSettings {
  /** How long before expiry the two reminders go out (30 and 7 days; tests shorten them). */
  reminderOffsetsMs: readonly [thirtyDays: number, sevenDays: number];
  now?: () => Date;
  /** The expiry rule: `checkExpiry` (a day to 366 days ahead) unless given (tests of the e-mails shorten it). */
  checkExpiry?: (expiresAt: Date, now: Date) => string | null;
}

export interface Changed {
  token: PersonalTokenRow;
  /** The e-mails written to the outbox, to be given their jobs after the commit. */
  mail: MailIntent[];
  /** What happened, for the admins' live feed (announced after the commit). */
  events: TokenEvent[];
}

/** A token's event as the feed tells it. */
export function tokenEvent(kind: TokenEvent['kind'], token: PersonalTokenRow, extra: Partial<TokenEvent> = {}): TokenEvent {
  return {
    kind,
    token_id: token.id,
    user_id: token.user_id,
    name: token.name,
    hint: token.hint,
    at: new Date().toISOString(),
    expires_at: token.expires_at?.toISOString() ?? null,
    ...extra,
  };
}

export class PersonalTokens {
  private readonly now: () => Date;
  private readonly checkExpiry: (expiresAt: Date, now: Date) => string | null;

  constructor(
    private readonly sql: Sql,
    private readonly settings: PersonalTokenSettings,
  ) {
    this.now = settings.now ?? (() => new Date());
    this.checkExpiry = settings.checkExpiry ?? checkExpiry;
  }

  /** Creates a token for the user; the value is in the answer and nowhere else, ever. */
  async create(userId: string, name: string, expiresAt?: Date): Promise<Changed & { value: string }> {
    return this.sql.begin((tx) => this.createIn(tx, userId, name, expiresAt));
  }

  /** `create` within the caller's transaction (a reveal link is used in the same one). */
  async createIn(tx: Tx, userId: string, name: string, expiresAt?: Date): Promise<Changed & { value: string }> {
    const now = this.now();
    const expiry = expiresAt ?? defaultExpiry(now);
    const problem = this.checkExpiry(expiry, now);
    if (problem) throw new TokenRuleError(400, problem);
    const value = newTokenValue('export_v2');
    const owner = await this.owner(tx, userId);
    await lockUserTokens(tx, userId);
    const active = await activePersonalTokens(tx, userId, now);
    if (active >= MAX_ACTIVE_PERSONAL_TOKENS) throw new TokenRuleError(409, tooManyTokensMessage(active));
    const token = await insertPersonalToken(tx, { userId, name, hash: hashToken(value), hint: tokenHint(value), expiresAt: expiry });
    const mail: MailIntent[] = [
      { key: `token:${token.id}:created`, kind: 'created', tokenId: token.id, recipient: owner.email, dueAt: token.created_at },
      ...this.reminders(token, owner.email, now),
    ];
    await insertMailIntents(tx, mail);
    return { token, value, mail, events: [tokenEvent('created', token)] };
  }

  /** Sets a new expiry (within the bounds) on an active token: the reminders follow it. */
  async changeExpiry(id: string, expiresAt: Date, userId?: string): Promise<Changed> {
    const now = this.now();
    const problem = this.checkExpiry(expiresAt, now);
    if (problem) throw new TokenRuleError(400, problem);
    return this.sql.begin(async (tx) => {
      const current = await personalTokenForUpdate(tx, id, userId);
      if (!current) throw new TokenRuleError(404, TOKEN_RULE_MESSAGES.noSuchToken);
      if (current.revoked_at) throw new TokenRuleError(409, TOKEN_RULE_MESSAGES.revoked);
      if (current.expires_at && current.expires_at.getTime() <= now.getTime()) {
        throw new TokenRuleError(409, TOKEN_RULE_MESSAGES.expired);
      }
      const owner = await this.owner(tx, current.user_id, false);
      const token = await setTokenExpiry(tx, id, expiresAt);
      await cancelReminders(tx, id);
      const mail = this.reminders(token, owner.email, now);
      const written = new Set(await insertMailIntents(tx, mail));
      return { token, mail: mail.filter((m) => written.has(m.key)), events: [tokenEvent('expiry_changed', token)] };
    });
  }

  /**
   * Revokes a token (any generation: the admin API revokes import and legacy tokens too); a personal
   * token's owner is told, once, and its reminders are cancelled. Undefined when there is no such token.
   */
  async revoke(id: string, by: 'owner' | 'admin', userId?: string): Promise<{ mail: MailIntent[]; events: TokenEvent[] } | undefined> {
    return this.sql.begin(async (tx) => {
      if (userId !== undefined && !(await personalTokenForUpdate(tx, id, userId))) return undefined;
      const revoked = await setTokenRevoked(tx, id, by);
      if (!revoked) return undefined;
      if (!revoked.newly || revoked.generation !== 'export_v2' || revoked.user_id === null) return { mail: [], events: [] };
      const token = (await personalTokenForUpdate(tx, id))!;
      const events = [tokenEvent('revoked', token, { by })];
      const owner = await tokenOwner(tx, revoked.user_id);
      await cancelReminders(tx, id);
      if (!owner) return { mail: [], events };
      const mail: MailIntent[] = [{ key: `token:${id}:revoked`, kind: 'revoked', tokenId: id, recipient: owner.email, dueAt: this.now(), revokedBy: by }];
      await insertMailIntents(tx, mail);
      return { mail, events };
    });
  }

  private async owner(tx: Tx, userId: string, mustBeActive = true): Promise<{ email: string; name: string | null }> {
    const owner = await tokenOwner(tx, userId);
    if (!owner) throw new TokenRuleError(404, `No user "${userId}".`);
    if (mustBeActive && owner.deactivated) throw new TokenRuleError(403, TOKEN_RULE_MESSAGES.deactivated);
    return owner;
  }

  /** The reminders of the token's expiry, as intents (none without an expiry, none it cannot honour). */
  private reminders(token: PersonalTokenRow, recipient: string, now: Date): MailIntent[] {
    if (!token.expires_at) return [];
    const schedule = reminderSchedule({ createdAt: token.created_at, expiresAt: token.expires_at, offsetsMs: this.settings.reminderOffsetsMs, now });
    return schedule.map((r) => ({
      key: `token:${token.id}:${r.key}`,
      kind: 'expiring' as const,
      tokenId: token.id,
      recipient,
      dueAt: r.dueAt,
      daysBefore: r.daysBefore,
      expiresAt: token.expires_at!,
    }));
  }
}
