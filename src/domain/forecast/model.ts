/**
 * Availability forecasts: for one station's fuelling option, the probability that it is available in
 * each of the next hours, learned from the option's own hourly history (the roll-up's milliseconds per
 * five-state state, `history_hourly`).
 *
 * The method (docs/forecast.md):
 * - **What is counted as available**: AVAILABLE and LIMITEDLY_AVAILABLE (a driver can refuel); an
 *   hour's outcome is the share of its known, open time in those states. UNKNOWN time says nothing and
 *   CLOSED time is the opening hours' (a closed hour is forecast as closed, not as unlikely).
 * - **The seasonal rate** of each weekday and hour of the station's local week (168 slots): a mean of
 *   the outcomes at that slot, each weighted by its known share of the hour and by its age (half the
 *   weight every HALF_LIFE_DAYS), shrunk towards the same hour's rate over all weekdays, itself shrunk
 *   towards the station's overall rate (so a slot seen twice does not say 0 or 1).
 * - **Persistence**: how the present departs from its slot's rate fades as an AR(1) process: the
 *   departure now (the live state, 1 or 0, less the present slot's rate) times ρ^Δ for a target hour Δ
 *   hours away (its middle). ρ is learned from the same history: the lag-one correlation of the hourly
 *   departures from the seasonal rates. A station whose outages last hours has ρ near 1 (its state now
 *   says much about the next hours); one whose state flickers has ρ near 0.
 * - **Too little history**: fewer than MIN_KNOWN_HOURS known hours, or spread over fewer than
 *   MIN_SPAN_DAYS days: no forecast, and the answer says so.
 */

export const HOUR_MS = 3_600_000;
export const DAY_MS = 24 * HOUR_MS;
/** Hours of the local week: weekday (0 = Monday) × 24 + hour. */
export const WEEK_SLOTS = 168;
/** A reading's weight halves every this many days of age. */
export const HALF_LIFE_DAYS = 28;
/** Known hours the option needs before it is forecast. */
export const MIN_KNOWN_HOURS = 168;
/** Days from the first to the last known hour the option needs before it is forecast (two of each weekday). */
export const MIN_SPAN_DAYS = 14;
/** How many hours a forecast covers (the present one first). */
export const FORECAST_HOURS = 12;
/** An hour counts towards ρ and the known hours when at least this share of it is known and open. */
const KNOWN_SHARE = 0.5;

/** One hour of an option's roll-up: milliseconds in each five-state state. */
export interface HourRow {
  /** The hour's start, UTC milliseconds. */
  hour: number;
  availableMs: number;
  limitedMs: number;
  unavailableMs: number;
  closedMs: number;
  unknownMs: number;
}

/** What an option's history taught: everything a forecast needs but the present. */
export interface Learned {
  timeZone: string;
  /** Seasonal rate per slot of the local week. */
  slotRates: Float64Array;
  /** Weighted known hours behind each slot (how much the slot's rate stands on its own outcomes). */
  slotHours: Float64Array;
  /** The rate per local hour of the day, over all weekdays. */
  hourRates: Float64Array;
  overallRate: number;
  /** The lag-one correlation of the hourly departures from the seasonal rates, in [0, 0.99]. */
  rho: number;
  /** Hours with at least KNOWN_SHARE of their time known (and open). */
  knownHours: number;
  /** The first and the last known hour's start (UTC ms), or NaN without any. */
  firstKnown: number;
  lastKnown: number;
  /** Whether there is enough history to forecast from (MIN_KNOWN_HOURS over MIN_SPAN_DAYS). */
  enough: boolean;
}

/** The outcome of an hour (the available share of its known, open time) and that time's share of the hour; null when nothing of it is known. */
export function outcomeOf(row: HourRow): { rate: number; known: number } | null {
  const up = row.availableMs + row.limitedMs;
  const known = up + row.unavailableMs;
  if (known <= 0) return null;
  return { rate: up / known, known: Math.min(1, known / HOUR_MS) };
}

/**
 * The slot of the local week an instant falls in, per time zone: weekday × 24 + hour. The offset is
 * looked up once per UTC hour and zone (kept for the zone: a few thousand hours a year at most).
 */
