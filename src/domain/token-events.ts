/**
 * What happened to a personal token, as the admins' live feed tells it (never its value): created,
 * its expiry changed, revoked (by its owner or an admin), and an expiry reminder sent.
 */
export const TOKEN_EVENT_KINDS = ['created', 'expiry_changed', 'revoked', 'expiring'] as const;
export type TokenEventKind = (typeof TOKEN_EVENT_KINDS)[number];

export interface TokenEvent {
  kind: TokenEventKind;
  token_id: string;
  user_id: string;
  name: string;
  /** The value's last four characters; null for tokens loaded from a registry file. */
  hint: string | null;
  /** When it happened (ISO 8601). */
  at: string;
  expires_at: string | null;
  /** For `revoked`: who revoked it. */
  by?: 'owner' | 'admin';
  /** For `expiring`: the reminder's days before expiry. */
  days_before?: number;
}
