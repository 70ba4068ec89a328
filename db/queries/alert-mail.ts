import type { Sql } from '../connect.js';
import { cancelOutboxMail, claimGate, claimOutboxMail, type OutboxClaim } from './token-mail.js';
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
      {
        kind: 'alert_transition' | 'alert_expiring';
        state: string;
        lapsed: boolean;
        claimed_until: Date | null;
        now: Date;
        recipient: string;
        alert_side: WantedSide | null;
        alert_since: Date | null;
        intent_expires_at: Date | null;
        language: AlertLanguage;
        hrs_id: string;
        name: string;
        time_zone: string | null;
        fuelling_option: string;
        wants: WantedSide;
        expires_at: Date;
        manage_token: string;
        alert_state: string;
      }[]
    >`
      SELECT o.kind, o.state, (o.claimed_until IS NOT NULL AND o.claimed_until < clock_timestamp()) AS lapsed, o.claimed_until,
             clock_timestamp() AS now, o.recipient, o.alert_side, o.alert_since, o.expires_at AS intent_expires_at,
             a.language, a.hrs_id, s.name, s.time_zone, a.fuelling_option, a.wants, a.expires_at, a.manage_token, a.state AS alert_state
      FROM mail_outbox o JOIN driver_alerts a ON a.id = o.alert_id JOIN stations s ON s.hrs_id = a.hrs_id
      WHERE o.key = ${key} AND o.kind IN ('alert_transition', 'alert_expiring')
      FOR UPDATE OF o`;
    if (!row) return { outcome: 'skip', reason: 'unknown' };
    const gated = claimGate(row);
    if (gated) return gated;
    if (row.alert_state !== 'active' || (row.kind === 'alert_expiring' && row.intent_expires_at?.getTime() !== row.expires_at.getTime())) {
      return cancelOutboxMail(tx, key);
    }
    await claimOutboxMail(tx, key, leaseMs);
    return {
      outcome: 'claimed',
      mail: {
        key,
        kind: row.kind,
        recipient: row.recipient,
        language: row.language,
        station: { hrsId: row.hrs_id, name: row.name, timeZone: row.time_zone },
        fuellingOption: row.fuelling_option,
        wants: row.wants,
        side: row.alert_side,
        since: row.alert_since,
        expiresAt: row.expires_at,
        manageToken: row.manage_token,
      },
    };
  });
}