export function slotOf(timeZone: string): (instant: number) => number {
  let memo = slotMemos.get(timeZone);
  if (!memo) {
    const format = new Intl.DateTimeFormat('en-US', { timeZone, weekday: 'short', hour: 'numeric', hourCycle: 'h23' });
    const cache = new Map<number, number>();
    memo = (instant: number) => {
      const hourIndex = Math.floor(instant / HOUR_MS);
      let slot = cache.get(hourIndex);
      if (slot === undefined) {
        let weekday = 0;
        let hour = 0;
        // The hour's middle: a zone whose offset is not whole hours still gives the hour most of it lies in.
        for (const part of format.formatToParts(hourIndex * HOUR_MS + HOUR_MS / 2)) {
          if (part.type === 'weekday') weekday = WEEKDAYS.indexOf(part.value);
          else if (part.type === 'hour') hour = Number(part.value);
        }
        slot = weekday * 24 + hour;
        if (cache.size >= 100_000) cache.clear();
        cache.set(hourIndex, slot);
      }
      return slot;
    };
    slotMemos.set(timeZone, memo);
  }
  return memo;
}
const WEEKDAYS = ['Mon', 'Tue', 'Wed', 'Thu', 'Fri', 'Sat', 'Sun'];
const slotMemos = new Map<string, (instant: number) => number>();

/**
 * Learns an option's seasonal rates and persistence from its hourly rows (any order), as of `now`
 * (rows at or after it are not used: a back-test passes the split as `now`).
 */
export function learn(rows: readonly HourRow[], options: { timeZone: string; now: number; halfLifeDays?: number }): Learned {
  const { timeZone, now } = options;
  const halfLifeMs = (options.halfLifeDays ?? HALF_LIFE_DAYS) * DAY_MS;
  const slot = slotOf(timeZone);
  const sorted = rows.filter((row) => row.hour + HOUR_MS <= now).sort((a, b) => a.hour - b.hour);

  const slotSum = new Float64Array(WEEK_SLOTS);
  const slotWeight = new Float64Array(WEEK_SLOTS);
  const slotSquares = new Float64Array(WEEK_SLOTS);
  const hourSum = new Float64Array(24);
  const hourWeight = new Float64Array(24);
  let overallSum = 0;
  let overallWeight = 0;
  let knownHours = 0;
  let firstKnown = Number.NaN;
  let lastKnown = Number.NaN;
  const slots = new Int16Array(sorted.length);
  // Per row: the outcome of a known hour (NaN otherwise), and its weight (0 when nothing of it is known).
  const outcomes = new Float64Array(sorted.length).fill(Number.NaN);
  const rates = new Float64Array(sorted.length);
  const weights = new Float64Array(sorted.length);
  sorted.forEach((row, i) => {
    const outcome = outcomeOf(row);
    slots[i] = slot(row.hour);
    if (!outcome) return;
    const weight = outcome.known * 0.5 ** ((now - row.hour) / halfLifeMs);
    rates[i] = outcome.rate;
    weights[i] = weight;
    const s = slots[i]!;
    slotSum[s] = slotSum[s]! + weight * outcome.rate;
    slotSquares[s] = slotSquares[s]! + weight * outcome.rate * outcome.rate;
    slotWeight[s] = slotWeight[s]! + weight;
    hourSum[s % 24] = hourSum[s % 24]! + weight * outcome.rate;
    hourWeight[s % 24] = hourWeight[s % 24]! + weight;
    overallSum += weight * outcome.rate;
    overallWeight += weight;
    if (outcome.known >= KNOWN_SHARE) {
      outcomes[i] = outcome.rate;
      knownHours++;
      if (Number.isNaN(firstKnown)) firstKnown = row.hour;
      lastKnown = row.hour;
    }
  });

  // A neutral 0.5 stands for the overall rate of an option never seen.
  const overallRate = overallWeight > 0 ? overallSum / overallWeight : 0.5;
  // How far to trust a slot's own outcomes over its hour's (and an hour's over the overall rate): as
  // far as the slots' rates differ by more than their outcomes' noise would make them (empirical Bayes).
  const withinVariance = pooledVariance(slotSum, slotSquares, slotWeight);
  const hourPrior = priorWeight(hourSum, hourWeight, () => overallRate, withinVariance, 1);
  const hourRates = new Float64Array(24);
  for (let h = 0; h < 24; h++) hourRates[h] = (hourSum[h]! + hourPrior * overallRate) / (hourWeight[h]! + hourPrior);
  const slotPrior = slotPriorByHoldout({ slots, rates, weights }, slotSum, slotSquares, slotWeight, hourRates, withinVariance);
  const slotRates = new Float64Array(WEEK_SLOTS);
  for (let s = 0; s < WEEK_SLOTS; s++) {
    const prior = slotPrior * spreadRatio(slotSquares[s]!, slotSum[s]!, slotWeight[s]!, withinVariance);
    slotRates[s] = (slotSum[s]! + prior * hourRates[s % 24]!) / (slotWeight[s]! + prior);
  }

  // ρ: the departures of consecutive known hours from their slots' rates.
  let product = 0;
  let square = 0;
  for (let i = 1; i < sorted.length; i++) {
    const before = outcomes[i - 1]!;
    const after = outcomes[i]!;
    if (Number.isNaN(before) || Number.isNaN(after) || sorted[i]!.hour - sorted[i - 1]!.hour !== HOUR_MS) continue;
    const d0 = before - slotRates[slots[i - 1]!]!;
    const d1 = after - slotRates[slots[i]!]!;
    product += d0 * d1;
    square += d0 * d0;
  }
  const rho = square > 0 ? Math.min(0.99, Math.max(0, product / square)) : 0;
  const enough = knownHours >= MIN_KNOWN_HOURS && lastKnown - firstKnown >= (MIN_SPAN_DAYS - 1) * DAY_MS;
  return { timeZone, slotRates, slotHours: slotWeight, hourRates, overallRate, rho, knownHours, firstKnown, lastKnown, enough };
}

