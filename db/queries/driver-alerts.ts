import type { Fragment, Sql, Tx } from '../connect.js';
import { heard, sideOf, tells, type OptionSides, type Side, type WantedSide } from '../../src/domain/alerts/sides.js';
import type { SummaryState } from '../../src/domain/status/summary.js';
import type { AlertLanguage } from '../../src/domain/alerts/words.js';

/*
 * Driver alerts (migration 0020): what the map's alert requests, the alerts' pages, the alerts worker
 * and the mail worker read and write. An alert's row holds its address; the row is deleted when the
 * alert ends (unsubscribed, expired, or never confirmed), and its outbox rows with it.
 */

export interface AlertRequest {
  email: string;
  language: AlertLanguage;
  hrsId: string;
  fuellingOption: string;
  wants: WantedSide;
  /** SHA-256 of the confirmation link's secret. */
  confirmHash: Buffer;
  confirmUntil: Date;
  /** A new alert's manage token (an existing alert keeps its own). */
  manageToken: string;
}

export type AlertRequestOutcome =
  /** A new pending alert, or the same alert asked for again (its confirmation link is new). */
  | { outcome: 'created' | 'again'; id: string }
  | { outcome: 'address_full'; limit: number }
  | { outcome: 'station_full'; limit: number };

/**
 * Records a request: a new pending alert, or, when the address already has this alert (pending or
 * active), a new confirmation link for it (following it confirms a pending alert, or keeps an active
 * one for another period). Refused past the caps: `perAddress` alerts per address (pending ones
 * count), `perStation` per station. Requests for one address are taken one at a time.
 */
export async function requestAlert(sql: Sql, request: AlertRequest, caps: { perAddress: number; perStation: number }): Promise<AlertRequestOutcome> {
  return sql.begin(async (tx) => {
    await tx`SELECT pg_advisory_xact_lock(hashtext('hrs alert address'), hashtext(lower(${request.email})))`;
    const [same] = await tx<{ id: string }[]>`
      UPDATE driver_alerts SET confirm_hash = ${request.confirmHash}, confirm_until = ${request.confirmUntil}, language = ${request.language}
      WHERE lower(email) = lower(${request.email}) AND hrs_id = ${request.hrsId} AND fuelling_option = ${request.fuellingOption} AND wants = ${request.wants}
      RETURNING id::text`;
    if (same) return { outcome: 'again', id: same.id };
    const [counts] = await tx<{ address: number; station: number }[]>`
      SELECT (SELECT count(*)::int FROM driver_alerts WHERE lower(email) = lower(${request.email})) AS address,
             (SELECT count(*)::int FROM driver_alerts WHERE hrs_id = ${request.hrsId}) AS station`;
    if (counts!.address >= caps.perAddress) return { outcome: 'address_full', limit: caps.perAddress };
    if (counts!.station >= caps.perStation) return { outcome: 'station_full', limit: caps.perStation };
    const [row] = await tx<{ id: string }[]>`
      INSERT INTO driver_alerts (email, language, hrs_id, fuelling_option, wants, confirm_hash, confirm_until, manage_token)
      VALUES (${request.email}, ${request.language}, ${request.hrsId}, ${request.fuellingOption}, ${request.wants},
              ${request.confirmHash}, ${request.confirmUntil}, ${request.manageToken})
      RETURNING id::text`;
    return { outcome: 'created', id: row!.id };
  });
}

/** An alert as its pages show it (never with its address). */
export interface AlertView {
  id: string;
  language: AlertLanguage;
  hrsId: string;
  stationName: string;
  timeZone: string | null;
  fuellingOption: string;
  wants: WantedSide;
  state: 'pending' | 'active';
  manageToken: string;
  expiresAt: Date | null;
}

/** An alert's row with its station's name and zone, as the queries read it (the alert e-mails' claim too: ./alert-mail.ts). */
export interface AlertRow {
  id: string;
  language: AlertLanguage;
  hrs_id: string;
  name: string;
  time_zone: string | null;
  fuelling_option: string;
  wants: WantedSide;
  state: 'pending' | 'active';
  manage_token: string;
  expires_at: Date | null;
}

