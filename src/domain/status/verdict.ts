import { openingAt } from '../opening-hours.js';
import type { StationDirectory } from '../stations.js';
import { stationSummary, type AvailabilitySource } from './station-summary.js';
import { SUMMARY_STATES, type OptionSummary, type SummaryReason, type SummaryState } from './summary.js';

/**
 * The one verdict every face shows: per fuelling option the five-state summary (./summary.ts: opening
 * hours first, then freshness, station flags, the option's reported value), and for the station as a
 * whole the best of its options. Export v1 and v1.1, export v2's status (`fuelling_options`), the
 * status stream, the public map, webhooks, the admins' dashboard and the demo's minute line all read
 * it from here, so at one moment they never disagree (a station outside its hours is CLOSED on each).
 */

/** How fresh the availability reading a verdict was computed from is; null: none is published. */
export type VerdictFreshness = 'fresh' | 'stale' | 'unknown';

export interface StationVerdict {
  /**
   * The station's state: the best of its options' (AVAILABLE, then LIMITEDLY_AVAILABLE, UNAVAILABLE,
   * UNKNOWN, CLOSED, the order of SUMMARY_STATES); a station that provides no option is CLOSED outside
   * its opening hours and UNKNOWN otherwise.
   */
  status: SummaryState;
  /** Why: the reason of the option that gave `status` (the first in the options' order among equals). */
  reason: SummaryReason;
  freshness: VerdictFreshness | null;
  /** The measurement time of the availability reading (ISO 8601, UTC); null: there is none. */
  datetime: string | null;
  /** Per option the station provides, in the order `700ld`, `350ld`, `700hd`, `350hd`. */
  fuelling_options: OptionSummary[];
}

/**
 * A station's state as the admins' dashboard and the demo's minute line name it (the dashboard's
 * chips, its row order and its address `#state=…` use these keys), by its verdict's `status`.
 */
export const STATION_STATE_KEYS = {
  AVAILABLE: 'available',
  LIMITEDLY_AVAILABLE: 'limited',
  UNAVAILABLE: 'unavailable',
  UNKNOWN: 'unknown',
  CLOSED: 'closed',
} as const satisfies Record<SummaryState, string>;
export type StationState = (typeof STATION_STATE_KEYS)[SummaryState];

/** The state of a station by its verdict; `unknown` without one. */
export const stationStateOf = (verdict: StationVerdict | undefined): StationState => (verdict ? STATION_STATE_KEYS[verdict.status] : 'unknown');

/**
 * What a station's verdict asks of its operator, in words (the portal's station list): null when
 * nothing does (available, or closed as its hours say).
 */
export function problemHint(verdict: StationVerdict | undefined, hasConfirmedLayout: boolean): string | null {
  if (!hasConfirmedLayout) return 'no confirmed layout: nothing is published until one is confirmed';
  if (verdict === undefined) return null;
  if (verdict.freshness === 'stale' && verdict.status !== 'CLOSED') return 'its availability reading is getting old (stale)';
  switch (verdict.reason) {
    case 'no_signal':
      return verdict.datetime === null ? 'no availability reading yet' : 'no availability reading for 30 minutes or more';
    case 'maintenance':
      return 'in maintenance, as its monitoring system reports';
    case 'limited':
      return 'limitedly available, as its monitoring system reports';
    case 'not_reported':
      return 'its readings leave fuelling options out';
    case 'reported_unavailable':
      return 'reported unavailable';
    default:
      return null;
  }
}

const RANK = new Map<SummaryState, number>(SUMMARY_STATES.map((state, index) => [state, index]));

/** The station's verdict from its options' summaries (see StationVerdict). */
export function stationVerdict(options: OptionSummary[], open: boolean, freshness: VerdictFreshness | null, datetime: string | null): StationVerdict {
  let best: OptionSummary | undefined;
  for (const entry of options) if (best === undefined || RANK.get(entry.status)! < RANK.get(best.status)!) best = entry;
  if (best !== undefined) return { status: best.status, reason: best.reason, freshness, datetime, fuelling_options: options };
  const reason: SummaryReason = !open ? 'outside_opening_hours' : freshness === null || freshness === 'unknown' ? 'no_signal' : 'not_reported';
  return { status: open ? 'UNKNOWN' : 'CLOSED', reason, freshness, datetime, fuelling_options: options };
}

