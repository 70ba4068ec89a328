import { providedOptions } from '../import-v1/options.js';
import { openingAt } from '../opening-hours.js';
import { summarize, type OptionSummary } from './summary.js';
import type { StationDirectory, StationEntry } from '../stations.js';
import type { PublishedReading } from '../categories/index.js';

/**
 * One station's five-state summary per fuelling option, from what is in memory: the published
 * availability reading (import v2 or legacy, whichever is newest) and its freshness, the station's
 * opening hours at an instant in its time zone, and the options it provides. Export v1 and v1.1
 * answer with it (`GET {prefix}hrs/status`), the public map's feed publishes it: both read this one
 * function, so they always agree for the same moment.
 */

/** What the summary reads of the live status (machines/live-status.ts). */
export interface AvailabilitySource {
  published(hrsId: string, category: 'availability'): { reading: PublishedReading; freshness: string } | undefined;
  /** Moves whenever a published availability reading or its freshness may have changed. */
  readonly availabilityVersion: number;
}

export interface SummaryDeps {
  stations: StationDirectory & { readonly version: number };
  status: AvailabilitySource;
  /** When the next station opens or closes (machines/opening-clock.ts): a kept list is good until then. */
  opening: { nextDue(): number | undefined };
  now?: () => Date;
}

/** One station's summary, every option it provides, in the fuel-type list's order. */
export function stationSummary(
  deps: Pick<SummaryDeps, 'status'>,
  station: StationEntry,
  at: Date,
  open: (station: StationEntry) => boolean = openingAt(at),
): OptionSummary[] {
  const held = deps.status.published(station.hrsId, 'availability');
  return summarize({
    options: providedOptions(station),
    reading: held?.reading ?? null,
    fresh: held !== undefined && held.freshness !== 'unknown',
    open: open(station),
    layout: station.layout,
  });
}
