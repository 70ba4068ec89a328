import type { TokenEvent } from '../domain/token-events.js';
import type { StationDirectory, StationLookup } from '../domain/stations.js';
import type { LiveStatus, StatusChange } from '../../machines/live-status.js';
import type { Receipt } from '../domain/signals.js';
import type { Rejection } from '../domain/rejections.js';
import { SECTION_KEYS, type Category } from '../domain/categories/index.js';
import type { OpeningChange } from '../../machines/opening-clock.js';
import type { ExpiringTokenRow } from '../../db/queries/credential-reminders.js';
import type { StationVerdict } from '../domain/status/verdict.js';

/**
 * The messages of the admins' live feed (`/admin/v1/live`), as JSON text: the snapshot of every
 * station, a station's row, a change of the change stream, a receipt. Category names are the status
 * object's section keys (`hydrogen_storage`), not the import path's signal types.
 */

/** What the feed reads of the live status: a station's categories with their freshness and times. */
export type StatusCategories = Pick<LiveStatus, 'categories'>;

/** Each station's verdict (src/domain/status/verdict.ts): the dashboard's state, chips and cells show it. */
export interface VerdictSource {
  of(hrsId: string): StationVerdict | undefined;
}

/** A station's verdict as JSON, `null` without a source (or for a station that left). */
const verdictJson = (verdicts: VerdictSource | undefined, hrsId: string) => JSON.stringify(verdicts?.of(hrsId) ?? null);

const sectionKey = (category: string) => SECTION_KEYS[category as Category] ?? category;
const iso = (ms: number) => new Date(ms).toISOString();

/** Told each section a snapshot or row carries (the fan-out keeps them, for the next change's `previous_section`). */
export type SectionSeen = (hrsId: string, category: string, section: Record<string, unknown> | null) => void;

/**
 * One station as the dashboard shows it: name, whether it is one of the export v1.1 sandbox's sample
 * stations (`sandbox`), its verdict (`verdict`: state, reason and per fuelling option, as every face
 * shows it), and, per section, freshness, times, originator and section.
 */
export function stationRow(stations: StationLookup, status: StatusCategories, hrsId: string, seen?: SectionSeen, verdicts?: VerdictSource): string | undefined {
  const station = stations.station(hrsId);
  if (!station) return undefined;
  const categories = status.categories(hrsId);
  const sections: Record<string, unknown> = {};
  for (const [category, key] of Object.entries(SECTION_KEYS)) {
    const view = categories[category as Category];
    seen?.(hrsId, key, view?.section ?? null);
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
  return JSON.stringify({ hrs_id: hrsId, name: station.name, sandbox: station.sandbox === true, verdict: verdicts?.of(hrsId) ?? null, sections });
}

/**
 * `snapshot`: every registered station's row, sorted by hrs_id, and the tokens expiring soon
 * (`expiring_tokens`, a JSON array of `expiringTokensView`, or `null` while not read yet).
 */
export function snapshotMessage(
  stations: Pick<StationDirectory, 'station' | 'stationIds'>,
  status: StatusCategories,
  expiringTokens = 'null',
  seen?: SectionSeen,
  verdicts?: VerdictSource,
): string {
  const ids = [...stations.stationIds()].sort();
  let json = `{"type":"snapshot","at":"${new Date().toISOString()}","expiring_tokens":${expiringTokens},"stations":[`;
  let first = true;
  for (const id of ids) {
    const row = stationRow(stations, status, id, seen, verdicts);
    if (row === undefined) continue;
    json += first ? row : `,${row}`;
    first = false;
  }
  return `${json}]}`;
}

/** `station` with the row again after a registry change, or `removed` for a station that left. */
export function registryMessage(stations: StationLookup, status: StatusCategories, hrsId: string, verdicts?: VerdictSource): string {
  const row = stationRow(stations, status, hrsId, undefined, verdicts);
  return row === undefined ? JSON.stringify({ type: 'removed', hrs_id: hrsId }) : `{"type":"station","station":${row}}`;
}

/** A section's times and freshness: what a new reading of the same value changes. */
const SECTION_TIMES = new Set(['datetime', 'received_datetime', 'freshness']);

/** A section without its times and freshness, as JSON: two readings of one value read alike. */
export function sectionValue(section: Record<string, unknown> | null): string {
  return JSON.stringify(section, function (this: unknown, key: string, value: unknown) {
    return this === section && SECTION_TIMES.has(key) ? undefined : value;
  });
}

/** Whether a change can be a repeat at all (a new reading, its freshness unchanged): only then are values compared. */
export function mayRepeat(change: StatusChange): boolean {
  return change.cause === 'signal' && change.previous === change.freshness;
}

/** Whether a change is a new reading of the value published before (see `changeMessage`). */
export function isRepeat(change: StatusChange, previousSection: Record<string, unknown> | null): boolean {
  return mayRepeat(change) && sectionValue(previousSection) === sectionValue(change.section);
}

/**
 * `change`: one event of the change stream, with `previous_section`, the section as the feed last
 * published it (null: none was), and `repeat`: true for a new reading that repeats the published value
 * (the section differs from the previous one in its times only, and the freshness did not change).
 * A change of availability carries the station's verdict after it (`verdict`).
 */
export function changeMessage(
  change: StatusChange,
  previousSection: Record<string, unknown> | null = null,
  repeat = isRepeat(change, previousSection),
  verdicts?: VerdictSource,
): string {
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
    previous_section: previousSection,
    repeat,
    ...(change.category === 'availability' && verdicts ? { verdict: verdicts.of(change.hrsId) ?? null } : {}),
  });
}

/** `opening`: a station opened or closed by its opening hours (its verdict turns `CLOSED` or back: `verdict`, with a source). */
export function openingMessage(change: OpeningChange, verdicts?: VerdictSource): string {
  const head = `{"type":"opening","at":"${new Date(change.at).toISOString()}","hrs_id":${JSON.stringify(change.hrsId)},"open":${change.open}`;
  return verdicts ? `${head},"verdict":${verdictJson(verdicts, change.hrsId)}}` : `${head}}`;
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
