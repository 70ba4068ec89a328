/**
 * The forecast measured, not asserted: a back-test on stored history. The option's rows before a split
 * train the model (./model.ts `learn`, as of the split); every whole hour of the held-out days after it
 * is then an issue time, from which the next FORECAST_HOURS hours are forecast and scored against what
 * happened, beside two baselines given the same issue times and hours:
 * - **persistence**: the present state holds (1 when available at the issue time, else 0);
 * - **the hour's historical rate**: the mean outcome of the same weekday and hour in the training rows
 *   (falling back to the same hour over all weekdays, then to the overall rate), with no recency and no
 *   present state.
 *
 * The present at an issue time is the state most of the hour before it was in (the roll-up keeps
 * milliseconds per hour, not the instant's state), seen at that hour's middle; an issue time whose hour before is not known is left
 * out, as are target hours not known (less than half their time known) and closed hours (the opening
 * hours decide them, for every method alike).
 *
 * Scores: the Brier score (the mean squared difference between the probability and the outcome, the
 * available share of the hour: 0 is perfect, 0.25 what a constant 0.5 scores against a coin) and the
 * calibration: the pairs in ten bins of the probability, each bin's mean probability beside its mean
 * outcome, and their weighted mean distance (the expected calibration error).
 */
import { FORECAST_HOURS, forecastHours, HOUR_MS, DAY_MS, learn, outcomeOf, slotOf, WEEK_SLOTS, type HourRow, type Learned, type Present } from './model.js';

export const CALIBRATION_BINS = 10;

export interface CalibrationBin {
  /** The bin's probabilities: [from, to) (the last includes 1). */
  from: number;
  to: number;
  pairs: number;
  meanProbability: number;
  meanOutcome: number;
}

export interface Scores {
  pairs: number;
  brier: number;
  /** Expected calibration error: the bins' |mean probability − mean outcome|, weighted by their pairs. */
  calibrationError: number;
  bins: CalibrationBin[];
}

/** Sums of one method's pairs, to score one option or many pooled. */
export class ScoreBook {
  private pairs = 0;
  private squares = 0;
  private readonly binPairs = new Float64Array(CALIBRATION_BINS);
  private readonly binProbability = new Float64Array(CALIBRATION_BINS);
  private readonly binOutcome = new Float64Array(CALIBRATION_BINS);

  add(probability: number, outcome: number): void {
    this.pairs++;
    this.squares += (probability - outcome) ** 2;
    const bin = Math.min(CALIBRATION_BINS - 1, Math.floor(probability * CALIBRATION_BINS));
    this.binPairs[bin] = this.binPairs[bin]! + 1;
    this.binProbability[bin] = this.binProbability[bin]! + probability;
    this.binOutcome[bin] = this.binOutcome[bin]! + outcome;
  }

  merge(other: ScoreBook): void {
    this.pairs += other.pairs;
    this.squares += other.squares;
    for (let b = 0; b < CALIBRATION_BINS; b++) {
      this.binPairs[b] = this.binPairs[b]! + other.binPairs[b]!;
      this.binProbability[b] = this.binProbability[b]! + other.binProbability[b]!;
      this.binOutcome[b] = this.binOutcome[b]! + other.binOutcome[b]!;
    }
  }

  scores(): Scores {
    const bins: CalibrationBin[] = [];
    let error = 0;
    for (let b = 0; b < CALIBRATION_BINS; b++) {
      const n = this.binPairs[b]!;
      const meanProbability = n > 0 ? this.binProbability[b]! / n : Number.NaN;
      const meanOutcome = n > 0 ? this.binOutcome[b]! / n : Number.NaN;
      if (n > 0) error += n * Math.abs(meanProbability - meanOutcome);
      bins.push({ from: b / CALIBRATION_BINS, to: (b + 1) / CALIBRATION_BINS, pairs: n, meanProbability, meanOutcome });
    }
    return {
      pairs: this.pairs,
      brier: this.pairs > 0 ? this.squares / this.pairs : Number.NaN,
      calibrationError: this.pairs > 0 ? error / this.pairs : Number.NaN,
      bins,
    };
  }
}

