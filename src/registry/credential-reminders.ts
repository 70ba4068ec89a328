import { createHash } from 'node:crypto';
import type { Logger } from 'pino';
import type { Sql } from '../../db/connect.js';
import { adminAccountEmails, credentialsNearExpiry } from '../../db/queries/credential-reminders.js';
import { insertMailIntents, type MailIntent } from '../../db/queries/token-mail.js';
import { credentialRecipients, dueReminder, REMINDER_OFFSETS_MS } from '../domain/token-reminders.js';

/**
 * The expiry reminders of import tokens (v2, and v1/v1.1) and legacy export tokens: the same 30- and
 * 7-day reminders as personal tokens, to the originator's managers and, for tokens loaded from a
 * registry file, legacy export tokens and originators without a manager, to the admins. They are found
 * by the mail sweep (workers/mail/processor.ts, every MAIL_SWEEP_EVERY) rather than scheduled when the
 * token is made: who manages an originator changes over a token's year, registry files load tokens
 * outside any request, and tokens made before these reminders existed get them too. Each due reminder
 * is written to the outbox once per token, distance, expiry and recipient (a deterministic key); the
 * sweep then gives it its job and the mail worker sends it once, as any token e-mail. A token renewed
 * (its expiry changed) or revoked before the worker sends it has its reminder cancelled by the worker.
 */

export interface CredentialReminderSettings {
  /** TOKEN_REMINDERS: how long before expiry the two reminders are due. */
  offsetsMs?: readonly [thirtyDays: number, sevenDays: number];
  /** ADMIN_EMAILS: told besides the accounts with the admin role. */
  adminEmails?: readonly string[];
  now?: Date;
  log?: Logger;
}

/** `token:42:expiring:30:2027-02-23T14:05:00.000Z:to:<16 hex>`: one reminder to one recipient. */
export function credentialReminderKey(tokenId: string, reminderKey: string, email: string): string {
  return `token:${tokenId}:${reminderKey}:to:${createHash('sha256').update(email.toLowerCase()).digest('hex').slice(0, 16)}`;
}

/**
 * Writes to the outbox the reminders due now of import and legacy export tokens, each once: an
 * intent whose key exists already (sent, or waiting) is left as it is. Returns the intents written
 * (the caller, the sweep, gives every unsent e-mail its job) and the tokens due with nobody to tell.
 */
export async function writeCredentialReminders(sql: Sql, settings: CredentialReminderSettings = {}): Promise<{ written: MailIntent[]; untold: string[] }> {
  const now = settings.now ?? new Date();
  const offsets = settings.offsetsMs ?? REMINDER_OFFSETS_MS;
  const tokens = await credentialsNearExpiry(sql, now, offsets[0]);
  if (tokens.length === 0) return { written: [], untold: [] };
  const admins = [...(await adminAccountEmails(sql)), ...(settings.adminEmails ?? [])];
  const intents: MailIntent[] = [];
  const untold: string[] = [];
  for (const token of tokens) {
    const reminder = dueReminder({ createdAt: token.created_at, expiresAt: token.expires_at, offsetsMs: offsets, now });
    if (!reminder) continue;
    const recipients = credentialRecipients({ generation: token.generation, fromFile: token.hint === null, managers: token.managers, admins });
    if (recipients.length === 0) untold.push(token.id);
    for (const r of recipients) {
      intents.push({
        key: credentialReminderKey(token.id, reminder.key, r.email),
        kind: 'expiring',
        tokenId: token.id,
        recipient: r.email,
        dueAt: reminder.dueAt,
        daysBefore: reminder.daysBefore,
        expiresAt: token.expires_at,
      });
    }
  }
  const keys = new Set(await insertMailIntents(sql, intents));
  const written = intents.filter((i) => keys.has(i.key));
  if (untold.length > 0) {
    settings.log?.warn(
      { tokens: untold },
      'import or legacy export tokens expire soon and nobody can be told: give their originators a manager, an account the admin role, or set ADMIN_EMAILS',
    );
  }
  return { written, untold };
}
