import type { ConfirmedLayout } from '../stations.js';
import { lowStorage, type PublishedReading } from '../categories/index.js';
import { optionValues, stationReason, type SummaryReason } from '../status/summary.js';
import type { RefillPointModel, SiteModel } from './table.js';

/**
 * The DATEX II status of one site, as plain objects (what `src/api/datex2/xml/status.ts` writes): per refill point a
 * status from the same precedence as the export v1.1 five-state summary (src/domain/status/summary.ts),
 * refined by the nozzle's own readings. First match wins:
 *
 * | # | situation                                              | refill point `status` | also                              |
 * |---|--------------------------------------------------------|-----------------------|-----------------------------------|
 * | 1 | outside the opening hours (`CLOSED`)                   | `unavailable`         | `openingStatus` `closed`          |
 * | 2 | no live availability reading for 30 minutes            | `unknown`             |                                   |
 * | 3 | the station reports maintenance                        | `outOfOrder`          |                                   |
 * | 4 | the station reports limited availability               | `available`           | `operationStatus` `limitedOperation` |
 * | 5 | the nozzle is not in the reading (or its option is not) | `unknown`             |                                   |
 * | 6 | the nozzle is reported unavailable                     | `outOfOrder`          |                                   |
 * | 7 | available, and its live usage says `in-use`            | `occupied`            |                                   |
 * | 8 | available, and its live usage says `reserved`          | `reserved`            |                                   |
 * | 9 | available                                              | `available`           |                                   |
 *
 * A legacy reading (import v1, v1.1) reports per fuelling option: a nozzle takes its options' values,
 * available when one of them is, unavailable when every one of them is reported unavailable, not
 * reported otherwise (an option of it without a reported state may be available): the summary's rule
 * for an option offered by several nozzles of an import v2 reading, turned round.
 * Usage refines only while its own reading is live (not `unknown`). The station's
 * `limitedHydrogenAmount` is true when a live storage reading calls any storage low, false when it
 * calls none low, absent without one. The latest pricing appears as one `energyRateUpdate` per energy
 * rate of the table. Pure: the caller evaluates opening hours and hands in the readings.
 */

export type Freshness = 'fresh' | 'stale' | 'unknown';
export interface Held {
  reading: PublishedReading;
  freshness: Freshness;
}

export interface SiteSituation {
  /** Within its opening hours now (always, without hours). */
  open: boolean;
  availability: Held | undefined;
  usage: Held | undefined;
  storage: Held | undefined;
  /** The station's confirmed layout as signals resolve against it (legacy readings' options). */
  layout: ConfirmedLayout | null;
}

export type RefillPointState = 'available' | 'occupied' | 'reserved' | 'outOfOrder' | 'unavailable' | 'unknown';

export interface RefillPointStatusModel {
  id: string;
  version: string;
  status: RefillPointState;
  /** Which row of the table decided it (the summary's reasons, and the usage refinements). */
  reason: SummaryReason | 'in_use' | 'reserved';
  openingStatus: 'open' | 'closed';
  operationStatus: 'limitedOperation' | null;
  /** The measurement time of the availability reading it was computed from (ISO 8601); null without one. */
  lastUpdated: string | null;
}

export interface SiteStatusModel {
  site: { id: string; version: string };
  station: { id: string; version: string };
  openingStatus: 'open' | 'closed';
  operationStatus: 'inOperation' | 'limitedOperation' | 'notInOperation' | 'unknown' | null;
  /** Newest measurement time among the readings the status was computed from; null without any. */
  lastUpdated: string | null;
  isAvailable: boolean | null;
  limitedHydrogenAmount: boolean | null;
  refillPoints: RefillPointStatusModel[];
  rates: SiteModel['station']['rates'];
}

type Entry = Record<string, unknown>;
const entries = (payload: Record<string, unknown>, field: string): Entry[] =>
  Array.isArray(payload[field]) ? (payload[field] as unknown[]).filter((e): e is Entry => typeof e === 'object' && e !== null) : [];
const live = (held: Held | undefined): Held | undefined => (held !== undefined && held.freshness !== 'unknown' ? held : undefined);
const iso = (ms: number) => new Date(ms).toISOString();