export const METHODS = ['forecast', 'persistence', 'hourly_rate'] as const;
export type Method = (typeof METHODS)[number];

export interface BacktestOptions {
  timeZone: string;
  /** Whether the station is open at an instant (its opening hours). */
  isOpen: (instant: number) => boolean;
  /** The held-out days at the end. */
  holdoutDays: number;
  /** Where the history ends (exclusive, a whole hour); the end of the last row when absent. */
  end?: number;
}

export interface OptionBacktest {
  /** Whether the training rows were enough to forecast from (else no pairs were scored). */
  enough: boolean;
  learned: Learned;
  split: number;
  end: number;
  issues: number;
  books: Record<Method, ScoreBook>;
}

/** The back-test of one option's rows (see the file's comment). */
export function backtest(rows: readonly HourRow[], options: BacktestOptions): OptionBacktest {
  let last = Number.NEGATIVE_INFINITY;
  for (const row of rows) if (row.hour > last) last = row.hour;
  const end = options.end ?? last + HOUR_MS;
  const split = end - options.holdoutDays * DAY_MS;
  const learned = learn(rows, { timeZone: options.timeZone, now: split });
  const books = { forecast: new ScoreBook(), persistence: new ScoreBook(), hourly_rate: new ScoreBook() };
  const result: OptionBacktest = { enough: learned.enough, learned, split, end, issues: 0, books };
  if (!learned.enough) return result;

  const rates = historicalRates(rows, options.timeZone, split);
  const slot = slotOf(options.timeZone);
  const byHour = new Map<number, HourRow>();
  for (const row of rows) if (row.hour >= split - HOUR_MS && row.hour < end) byHour.set(row.hour, row);
  const known = (hour: number) => {
    const row = byHour.get(hour);
    const outcome = row && outcomeOf(row);
    return outcome && outcome.known >= 0.5 ? outcome.rate : undefined;
  };

  for (let issue = split; issue + HOUR_MS <= end; issue += HOUR_MS) {
    const before = known(issue - HOUR_MS);
    if (before === undefined) continue;
    const present: Present = before >= 0.5 ? 'available' : 'unavailable';
    const hours = forecastHours(learned, { now: issue, present, presentAt: issue - HOUR_MS / 2, isOpen: options.isOpen, hours: FORECAST_HOURS })!;
    let scored = false;
    for (const hour of hours) {
      if (hour.from >= end || hour.closed) continue;
      const outcome = known(hour.from);
      if (outcome === undefined) continue;
      books.forecast.add(hour.probability, outcome);
      books.persistence.add(present === 'available' ? 1 : 0, outcome);
      books.hourly_rate.add(rates[slot(hour.from)]!, outcome);
      scored = true;
    }
    if (scored) result.issues++;
  }
  return result;
}

/** The hour's historical rate per slot of the week from the rows before `until`: plain means, with the same hour over all weekdays, then the overall rate, where a slot has none. */
export function historicalRates(rows: readonly HourRow[], timeZone: string, until: number): Float64Array {
  const slot = slotOf(timeZone);
  const slotSum = new Float64Array(WEEK_SLOTS);
  const slotN = new Float64Array(WEEK_SLOTS);
  const hourSum = new Float64Array(24);
  const hourN = new Float64Array(24);
  let sum = 0;
  let n = 0;
  for (const row of rows) {
    if (row.hour + HOUR_MS > until) continue;
    const outcome = outcomeOf(row);
    if (!outcome || outcome.known < 0.5) continue;
    const s = slot(row.hour);
    slotSum[s] = slotSum[s]! + outcome.rate;
    slotN[s] = slotN[s]! + 1;
    hourSum[s % 24] = hourSum[s % 24]! + outcome.rate;
    hourN[s % 24] = hourN[s % 24]! + 1;
    sum += outcome.rate;
    n++;
  }
  const overall = n > 0 ? sum / n : 0.5;
  const rates = new Float64Array(WEEK_SLOTS);
  for (let s = 0; s < WEEK_SLOTS; s++) {
    rates[s] = slotN[s]! > 0 ? slotSum[s]! / slotN[s]! : hourN[s % 24]! > 0 ? hourSum[s % 24]! / hourN[s % 24]! : overall;
  }
  return rates;
}
