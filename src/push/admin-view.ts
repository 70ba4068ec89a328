import type { TokenEvent } from '../domain/token-events.js';
import type { StationDirectory, StationLookup } from '../domain/stations.js';
import type { LiveStatus, StatusChange } from '../../machines/live-status.js';
import type { Receipt } from '../domain/signals.js';
import type { Rejection } from '../domain/rejections.js';
import { SECTION_KEYS, type Category } from '../domain/categories/index.js';
import type { OpeningChange } from '../../machines/opening-clock.js';
import type { ExpiringTokenRow } from '../../db/queries/credential-reminders.js';

/**
 * The messages of the admins' live feed (`/admin/v1/live`), as JSON text: the snapshot of every
 * station, a station's row, a change of the change stream, a receipt. Category names are the status
 * object's section keys (`hydrogen_storage`), not the import path's signal types.
 */

/** What the feed reads of the live status: a station's categories with their freshness and times. */
export type StatusCategories = Pick<LiveStatus, 'categories'>;

const sectionKey = (category: string) => SECTION_KEYS[category as Category] ?? category;
const iso = (ms: number) => new Date(ms).toISOString();

/** One station as the dashboard shows it: name and, per section, freshness, times, originator and section. */
export function stationRow(stations: StationLookup, status: StatusCategories, hrsId: string): string | undefined {
  const station = stations.station(hrsId);
  if (!station) return undefined;
  const categories = status.categories(hrsId);
  const sections: Record<string, unknown> = {};
  for (const [category, key] of Object.entries(SECTION_KEYS)) {
    const view = categories[category as Category];
    sections[key] = view
      ? {
          freshness: view.freshness,
          datetime: iso(view.datetime),
          received_datetime: iso(view.receivedAt),
          originator_id: view.originatorId,
          section: view.section,
        }
      : null;
  }
  return JSON.stringify({ hrs_id: hrsId, name: station.name, sections });
}

/**
 * `snapshot`: every registered station's row, sorted by hrs_id, and the tokens expiring soon
 * (`expiring_tokens`, a JSON array of `expiringTokensView`, or `null` while not read yet).
 */
export function snapshotMessage(stations: Pick<StationDirectory, 'station' | 'stationIds'>, status: StatusCategories, expiringTokens = 'null'): string {
  const ids = [...stations.stationIds()].sort();
  let json = `{"type":"snapshot","at":"${new Date().toISOString()}","expiring_tokens":${expiringTokens},"stations":[`;
  let first = true;
  for (const id of ids) {
    const row = stationRow(stations, status, id);
    if (row === undefined) continue;
    json += first ? row : `,${row}`;
    first = false;
  }
  return `${json}]}`;
}

/** `station` with the row again after a registry change, or `removed` for a station that left. */
export function registryMessage(stations: StationLookup, status: StatusCategories, hrsId: string): string {
  const row = stationRow(stations, status, hrsId);
  return row === undefined ? JSON.stringify({ type: 'removed', hrs_id: hrsId }) : `{"type":"station","station":${row}}`;
}

/** `change`: one event of the change stream. */
export function changeMessage(change: StatusChange): string {
  return JSON.stringify({
    type: 'change',
    at: new Date().toISOString(),
    hrs_id: change.hrsId,
    category: sectionKey(change.category),
    cause: change.cause,
    previous: change.previous,
    freshness: change.freshness,
    datetime: iso(change.datetime),
    received_datetime: iso(change.receivedAt),
    originator_id: change.originatorId,
    section: change.section,
  });
}

/** `opening`: a station opened or closed by its opening hours (the export v1.1 summary turns `CLOSED` or back). */
export function openingMessage(change: OpeningChange): string {
  return JSON.stringify({ type: 'opening', at: new Date(change.at).toISOString(), hrs_id: change.hrsId, open: change.open });
}

/** `token`: a personal token was created, its expiry changed, revoked, or its owner reminded (never its value). */
export function tokenMessage(event: TokenEvent): string {
  return JSON.stringify({ type: 'token', ...event });
}

/** `receipt`: a stored but unpublished transmission, without values. */
export function receiptMessage(receipt: Receipt, at: string): string {
  return JSON.stringify({ type: 'receipt', at, ...receipt, category: sectionKey(receipt.category) });
}

/** `rejection`: a refused import call, with the first error of its answer (no request values). */
export function rejectionMessage(rejection: Rejection): string {
  return JSON.stringify({ type: 'rejection', ...rejection });
}

/**
 * A token expiring soon as the dashboard lists it (never its value): id, kind (its generation), name
 * and hint, the originator (import tokens) or the owner (personal tokens), its expiry, and where it
 * was made (`portal`, or `registry` for a registry file).
 */
export function expiringTokensView(row: ExpiringTokenRow) {
  return {
    id: row.id,
    kind: row.generation,
    name: row.name,
    hint: row.hint,
    originator: row.originator_id === null ? null : { id: row.originator_id, name: row.originator_name ?? row.originator_id },
    user: row.user_id === null ? null : { id: row.user_id, email: row.user_email },
    expires_at: row.expires_at.toISOString(),
    source: row.source,
  };
}

/** `expiring_tokens`: the tokens expiring within 30 days, soonest first (`list` is the JSON array). */
export function expiringTokensMessage(list: string): string {
  return `{"type":"expiring_tokens","at":"${new Date().toISOString()}","within_days":30,"tokens":${list}}`;
}
