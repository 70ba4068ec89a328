import { createHash } from 'node:crypto';
import type { RecordedChange } from '../../../db/queries/recorded-changes.js';
import type { Category } from '../../domain/categories/index.js';
import { nextChange, openingAt } from '../../domain/opening-hours.js';
import type { OptionSummary } from '../../domain/status/summary.js';
import type { StationDirectory, StationEntry } from '../../domain/stations.js';
import { stationSummary, type AvailabilitySource } from '../../domain/status/station-summary.js';

/**
 * The change log's `status` and `option` rows as every server instance makes them from what it holds
 * in memory, each with a change key that every instance computes alike for the same change, so N
 * instances recording the same change make one row (the log's unique index on `change_key`):
 *
 * - status: `status|hrs_id|category|reading datetime|freshness|digest of the section`; a change the
 *   registry caused (a layout or an assignment changed what may be published, or the station left)
 *   adds the registry's version in PostgreSQL the instance had loaded (`|r…`), so the same section
 *   published again after a registry change back and forth is a change of its own.
 * - option: `option|hrs_id|fuelling option|status|reason|datetime|p<end of the opening period>|r<registry
 *   version>`: the five-state value, the reading it came from, the open or closed period it holds in
 *   (named by its end, the next opening or closing: `p-` for a station always open) and the registry
 *   version, so a value that comes back after the station closed and opened again, or after a
 *   registry change, is a change of its own.
 *
 * Limits, by construction: a registry version read by one instance before a change and by another
 * after it gives two rows of the same value (a duplicate a receiver sees twice, never a change lost);
 * an assignment switched off and on twice with no other registry change in between gives the same key
 * for the second return (the registry version in PostgreSQL follows stations, not assignments), and
 * that return is not recorded again.
 */

/** A status change as heard (the section read while the live status told it, as it asks). */
export interface HeardStatus {
  hrsId: string;
  category: Category;
  freshness: string | null;
  section: Record<string, unknown> | null;
  /** The held reading's measurement time, epoch ms. */
  datetime: number;
  /** The registry version for a change the registry caused (undefined: a signal or the freshness). */
  registryVersion: number | undefined;
}

const digest = (text: string) => createHash('sha256').update(text).digest('base64url').slice(0, 22);

/** The `status` row of a heard change. */
export function statusRow(heard: HeardStatus): RecordedChange {
  const section = JSON.stringify(heard.section);
  const version = heard.registryVersion === undefined ? '' : `|r${heard.registryVersion}`;
  return {
    topic: 'status',
    hrs_id: heard.hrsId,
    entity: `${heard.hrsId}/${heard.category}`,
    change_key: `status|${heard.hrsId}|${heard.category}|${heard.datetime}|${heard.freshness}|${digest(section)}${version}`,
    payload: { category: heard.category, freshness: heard.freshness, status: heard.section },
  };
}

/** The members of a section that say when, not what: a change of these alone is no change to record. */
const TIME_MEMBERS = new Set(['datetime', 'received_datetime', 'freshness']);

/**
 * What a subscriber of `status.changed` is told of one station and category, leaving out the reading's
 * times: the freshness and the section's other members. A reading that only moves the times (the same
 * nozzles, the same states, a minute later) has the same content and makes no row; receivers that want
 * every reading have the status stream.
 */
export function statusContent(freshness: string | null, section: Record<string, unknown> | null): string {
  if (section === null) return `${freshness}|null`;
  const content: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(section)) if (!TIME_MEMBERS.has(key)) content[key] = value;
  return `${freshness}|${JSON.stringify(content)}`;
}

/** What the option rows read: the registry (with its version in PostgreSQL) and the live availability. */
export interface OptionSources {
  stations: StationDirectory & { readonly loadedVersionUs: number };
  status: AvailabilitySource;
}

/** The same verdict: a reading that only moves the time (AVAILABLE again, a minute later) changes nothing a subscriber is told of. */
const sameValue = (a: OptionSummary, b: OptionSummary) => a.status === b.status && a.reason === b.reason;

/** Whether a station's changes are logged at all: production stations only, as the log's triggers do. */
export const isProduction = (station: StationEntry | undefined): station is StationEntry => station !== undefined && station.sandbox !== true;

/**
 * The five-state value of every fuelling option of every production station as this instance last
 * recorded it (or found it when it started listening), and the stations touched since: `changes`
 * computes the touched ones again and makes a row per option whose value differs.
 */
export class OptionValues {
  private readonly last = new Map<string, Map<string, OptionSummary>>();
  private readonly touched = new Set<string>();

  constructor(private readonly sources: OptionSources) {}

  /** Takes every station's values as they are now, recording nothing (at start, or when the topic becomes wanted). */
  seed(at: Date): void {
    this.last.clear();
    this.touched.clear();
    const open = openingAt(at);
    for (const hrsId of this.sources.stations.stationIds()) {
      const station = this.sources.stations.station(hrsId);
      if (!isProduction(station)) continue;
      this.last.set(hrsId, new Map(stationSummary(this.sources, station, at, open).map((entry) => [entry.fuelling_option, entry])));
    }
  }

  /** Forgets every value (the topic is no longer wanted). */
  clear(): void {
    this.last.clear();
    this.touched.clear();
  }

  /** A station whose availability, opening or registry entry changed: computed again at the next `changes`. */
  touch(hrsId: string): void {
    this.touched.add(hrsId);
  }

  /** Whether some station waits to be computed again. */
  get pending(): boolean {
    return this.touched.size > 0;
  }

  /** The rows of every option of a touched station whose value changed since it was last recorded. */
  changes(at: Date): RecordedChange[] {
    const rows: RecordedChange[] = [];
    const open = openingAt(at);
    const version = this.sources.stations.loadedVersionUs;
    for (const hrsId of this.touched) {
      const station = this.sources.stations.station(hrsId);
      if (!isProduction(station)) {
        // Gone (or a sandbox station): its options leave with it; the station's own row says so.
        this.last.delete(hrsId);
        continue;
      }
      const before = this.last.get(hrsId);
      const now = new Map<string, OptionSummary>();
      let period: string | undefined;
      for (const entry of stationSummary(this.sources, station, at, open)) {
        now.set(entry.fuelling_option, entry);
        const held = before?.get(entry.fuelling_option);
        if (held && sameValue(held, entry)) continue;
        period ??= periodEnd(station, at);
        rows.push(optionRow(hrsId, entry, period, version));
      }
      this.last.set(hrsId, now);
    }
    this.touched.clear();
    return rows;
  }
}

/** The end of the open or closed period a station is in at `at` (its next change), `-` when it has none. */
function periodEnd(station: StationEntry, at: Date): string {
  if (!station.openingHours) return '-';
  return String(nextChange(station.openingHours, station.timeZone, at, station.holidayCountry)?.getTime() ?? '-');
}

function optionRow(hrsId: string, entry: OptionSummary, period: string, version: number): RecordedChange {
  return {
    topic: 'option',
    hrs_id: hrsId,
    entity: `${hrsId}/${entry.fuelling_option}`,
    change_key: `option|${hrsId}|${entry.fuelling_option}|${entry.status}|${entry.reason}|${entry.datetime}|p${period}|r${version}`,
    payload: { fuelling_option: entry.fuelling_option, status: entry.status, reason: entry.reason, datetime: entry.datetime },
  };
}