const viewOf = (row: AlertRow): AlertView => ({
  id: row.id,
  language: row.language,
  hrsId: row.hrs_id,
  stationName: row.name,
  timeZone: row.time_zone,
  fuellingOption: row.fuelling_option,
  wants: row.wants,
  state: row.state,
  manageToken: row.manage_token,
  expiresAt: row.expires_at,
});

/** The alert `where` picks (a fragment on `driver_alerts a`), with its station's name and zone. */
async function alertWhere(sql: Sql | Tx, where: Fragment): Promise<AlertView | undefined> {
  const [row] = await sql<AlertRow[]>`
    SELECT a.id::text, a.language, a.hrs_id, s.name, s.time_zone, a.fuelling_option, a.wants, a.state, a.manage_token, a.expires_at
    FROM driver_alerts a JOIN stations s ON s.hrs_id = a.hrs_id
    WHERE ${where}`;
  return row ? viewOf(row) : undefined;
}

/** The pending or active alert whose confirmation link is still valid, by the link secret's hash. */
export function alertToConfirm(sql: Sql, confirmHash: Buffer): Promise<AlertView | undefined> {
  return alertWhere(sql, sql`a.confirm_hash = ${confirmHash} AND a.confirm_until > clock_timestamp()`);
}

/**
 * Confirms an alert by its link: active from now for `lifetimeMs` (again, for one that was active: it
 * is kept for another period). A pending alert starts from `side`, the option's side now (what its
 * driver sees on the map): a mail goes when the wanted side settles and differs from it.
 */
export async function confirmAlert(sql: Sql, confirmHash: Buffer, side: Side, lifetimeMs: number): Promise<AlertView | undefined> {
  const notified = side === 'none' ? null : side;
  const [row] = await sql<{ id: string }[]>`
    UPDATE driver_alerts SET
      notified_side = CASE WHEN state = 'pending' THEN ${notified}::text ELSE notified_side END,
      state = 'active',
      confirmed_at = clock_timestamp(),
      expires_at = clock_timestamp() + ${`${lifetimeMs} milliseconds`}::interval
    WHERE confirm_hash = ${confirmHash} AND confirm_until > clock_timestamp()
    RETURNING id::text`;
  return row ? alertWhere(sql, sql`a.id = ${row.id}::bigint`) : undefined;
}

/** The alert its manage token names. */
export function alertByToken(sql: Sql, manageToken: string): Promise<AlertView | undefined> {
  return alertWhere(sql, sql`a.manage_token = ${manageToken}`);
}

/** Keeps an active alert for another `lifetimeMs` from now; undefined when there is none (or it is not confirmed). */
export async function renewAlert(sql: Sql, manageToken: string, lifetimeMs: number): Promise<AlertView | undefined> {
  const [row] = await sql<{ id: string }[]>`
    UPDATE driver_alerts SET expires_at = clock_timestamp() + ${`${lifetimeMs} milliseconds`}::interval
    WHERE manage_token = ${manageToken} AND state = 'active'
    RETURNING id::text`;
  return row ? alertWhere(sql, sql`a.id = ${row.id}::bigint`) : undefined;
}

/** Ends an alert (its row, its address and its unsent e-mails are deleted); what it was, or undefined. */
export async function deleteAlert(sql: Sql, manageToken: string): Promise<AlertView | undefined> {
  return sql.begin(async (tx) => {
    const alert = await alertWhere(tx, tx`a.manage_token = ${manageToken} FOR UPDATE OF a`);
    if (alert) await tx`DELETE FROM driver_alerts WHERE id = ${alert.id}::bigint`;
    return alert;
  });
}

/** Whether any alert is active (the live status's option changes are then recorded for them). */
export async function anyActiveAlert(sql: Sql): Promise<boolean> {
  const [row] = await sql<{ any: boolean }[]>`SELECT EXISTS (SELECT 1 FROM driver_alerts WHERE state = 'active') AS any`;
  return row!.any;
}