/** The nozzle's reported availability: true, false, or null when the reading does not report it. */
function nozzleValue(point: RefillPointModel, reading: PublishedReading, layout: ConfirmedLayout | null): boolean | null {
  const payload = reading.payload;
  if (Array.isArray(payload.fuelling_options)) {
    const values = optionValues(payload, layout);
    // As the summary's import v2 rule for an option: unavailable only when every option is reported unavailable.
    const mine = point.options.map((o) => values.get(o));
    if (mine.includes(true)) return true;
    return mine.length > 0 && mine.every((v) => v === false) ? false : null;
  }
  const entry = entries(payload, 'nozzles').find((n) => n.id === point.nozzle);
  // As the availability section publishes it: only `true` is available.
  return entry === undefined ? null : entry.available === true;
}

function usageOf(point: RefillPointModel, usage: Held | undefined): unknown {
  const held = live(usage);
  return held === undefined ? undefined : entries(held.reading.payload, 'nozzles').find((n) => n.id === point.nozzle)?.usage_status;
}

/** One refill point's status (the table above). */
export function refillPointStatus(point: RefillPointModel, situation: SiteSituation, whole: SummaryReason | null): RefillPointStatusModel {
  const reading = situation.availability?.reading;
  const base = {
    id: point.id,
    version: point.version,
    openingStatus: situation.open ? ('open' as const) : ('closed' as const),
    operationStatus: null,
    lastUpdated: reading === undefined ? null : iso(reading.datetime),
  };
  switch (whole) {
    case 'outside_opening_hours':
      return { ...base, status: 'unavailable', reason: whole };
    case 'no_signal':
      return { ...base, status: 'unknown', reason: whole };
    case 'maintenance':
      return { ...base, status: 'outOfOrder', reason: whole };
    case 'limited':
      return { ...base, status: 'available', reason: whole, operationStatus: 'limitedOperation' };
    default:
      break;
  }
  const value = nozzleValue(point, reading!, situation.layout);
  if (value === null) return { ...base, status: 'unknown', reason: 'not_reported' };
  if (!value) return { ...base, status: 'outOfOrder', reason: 'reported_unavailable' };
  const usage = usageOf(point, situation.usage);
  if (usage === 'in-use') return { ...base, status: 'occupied', reason: 'in_use' };
  if (usage === 'reserved') return { ...base, status: 'reserved', reason: 'reserved' };
  return { ...base, status: 'available', reason: 'reported_available' };
}

const STATION_OPERATION: Record<string, SiteStatusModel['operationStatus']> = {
  outside_opening_hours: null,
  no_signal: 'unknown',
  maintenance: 'notInOperation',
  limited: 'limitedOperation',
};

/** Whether the storage reading calls any storage of the layout low; null without a live reading. */
function limitedHydrogen(storage: Held | undefined, layout: ConfirmedLayout | null): boolean | null {
  const held = live(storage);
  if (held === undefined) return null;
  return entries(held.reading.payload, 'storages').some((s) => layout?.storages.has(String(s.id)) === true && lowStorage(s));
}

/** The status of one site of the table. */
export function siteStatus(site: SiteModel, situation: SiteSituation): SiteStatusModel {
  const availability = situation.availability;
  const whole = stationReason({
    options: [],
    reading: availability?.reading ?? null,
    fresh: availability !== undefined && availability.freshness !== 'unknown',
    open: situation.open,
    layout: situation.layout,
  });
  const refillPoints = site.station.refillPoints.map((point) => refillPointStatus(point, situation, whole));
  const usable = refillPoints.filter((p) => p.status === 'available' || p.status === 'occupied' || p.status === 'reserved').length;
  const down = refillPoints.filter((p) => p.status === 'outOfOrder' || p.status === 'unavailable').length;
  const times = [situation.availability, live(situation.usage), live(situation.storage)]
    .filter((h): h is Held => h !== undefined)
    .map((h) => h.reading.datetime);
  return {
    site: { id: site.id, version: site.version },
    station: { id: site.station.id, version: site.station.version },
    openingStatus: situation.open ? 'open' : 'closed',
    operationStatus: whole === null ? 'inOperation' : STATION_OPERATION[whole]!,
    lastUpdated: times.length === 0 ? null : iso(Math.max(...times)),
    isAvailable: usable > 0 ? true : refillPoints.length > 0 && down === refillPoints.length ? false : null,
    limitedHydrogenAmount: limitedHydrogen(situation.storage, situation.layout),
    refillPoints,
    rates: site.station.rates,
  };
}