/** The variance of the outcomes around their own group's mean, over all groups (weighted sums per group). */
function pooledVariance(sums: Float64Array, squares: Float64Array, weights: Float64Array): number {
  let within = 0;
  let total = 0;
  for (let g = 0; g < sums.length; g++) {
    if (!(weights[g]! > 0)) continue;
    within += squares[g]! - sums[g]! ** 2 / weights[g]!;
    total += weights[g]!;
  }
  return total > 0 ? Math.max(0, within / total) : 0;
}

/**
 * The weight (in hours of outcomes) a group's rate gives its parent's rate: the outcomes' variance over
 * the variance of the groups' true rates, the latter being what the groups' means vary by beyond the
 * noise `variance / weight` each carries (`parentsFree`: the parents' own degrees of freedom).
 * Within [MIN_PRIOR_HOURS, MAX_PRIOR_HOURS].
 */
function priorWeight(sums: Float64Array, weights: Float64Array, parentOf: (group: number) => number, variance: number, parentsFree: number): number {
  let spread = 0;
  let total = 0;
  let groups = 0;
  for (let g = 0; g < sums.length; g++) {
    const w = weights[g]!;
    if (!(w > 0)) continue;
    spread += w * (sums[g]! / w - parentOf(g)) ** 2;
    total += w;
    groups++;
  }
  if (total <= 0) return MAX_PRIOR_HOURS;
  const between = spread / total - (variance * Math.max(0, groups - parentsFree)) / total;
  if (!(between > 0)) return MAX_PRIOR_HOURS;
  return Math.min(MAX_PRIOR_HOURS, Math.max(MIN_PRIOR_HOURS, variance / between));
}
const MIN_PRIOR_HOURS = 0.25;

/**
 * A slot's own spread of outcomes against all slots' (the outcomes' variance within the slot over the
 * pooled one), each with a little added: a slot whose outcomes agree week after week leans less on its
 * hour's rate than one whose outcomes scatter.
 */
function spreadRatio(squares: number, sum: number, weight: number, pooled: number): number {
  const own = weight > 0 ? Math.max(0, squares - (sum * sum) / weight) / weight : pooled;
  return (own + SPREAD_FLOOR) / (pooled + SPREAD_FLOOR);
}
const SPREAD_FLOOR = 0.02;

/** The slot prior weights tried, in hours of outcomes. */
const SLOT_PRIORS = [0.1, 0.25, 0.5, 1, 2, 4, 8, 16, 32, 64, 1000];

/**
 * The weight a slot's rate gives its hour's rate, chosen by how well each candidate predicts every
 * outcome from the other outcomes of its slot (leave one out: a slot holds one hour a week). A slot
 * unlike its hour on the other weekdays (a weekly maintenance window) keeps its own rate; slots that
 * differ only by chance (a station whose outages fall anywhere) take their hour's.
 */