/** Drivers waiting, per station and side, for the operator's stations (counts of active alerts, never addresses). */
export async function waitingCounts(sql: Sql, hrsIds: readonly string[] | null): Promise<Map<string, { up: number; down: number }>> {
  const rows = await sql<{ hrs_id: string; up: number; down: number }[]>`
    SELECT hrs_id, count(*) FILTER (WHERE wants = 'up')::int AS up, count(*) FILTER (WHERE wants = 'down')::int AS down
    FROM driver_alerts
    WHERE state = 'active' AND (${hrsIds === null} OR hrs_id = ANY(${hrsIds ?? []}::text[]))
    GROUP BY hrs_id`;
  return new Map(rows.map((r) => [r.hrs_id, { up: r.up, down: r.down }]));
}

/** Per fuelling option of one station: drivers waiting for it to come up, and to go down. */
export async function waitingByOption(sql: Sql, hrsId: string): Promise<{ fuelling_option: string; up: number; down: number }[]> {
  return sql<{ fuelling_option: string; up: number; down: number }[]>`
    SELECT fuelling_option, count(*) FILTER (WHERE wants = 'up')::int AS up, count(*) FILTER (WHERE wants = 'down')::int AS down
    FROM driver_alerts WHERE state = 'active' AND hrs_id = ${hrsId}
    GROUP BY fuelling_option ORDER BY fuelling_option`;
}

// The alerts worker -------------------------------------------------------------------------------------

/** An alert e-mail written to the outbox: its key and when it is due. */
export interface AlertMailIntent {
  key: string;
  dueAt: Date;
}

export interface FollowResult {
  /** Change-log rows read. */
  read: number;
  /** Transitions that settled, and the e-mails they wrote. */
  settled: number;
  intents: AlertMailIntent[];
  /** When the next settling change settles (epoch ms), if any. */
  nextDueAt: number | undefined;
  /** Whether any alert is active (confirmed and not expired): while none is, a change needs no pass of its own. */
  active: boolean;
}

/** Rows read from the change log per pass. */
const FOLLOW_PAGE = 5000;

/**
 * One pass of the alerts worker, in one transaction under the alerts' lock (workers on several
 * machines take turns; a pass that dies leaves nothing half done): the change log's `option` rows past
 * the cursor, for options with active alerts, move each option's sides (./../../src/domain/alerts/sides.ts
 * `heard`); every change that has held for `settleMs` settles, and each active alert it tells gets its
 * e-mail in the outbox, under a key made of the alert and the change (one e-mail per transition, what
 * ever happens after). Every alert of the option then has that side as the one its driver knows.
 */
export async function followAlerts(sql: Sql, settleMs: number, now: Date): Promise<FollowResult> {
  return sql.begin(async (tx) => {
    await tx`SELECT pg_advisory_xact_lock(hashtext('hrs alerts'))`;
    const [cursor] = await tx<{ seq: string }[]>`SELECT seq::text FROM alert_cursor FOR UPDATE`;
    const rows = await tx<{ seq: string; at: Date; hrs_id: string; option: string; status: string }[]>`
      SELECT c.seq::text, c.at, c.hrs_id, c.payload->>'fuelling_option' AS option, c.payload->>'status' AS status
      FROM change_log c
      WHERE c.topic = 'option' AND c.seq > ${cursor!.seq}::bigint
      ORDER BY c.seq LIMIT ${FOLLOW_PAGE}`;
    const read = rows.length;
    if (rows.length > 0) {
      await tx`UPDATE alert_cursor SET seq = ${rows[rows.length - 1]!.seq}::bigint`;
      const watched = await watchedOptions(tx, rows);
      const sides = await optionSides(tx, [...new Set(rows.map((r) => `${r.hrs_id}/${r.option}`))].filter((e) => watched.has(e)));
      for (const row of rows) {
        const entity = `${row.hrs_id}/${row.option}`;
        if (!watched.has(entity)) continue;
        const before = sides.get(entity) ?? { settled: null, pending: null };
        sides.set(entity, heard(before, { side: sideOf(row.status as SummaryState), seq: row.seq, at: row.at }));
      }
      await storeSides(tx, sides);
    }
    const settled = await settleDue(tx, settleMs, now);
    const [next] = await tx<{ due: Date | null; active: boolean }[]>`
      SELECT (SELECT min(pending_at) + ${`${settleMs} milliseconds`}::interval FROM alert_options WHERE pending_side IS NOT NULL) AS due,
             EXISTS (SELECT 1 FROM driver_alerts WHERE state = 'active') AS active`;
    return { read, settled: settled.transitions, intents: settled.intents, nextDueAt: next?.due?.getTime(), active: next?.active ?? false };
  });
}

