import type { Sql } from '../connect.js';
import type { AlertRow } from './driver-alerts.js';
import { claimOutboxRow, type OutboxClaim } from './token-mail.js';
import type { WantedSide } from '../../src/domain/alerts/sides.js';
import type { AlertLanguage } from '../../src/domain/alerts/words.js';

/*
 * The driver alerts' e-mails of the outbox (migrations 0006, 0020): written by the alerts worker
 * (./driver-alerts.ts), claimed here by the mail worker with the alert and its station as they are
 * now, then marked sent or failed like the token e-mails (./token-mail.ts).
 */

/** Whether an outbox key names a driver alert's e-mail (`alert:<id>:…`). */
export function isAlertMailKey(key: string): boolean {
  return key.startsWith('alert:');
}

/** A claimed alert e-mail, with the alert and its station as they are now. */
export interface ClaimedAlertMail {
  key: string;
  kind: 'alert_transition' | 'alert_expiring';
  recipient: string;
  language: AlertLanguage;
  station: { hrsId: string; name: string; timeZone: string | null };
  fuellingOption: string;
  wants: WantedSide;
  /** A transition's side and since when it held. */
  side: WantedSide | null;
  since: Date | null;
  expiresAt: Date;
  manageToken: string;
}

export type AlertMailClaim = OutboxClaim<ClaimedAlertMail>;

/**
 * Claims an alert e-mail for `leaseMs`, as claimMail does a token one: pending, or its claim lapsed.
 * A reminder whose alert was kept for another period since (its expiry moved) is cancelled; an e-mail
 * whose alert ended is gone with it (`unknown`).
 */
export async function claimAlertMail(sql: Sql, key: string, leaseMs: number): Promise<AlertMailClaim> {
  return sql.begin(async (tx) => {
    const [row] = await tx<
      ({
        kind: 'alert_transition' | 'alert_expiring';
        state: string;
        lapsed: boolean;
        claimed_until: Date | null;
        now: Date;
        recipient: string;
        alert_side: WantedSide | null;
        alert_since: Date | null;
        intent_expires_at: Date | null;
        expires_at: Date;
        alert_state: string;
      } & Pick<AlertRow, 'language' | 'hrs_id' | 'name' | 'time_zone' | 'fuelling_option' | 'wants' | 'manage_token'>)[]
    >`
      SELECT o.kind, o.state, (o.claimed_until IS NOT NULL AND o.claimed_until < clock_timestamp()) AS lapsed, o.claimed_until,
             clock_timestamp() AS now, o.recipient, o.alert_side, o.alert_since, o.expires_at AS intent_expires_at,
             a.language, a.hrs_id, s.name, s.time_zone, a.fuelling_option, a.wants, a.expires_at, a.manage_token, a.state AS alert_state
      FROM mail_outbox o JOIN driver_alerts a ON a.id = o.alert_id JOIN stations s ON s.hrs_id = a.hrs_id
      WHERE o.key = ${key} AND o.kind IN ('alert_transition', 'alert_expiring')
      FOR UPDATE OF o`;
    // A reminder is due for the expiry it was written for; any e-mail only while its alert is active.
    const due = (r: NonNullable<typeof row>): r is typeof r =>
      r.alert_state === 'active' && (r.kind !== 'alert_expiring' || r.intent_expires_at?.getTime() === r.expires_at.getTime());
    return claimOutboxRow(tx, key, row, leaseMs, due, (r) => ({
      key,
      kind: r.kind,
      recipient: r.recipient,
      language: r.language,
      station: { hrsId: r.hrs_id, name: r.name, timeZone: r.time_zone },
      fuellingOption: r.fuelling_option,
      wants: r.wants,
      side: r.alert_side,
      since: r.alert_since,
      expiresAt: r.expires_at,
      manageToken: r.manage_token,
    }));
  });
}