export interface VerdictDeps {
  stations: Pick<StationDirectory, 'station'> & { readonly version: number };
  status: AvailabilitySource;
  /** When the next station opens or closes (machines/opening-clock.ts), epoch ms. */
  opening: { nextDue(): number | undefined };
  /** The platform's clock. */
  now: () => Date;
  /** The same clock in epoch ms, without a Date (`now().getTime()` when not given): every answer asks it. */
  nowMs?: () => number;
}

interface Kept {
  reading: unknown;
  freshness: string | undefined;
  registry: number;
  epoch: number;
  /** The live status's availability version when last found to hold (see `keptOf`). */
  availability: number;
  verdict: StationVerdict;
  /** The export v2 `fuelling_options` block as JSON, made when first asked for. */
  json?: string;
}

/**
 * Every station's verdict, computed when asked and kept while what it was computed from holds: the
 * same published availability reading with the same freshness, the same registry, and no station
 * opening or closing since (an epoch that moves when the opening clock's next minute has passed).
 */
export class Verdicts {
  private readonly kept = new Map<string, Kept>();
  private epoch = 0;
  private until = Number.NEGATIVE_INFINITY;
  private counter = 0;
  private seen = { availability: Number.NaN, registry: Number.NaN, epoch: Number.NaN };

  private readonly nowMs: () => number;

  constructor(private readonly deps: VerdictDeps) {
    this.nowMs = deps.nowMs ?? (() => deps.now().getTime());
  }

  /** Moves whenever a station's verdict may have changed: its availability, the registry, or an opening minute passed. */
  get version(): number {
    this.tick(this.nowMs());
    const availability = this.deps.status.availabilityVersion;
    const registry = this.deps.stations.version;
    const seen = this.seen;
    if (seen.availability !== availability || seen.registry !== registry || seen.epoch !== this.epoch) {
      this.counter++;
      this.seen = { availability, registry, epoch: this.epoch };
    }
    return this.counter;
  }

  /** The station's verdict now; undefined for a station not in the registry. */
  of(hrsId: string): StationVerdict | undefined {
    return this.keptOf(hrsId)?.verdict;
  }

  /** The export v2 `fuelling_options` block (a JSON array of `{fuelling_option, status, reason, datetime, freshness}`). */
  optionsJson(hrsId: string): string | undefined {
    const kept = this.keptOf(hrsId);
    if (kept === undefined) return undefined;
    const { freshness } = kept.verdict;
    kept.json ??= JSON.stringify(kept.verdict.fuelling_options.map((entry) => ({ ...entry, freshness })));
    return kept.json;
  }

  /** Forgets what is kept of stations no longer registered (after a registry reload). */
  forget(stations: Pick<StationDirectory, 'station'>): void {
    for (const id of this.kept.keys()) if (!stations.station(id)) this.kept.delete(id);
  }

  private keptOf(hrsId: string): Kept | undefined {
    const { stations, status } = this.deps;
    const ms = this.nowMs();
    this.tick(ms);
    const registry = stations.version;
    const availability = status.availabilityVersion;
    const found = this.kept.get(hrsId);
    // No published availability reading or freshness of any station has moved since it was last found
    // to hold, nor the registry, nor an opening minute: it holds without looking at the station.
    if (found && found.availability === availability && found.registry === registry && found.epoch === this.epoch) return found;
    const station = stations.station(hrsId);
    if (!station) return undefined;
    const held = status.published(hrsId, 'availability');
    if (found && found.reading === held?.reading && found.freshness === held?.freshness && found.registry === registry && found.epoch === this.epoch) {
      found.availability = availability;
      return found;
    }
    const at = new Date(ms);
    const open = openingAt(at)(station);
    const options = stationSummary(this.deps, station, at, () => open);
    const freshness = (held?.freshness as VerdictFreshness | undefined) ?? null;
    const datetime = held === undefined ? null : new Date(held.reading.datetime).toISOString();
    const kept: Kept = { reading: held?.reading, freshness: held?.freshness, registry, epoch: this.epoch, availability, verdict: stationVerdict(options, open, freshness, datetime) };
    this.kept.set(hrsId, kept);
    return kept;
  }

  /** A new epoch once the next opening or closing is due (until the opening clock moves on, every moment is one). */
  private tick(now: number): void {
    if (now < this.until) return;
    this.epoch++;
    const due = this.deps.opening.nextDue() ?? Number.POSITIVE_INFINITY;
    this.until = due > now ? due : now + 1;
  }
}