/** Of the rows' options, those with an active alert (`hrs_id/option`). */
async function watchedOptions(tx: Tx, rows: readonly { hrs_id: string; option: string }[]): Promise<Set<string>> {
  const hrsIds = [...new Set(rows.map((r) => r.hrs_id))];
  const watched = await tx<{ entity: string }[]>`
    SELECT DISTINCT hrs_id || '/' || fuelling_option AS entity FROM driver_alerts
    WHERE state = 'active' AND hrs_id = ANY(${hrsIds}::text[])`;
  return new Set(watched.map((w) => w.entity));
}

async function optionSides(tx: Tx, entities: readonly string[]): Promise<Map<string, OptionSides>> {
  const rows = await tx<{ entity: string; settled_side: Side | null; pending_side: Side | null; pending_seq: string | null; pending_at: Date | null }[]>`
    SELECT hrs_id || '/' || fuelling_option AS entity, settled_side, pending_side, pending_seq::text, pending_at
    FROM alert_options WHERE hrs_id || '/' || fuelling_option = ANY(${entities}::text[])
    FOR UPDATE`;
  return new Map(
    rows.map((r) => [
      r.entity,
      { settled: r.settled_side, pending: r.pending_side === null ? null : { side: r.pending_side, seq: r.pending_seq!, at: r.pending_at! } },
    ]),
  );
}

async function storeSides(tx: Tx, sides: Map<string, OptionSides>): Promise<void> {
  if (sides.size === 0) return;
  const rows = [...sides].map(([entity, s]) => {
    const slash = entity.indexOf('/');
    return {
      hrs_id: entity.slice(0, slash),
      fuelling_option: entity.slice(slash + 1),
      settled_side: s.settled,
      pending_side: s.pending?.side ?? null,
      pending_seq: s.pending?.seq ?? null,
      pending_at: s.pending?.at.toISOString() ?? null,
    };
  });
  await tx`
    INSERT INTO alert_options (hrs_id, fuelling_option, settled_side, pending_side, pending_seq, pending_at)
    SELECT hrs_id, fuelling_option, settled_side, pending_side, pending_seq, pending_at
    FROM jsonb_to_recordset(${JSON.stringify(rows)}::text::jsonb)
      AS r(hrs_id text, fuelling_option text, settled_side text, pending_side text, pending_seq bigint, pending_at timestamptz)
    ON CONFLICT (hrs_id, fuelling_option) DO UPDATE SET
      settled_side = EXCLUDED.settled_side, pending_side = EXCLUDED.pending_side, pending_seq = EXCLUDED.pending_seq, pending_at = EXCLUDED.pending_at`;
}