function slotPriorByHoldout(
  rows: { slots: Int16Array; rates: Float64Array; weights: Float64Array },
  slotSum: Float64Array,
  slotSquares: Float64Array,
  slotWeight: Float64Array,
  hourRates: Float64Array,
  withinVariance: number,
): number {
  const errors = new Float64Array(SLOT_PRIORS.length);
  const { slots, rates, weights } = rows;
  for (let i = 0; i < slots.length; i++) {
    const weight = weights[i]!;
    if (weight === 0) continue;
    const rate = rates[i]!;
    const s = slots[i]!;
    const restSum = slotSum[s]! - weight * rate;
    const restWeight = slotWeight[s]! - weight;
    const ratio = spreadRatio(slotSquares[s]! - weight * rate * rate, restSum, restWeight, withinVariance);
    const parent = hourRates[s % 24]!;
    for (let k = 0; k < SLOT_PRIORS.length; k++) {
      const prior = SLOT_PRIORS[k]! * ratio;
      const predicted = (restSum + prior * parent) / (Math.max(0, restWeight) + prior);
      errors[k] = errors[k]! + weight * (predicted - rate) ** 2;
    }
  }
  let best = SLOT_PRIORS.length - 1;
  for (let k = 0; k < SLOT_PRIORS.length; k++) if (errors[k]! < errors[best]!) best = k;
  return SLOT_PRIORS[best]!;
}
const MAX_PRIOR_HOURS = 1000;

/** The present as a forecast starts from: the option's live state. */
export type Present = 'available' | 'unavailable' | 'unknown';

/** The present of a five-state value (LIMITEDLY_AVAILABLE counts as available; UNKNOWN and CLOSED say nothing of it). */
export function presentOf(state: string | undefined): Present {
  if (state === 'AVAILABLE' || state === 'LIMITEDLY_AVAILABLE') return 'available';
  if (state === 'UNAVAILABLE') return 'unavailable';
  return 'unknown';
}

/** One hour of a forecast. */
export interface ForecastHour {
  /** The hour's start and end, UTC milliseconds. */
  from: number;
  to: number;
  /** Closed by the opening hours for the whole hour: then `probability` is 0. */
  closed: boolean;
  /** The probability that the option is available in the hour (its open part), rounded to 0.01. */
  probability: number;
}

/**
 * The option's forecast for the FORECAST_HOURS hours from the present one (the first starts at the
 * present hour's start), or null when its history is too short (`learned.enough`).
 * `isOpen(instant)` says whether the opening hours have the station open then.
 */
export function forecastHours(
  learned: Learned,
  options: { now: number; present: Present; presentAt?: number; isOpen: (instant: number) => boolean; hours?: number },
): ForecastHour[] | null {
  if (!learned.enough) return null;
  const { now, present, isOpen } = options;
  const slot = slotOf(learned.timeZone);
  // The departure of the present from the rate of the slot it was seen in, fading from then on.
  const presentAt = options.presentAt ?? now;
  const departure = present === 'unknown' ? 0 : (present === 'available' ? 1 : 0) - learned.slotRates[slot(presentAt)]!;
  const start = Math.floor(now / HOUR_MS) * HOUR_MS;
  const out: ForecastHour[] = [];
  for (let k = 0; k < (options.hours ?? FORECAST_HOURS); k++) {
    const from = start + k * HOUR_MS;
    const to = from + HOUR_MS;
    const closed = !QUARTERS.some((q) => isOpen(from + q * HOUR_MS));
    if (closed) {
      out.push({ from, to, closed, probability: 0 });
      continue;
    }
    const aheadHours = Math.max(0, (from + HOUR_MS / 2 - presentAt) / HOUR_MS);
    const p = learned.slotRates[slot(from)]! + departure * learned.rho ** aheadHours;
    out.push({ from, to, closed, probability: Math.round(Math.min(1, Math.max(0, p)) * 100) / 100 });
  }
  return out;
}
/** Where in an hour the opening hours are asked: an hour open at none of them is closed. */
const QUARTERS = [0, 0.25, 0.5, 0.75, 0.999];

/** A word for a probability, for a driver reading at a glance (the scale of docs/forecast.md). */
export type Likelihood = 'closed' | 'very_likely' | 'likely' | 'uncertain' | 'unlikely' | 'very_unlikely';

export function likelihoodOf(hour: Pick<ForecastHour, 'closed' | 'probability'>): Likelihood {
  if (hour.closed) return 'closed';
  const p = hour.probability;
  if (p >= 0.9) return 'very_likely';
  if (p >= 0.7) return 'likely';
  if (p >= 0.4) return 'uncertain';
  if (p >= 0.15) return 'unlikely';
  return 'very_unlikely';
}
