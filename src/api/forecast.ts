import type { Sql } from '../../db/connect.js';
import { publishedUntil } from '../../db/queries/history.js';
import { optionHourlyRows } from '../../db/queries/history-reads.js';
import { DAY_MS, forecastHours, learn, likelihoodOf, presentOf, type Learned, type Likelihood } from '../domain/forecast/model.js';
import { optionSeries } from '../domain/history/timeline.js';
import { isOpen } from '../domain/opening-hours.js';
import { stationSummary, type AvailabilitySource } from '../domain/status/station-summary.js';
import type { SummaryState } from '../domain/status/summary.js';
import type { StationEntry } from '../domain/stations.js';
import type { FuellingOption } from '../domain/vocabulary.js';

/**
 * Availability forecasts as export v2, the map and the portal read them (one module, so all three give
 * the same figures): each fuelling option's model learned from the station's published hourly history
 * (src/domain/forecast/model.ts), the present from the live five-state summary, the hours closed by the
 * opening hours said as closed.
 *
 * A station's models are learned on first use and kept until the next hour is published (the roll-up
 * moves `history_progress`), its time zone changes, or more than KEPT_STATIONS other stations have been
 * asked for since; the present is read at every request, so a forecast moves with every live change.
 */

/** Days of published history a model learns from (the recency weighting halves each 28 days). */
export const FORECAST_HISTORY_DAYS = 84;
/** Stations whose learned models are kept (about 7 kB each: two options of 3.6 kB, `npm run bench -- forecast`). */
export const KEPT_STATIONS = 2_000;

export interface ForecastDeps {
  sql: Sql;
  stations: { station(hrsId: string): StationEntry | undefined };
  /** The live availability the five-state summary is computed from. */
  availability: AvailabilitySource;
  now: () => Date;
  /** HISTORY_RETENTION_DAYS: no model learns from before it. */
  retentionDays: number;
}

export interface OptionForecast {
  fuelling_option: FuellingOption;
  /** The option's five-state value now. */
  status: SummaryState;
  /** The hours from the present one; null when the history is too short to forecast from. */
  forecast: { from: string; to: string; probability: number; likelihood: Likelihood }[] | null;
  reason: 'insufficient_history' | null;
  history: { known_hours: number; from: string | null; to: string | null };
}

export interface StationForecast {
  hrs_id: string;
  time_zone: string | null;
  generated_at: string;
  /** The end of the history learned from: the last hour published. */
  history_until: string;
  fuelling_options: OptionForecast[];
}

interface Kept {
  until: number;
  timeZone: string;
  byOption: Map<string, Learned>;
}

export class Forecasts {
  private readonly kept = new Map<string, Kept>();

  constructor(private readonly deps: ForecastDeps) {}

  /** The station's forecast; null before the first hour of history is published. The station must exist. */
  async station(station: StationEntry): Promise<StationForecast | null> {
    const published = await publishedUntil(this.deps.sql);
    if (published === null) return null;
    const until = published.until.getTime();
    const timeZone = station.timeZone ?? 'UTC';
    const models = await this.models(station.hrsId, timeZone, until);
    const now = this.deps.now();
    const open = (instant: number) => isOpen(station.openingHours, station.timeZone, new Date(instant), station.holidayCountry);
    const options = stationSummary({ status: this.deps.availability }, station, now).map((entry): OptionForecast => {
      const learned = models.get(optionSeries(entry.fuelling_option)) ?? learn([], { timeZone, now: until });
      const hours = forecastHours(learned, { now: now.getTime(), present: presentOf(entry.status), isOpen: open });
      return {
        fuelling_option: entry.fuelling_option,
        status: entry.status,
        forecast: hours && hours.map((h) => ({ from: new Date(h.from).toISOString(), to: new Date(h.to).toISOString(), probability: h.probability, likelihood: likelihoodOf(h) })),
        reason: hours ? null : 'insufficient_history',
        history: {
          known_hours: learned.knownHours,
          from: Number.isNaN(learned.firstKnown) ? null : new Date(learned.firstKnown).toISOString(),
          to: Number.isNaN(learned.lastKnown) ? null : new Date(learned.lastKnown + 3_600_000).toISOString(),
        },
      };
    });
    return {
      hrs_id: station.hrsId,
      time_zone: station.timeZone ?? null,
      generated_at: now.toISOString(),
      history_until: new Date(until).toISOString(),
      fuelling_options: options,
    };
  }

  /** The station's learned models per option series, learned again when a later hour is published. */
  private async models(hrsId: string, timeZone: string, until: number): Promise<Map<string, Learned>> {
    const kept = this.kept.get(hrsId);
    if (kept && kept.until === until && kept.timeZone === timeZone) {
      // Most recently used last: the first entries are the ones let go.
      this.kept.delete(hrsId);
      this.kept.set(hrsId, kept);
      return kept.byOption;
    }
    const days = Math.min(FORECAST_HISTORY_DAYS, this.deps.retentionDays);
    const bySeries = await optionHourlyRows(this.deps.sql, hrsId, new Date(until - days * DAY_MS), new Date(until));
    const byOption = new Map([...bySeries].map(([series, list]) => [series, learn(list, { timeZone, now: until })]));
    this.kept.delete(hrsId);
    this.kept.set(hrsId, { until, timeZone, byOption });
    while (this.kept.size > KEPT_STATIONS) this.kept.delete(this.kept.keys().next().value!);
    return byOption;
  }
}
