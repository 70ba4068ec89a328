import type { Sql } from '../connect.js';
import { claimOutboxRow, type OutboxClaim } from './token-mail.js';

/*
 * The webhook e-mails of the outbox (migrations 0006, 0016): written when a subscription is disabled
 * (db/queries/webhook-delivery.ts recordOutcome), claimed here by the mail worker, then marked sent or
 * failed like the token e-mails (db/queries/token-mail.ts).
 */

/** Whether an outbox key names a webhook e-mail (`webhook:<subscription id>:disabled:<instant>`). */
export function isWebhookMailKey(key: string): boolean {
  return key.startsWith('webhook:');
}

/** A claimed webhook e-mail, with the subscription and its owner as they are now. */
export interface ClaimedWebhookMail {
  key: string;
  kind: 'webhook_disabled';
  recipient: string;
  owner: { name: string | null; email: string };
  subscription: { id: string; url: string; description: string; failingSince: Date | null; disabledAt: Date; reason: string | null };
}

/** Cancelled: the subscription was enabled again (or removed) before the e-mail went. */
export type WebhookMailClaim = OutboxClaim<ClaimedWebhookMail>;

/**
 * Claims a webhook e-mail for `leaseMs`, as claimMail does a token one: pending, or its claim lapsed.
 * One whose subscription is no longer disabled is cancelled rather than sent.
 */
export async function claimWebhookMail(sql: Sql, key: string, leaseMs: number): Promise<WebhookMailClaim> {
  return sql.begin(async (tx) => {
    const [row] = await tx<
      {
        state: string;
        lapsed: boolean;
        claimed_until: Date | null;
        recipient: string;
        now: Date;
        id: string | null;
        url: string;
        description: string;
        sub_state: string | null;
        failing_since: Date | null;
        disabled_at: Date | null;
        disabled_reason: string | null;
        name: string | null;
      }[]
    >`
      SELECT o.state, (o.claimed_until IS NOT NULL AND o.claimed_until < clock_timestamp()) AS lapsed, o.claimed_until, o.recipient,
             clock_timestamp() AS now, w.id, w.url, w.description, w.state AS sub_state, w.failing_since, w.disabled_at,
             w.disabled_reason, u.name
      FROM mail_outbox o LEFT JOIN webhook_subscriptions w ON w.id = o.subscription_id LEFT JOIN users u ON u.id = w.user_id
      WHERE o.key = ${key} AND o.kind = 'webhook_disabled'
      FOR UPDATE OF o`;
    const due = (r: NonNullable<typeof row>): r is typeof r & { id: string; disabled_at: Date } =>
      r.id !== null && r.sub_state === 'disabled' && r.disabled_at !== null;
    return claimOutboxRow(tx, key, row, leaseMs, due, (r) => ({
      key,
      kind: 'webhook_disabled' as const,
      recipient: r.recipient,
      owner: { name: r.name, email: r.recipient },
      subscription: {
        id: r.id,
        url: r.url,
        description: r.description,
        failingSince: r.failing_since,
        disabledAt: r.disabled_at,
        reason: r.disabled_reason,
      },
    }));
  });
}