/** Settles every change that has held for `settleMs`: the sides, the e-mails, what each alert knows. */
async function settleDue(tx: Tx, settleMs: number, now: Date): Promise<{ transitions: number; intents: AlertMailIntent[] }> {
  const due = await tx<{ hrs_id: string; fuelling_option: string; pending_side: Side; pending_seq: string; pending_at: Date }[]>`
    UPDATE alert_options o SET settled_side = before.pending_side, settled_seq = before.pending_seq, settled_at = ${now},
                             pending_side = NULL, pending_seq = NULL, pending_at = NULL
    FROM (SELECT hrs_id, fuelling_option, pending_side, pending_seq, pending_at FROM alert_options
          WHERE pending_side IS NOT NULL AND pending_at + ${`${settleMs} milliseconds`}::interval <= ${now}
          FOR UPDATE) AS before
    WHERE o.hrs_id = before.hrs_id AND o.fuelling_option = before.fuelling_option
    RETURNING before.hrs_id, before.fuelling_option, before.pending_side, before.pending_seq::text, before.pending_at`;
  const intents: AlertMailIntent[] = [];
  for (const change of due) {
    if (change.pending_side === 'none') continue;
    const alerts = await tx<{ id: string; wants: WantedSide; notified_side: WantedSide | null }[]>`
      SELECT id::text, wants, notified_side FROM driver_alerts
      WHERE state = 'active' AND hrs_id = ${change.hrs_id} AND fuelling_option = ${change.fuelling_option}
        AND confirmed_at <= ${change.pending_at}::timestamptz + ${`${settleMs} milliseconds`}::interval
      FOR UPDATE`;
    const told = alerts.filter((a) => tells({ wants: a.wants, notifiedSide: a.notified_side }, change.pending_side));
    if (told.length > 0) {
      const written = await tx<{ key: string; due_at: Date }[]>`
        INSERT INTO mail_outbox (key, kind, alert_id, recipient, due_at, alert_side, alert_since)
        SELECT 'alert:' || a.id || ':' || ${change.pending_seq}, 'alert_transition', a.id, a.email, clock_timestamp(), ${change.pending_side}, ${change.pending_at}
        FROM driver_alerts a WHERE a.id = ANY(${told.map((a) => a.id)}::bigint[])
        ON CONFLICT (key) DO NOTHING
        RETURNING key, due_at`;
      intents.push(...written.map((w) => ({ key: w.key, dueAt: w.due_at })));
    }
    await tx`
      UPDATE driver_alerts SET notified_side = ${change.pending_side}
      WHERE state = 'active' AND hrs_id = ${change.hrs_id} AND fuelling_option = ${change.fuelling_option}`;
  }
  return { transitions: due.length, intents };
}

/**
 * The alerts' upkeep: pending alerts whose confirmation link lapsed are deleted, and active ones past
 * their expiry (their addresses with them); an active alert ending within `reminderMs` gets its
 * reminder in the outbox (once per expiry: one kept for another period gets one for the new expiry);
 * an option no alert watches any more is forgotten.
 */
export async function alertUpkeep(sql: Sql, reminderMs: number, now: Date): Promise<{ unconfirmed: number; expired: number; intents: AlertMailIntent[] }> {
  return sql.begin(async (tx) => {
    const unconfirmed = await tx`DELETE FROM driver_alerts WHERE state = 'pending' AND confirm_until <= ${now}`;
    const expired = await tx`DELETE FROM driver_alerts WHERE state = 'active' AND expires_at <= ${now}`;
    const written = await tx<{ key: string; due_at: Date }[]>`
      INSERT INTO mail_outbox (key, kind, alert_id, recipient, due_at, expires_at)
      SELECT 'alert:' || id || ':expiring:' || (extract(epoch FROM expires_at) * 1000)::bigint, 'alert_expiring', id, email, clock_timestamp(), expires_at
      FROM driver_alerts
      WHERE state = 'active' AND expires_at - ${`${reminderMs} milliseconds`}::interval <= ${now}
        AND confirmed_at < expires_at - ${`${reminderMs} milliseconds`}::interval
      ON CONFLICT (key) DO NOTHING
      RETURNING key, due_at`;
    await tx`
      DELETE FROM alert_options o
      WHERE NOT EXISTS (SELECT 1 FROM driver_alerts a WHERE a.state = 'active' AND a.hrs_id = o.hrs_id AND a.fuelling_option = o.fuelling_option)`;
    return { unconfirmed: unconfirmed.count, expired: expired.count, intents: written.map((w) => ({ key: w.key, dueAt: w.due_at })) };
  });
}
