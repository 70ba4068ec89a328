/**
 * Availability forecasts (src/domain/forecast/): the local week's slots, what an hour's outcome is, when
 * there is too little history, the hours a forecast gives (closed ones as closed), and the back-test:
 * on each simulated pattern the forecast beats both baselines and is calibrated.
 */
import fc from 'fast-check';
import t from 'tap';
import { backtest, CALIBRATION_BINS, historicalRates, METHODS, ScoreBook } from '../../src/domain/forecast/evaluate.js';
import {
  DAY_MS,
  FORECAST_HOURS,
  forecastHours,
  HOUR_MS,
  learn,
  likelihoodOf,
  MIN_KNOWN_HOURS,
  MIN_SPAN_DAYS,
  outcomeOf,
  presentOf,
  slotOf,
  type HourRow,
} from '../../src/domain/forecast/model.js';
import { PATTERNS, seedOf, simulatedHours, type Pattern } from '../../src/domain/forecast/patterns.js';
import { isOpen } from '../../src/domain/opening-hours.js';

const ZONE = 'Europe/Berlin';
/** Monday 2026-11-30 00:00 in Berlin (23:00 UTC the day before). */
const END = Date.UTC(2026, 10, 29, 23);
const always = () => true;

const row = (hour: number, ms: Partial<Omit<HourRow, 'hour'>>): HourRow => ({ hour, availableMs: 0, limitedMs: 0, unavailableMs: 0, closedMs: 0, unknownMs: 0, ...ms });

/** Hourly rows of an option always available but for the hours `down` names, over `days` days before END. */
function rowsOf(days: number, down: (hour: number) => boolean = () => false): HourRow[] {
  const rows: HourRow[] = [];
  for (let hour = END - days * DAY_MS; hour < END; hour += HOUR_MS) rows.push(down(hour) ? row(hour, { unavailableMs: HOUR_MS }) : row(hour, { availableMs: HOUR_MS }));
  return rows;
}

t.test('the local week: weekday x 24 + hour in the station\'s zone, summer time and winter time', async (t) => {
  const slot = slotOf(ZONE);
  // Monday 2026-12-07 08:30 UTC is 09:30 in Berlin (UTC+1).
  t.equal(slot(Date.UTC(2026, 11, 7, 8, 30)), 9);
  // Tuesday 2026-07-07 08:30 UTC is 10:30 in Berlin (UTC+2).
  t.equal(slot(Date.UTC(2026, 6, 7, 8, 30)), 24 + 10);
  // Sunday 2026-03-29 01:00 UTC: the clocks go from 02:00 to 03:00, so the hour is 03:00 local.
  t.equal(slot(Date.UTC(2026, 2, 29, 1, 0)), 6 * 24 + 3);
  t.equal(slotOf('America/New_York')(Date.UTC(2026, 11, 7, 3, 0)), 6 * 24 + 22, 'Sunday 22:00 in New York');
});

t.test('an hour\'s outcome: its available share of the known, open time; limited counts as available', async (t) => {
  t.same(outcomeOf(row(0, { availableMs: 1_800_000, unavailableMs: 1_800_000 })), { rate: 0.5, known: 1 });
  t.same(outcomeOf(row(0, { limitedMs: 900_000, unavailableMs: 900_000, unknownMs: 1_800_000 })), { rate: 0.5, known: 0.5 });
  t.same(outcomeOf(row(0, { availableMs: 1_200_000, closedMs: 2_400_000 })), { rate: 1, known: 1 / 3 });
  t.equal(outcomeOf(row(0, { closedMs: 1_800_000, unknownMs: 1_800_000 })), null, 'nothing known: no outcome');
  t.equal(presentOf('LIMITEDLY_AVAILABLE'), 'available');
  t.equal(presentOf('UNAVAILABLE'), 'unavailable');
  for (const state of ['UNKNOWN', 'CLOSED', undefined]) t.equal(presentOf(state), 'unknown');
});

t.test('too little history: no forecast, and how much there was', async (t) => {
  const short = learn(rowsOf(MIN_SPAN_DAYS - 1), { timeZone: ZONE, now: END });
  t.equal(short.enough, false, `${MIN_SPAN_DAYS - 1} days of every hour is too short a span`);
  t.equal(short.knownHours, (MIN_SPAN_DAYS - 1) * 24);
  t.equal(forecastHours(short, { now: END, present: 'available', isOpen: always }), null);

  // Two weeks, but only a few hours a day known: too few hours.
  const sparse = rowsOf(MIN_SPAN_DAYS + 1).map((r) => (new Date(r.hour).getUTCHours() < 3 ? r : { ...r, availableMs: 0, unknownMs: HOUR_MS }));
  const thin = learn(sparse, { timeZone: ZONE, now: END });
  t.ok(thin.knownHours < MIN_KNOWN_HOURS && thin.lastKnown - thin.firstKnown >= (MIN_SPAN_DAYS - 1) * DAY_MS);
  t.equal(thin.enough, false, 'a long span of few known hours is too little too');

  const enough = learn(rowsOf(MIN_SPAN_DAYS), { timeZone: ZONE, now: END });
  t.equal(enough.enough, true);
  t.equal(forecastHours(enough, { now: END, present: 'available', isOpen: always })!.length, FORECAST_HOURS);
});

t.test('rows at or after the learning instant are not used (a back-test cannot see its held-out days)', async (t) => {
  const rows = rowsOf(28);
  const split = END - 7 * DAY_MS;
  const before = learn(rows.filter((r) => r.hour < split), { timeZone: ZONE, now: split });
  const all = learn(rows.map((r) => (r.hour >= split ? { ...r, availableMs: 0, unavailableMs: HOUR_MS } : r)), { timeZone: ZONE, now: split });
  t.same([...all.slotRates], [...before.slotRates]);
  t.equal(all.knownHours, before.knownHours);
});

t.test('a weekly window is learned: the slot says down, the rest up', async (t) => {
  // Down every Tuesday 02:00-05:00 local, for four weeks.
  const slot = slotOf(ZONE);
  const learned = learn(rowsOf(28, (hour) => slot(hour) >= 24 + 2 && slot(hour) < 24 + 5), { timeZone: ZONE, now: END });
  t.ok(learned.slotRates[24 + 3]! < 0.2, `Tuesday 03:00: ${learned.slotRates[24 + 3]}`);
  t.ok(learned.slotRates[2 * 24 + 3]! > 0.95, `Wednesday 03:00: ${learned.slotRates[2 * 24 + 3]}`);
  // A forecast issued Tuesday 00:30 local (Monday 23:30 UTC) while available: up now, down at 02:00-05:00.
  const now = END + DAY_MS - 30 * 60_000;
  const hours = forecastHours(learned, { now, present: 'available', isOpen: always })!;
  t.equal(hours[0]!.from, END + DAY_MS - HOUR_MS, 'the first hour is the present one');
  t.same(
    hours.slice(0, 6).map((h) => likelihoodOf(h)),
    ['very_likely', 'very_likely', 'very_likely', 'very_unlikely', 'very_unlikely', 'very_unlikely'],
    hours.map((h) => h.probability).join(' '),
  );
});

t.test('closed hours are closed, not unlikely: the opening hours decide them', async (t) => {
  const hoursText = 'Mo-Su 06:00-22:00';
  const open = (at: number) => isOpen(hoursText, ZONE, new Date(at));
  const learned = learn(rowsOf(28), { timeZone: ZONE, now: END });
  // Monday 19:10 local: 19, 20 and 21 open, 22:00 to 06:00 closed, then open again.
  const now = END + 19 * HOUR_MS + 10 * 60_000;
  const hours = forecastHours(learned, { now, present: 'available', isOpen: open })!;
  t.same(
    hours.map((h) => (h.closed ? 'closed' : 'open')),
    ['open', 'open', 'open', 'closed', 'closed', 'closed', 'closed', 'closed', 'closed', 'closed', 'closed', 'open'],
  );
  for (const h of hours.filter((h) => h.closed)) {
    t.equal(h.probability, 0);
    t.equal(likelihoodOf(h), 'closed');
  }
  // An hour open for part of it is open (a station opening at 06:30 is open in the 06:00 hour).
  const half = forecastHours(learned, { now: END + 5 * HOUR_MS, present: 'unknown', isOpen: (at) => isOpen('Mo-Su 06:30-22:00', ZONE, new Date(at)) })!;
  t.same(half.slice(0, 3).map((h) => h.closed), [true, false, false], '05:00 closed, 06:00 (from 06:30) and 07:00 open');
});

t.test('the present fades into the seasonal rate, as fast as the history says states last', async (t) => {
  // Outages of six hours every other day at varying hours: long runs, so rho is high.
  const long = learn(rowsOf(42, (hour) => Math.floor(hour / DAY_MS) % 2 === 0 && ((hour / HOUR_MS) % 24 + Math.floor(hour / DAY_MS) * 7) % 24 < 6), { timeZone: ZONE, now: END });
  // Single hours down, scattered: short runs, so rho is low.
  const short = learn(rowsOf(42, (hour) => (hour / HOUR_MS) * 7919 % 11 === 0), { timeZone: ZONE, now: END });
  t.ok(long.rho > 0.6, `long outages: rho ${long.rho}`);
  t.ok(short.rho < 0.2, `scattered hours: rho ${short.rho}`);
  const down = forecastHours(long, { now: END + 10 * 60_000, present: 'unavailable', isOpen: always })!;
  const probabilities = down.map((h) => h.probability);
  t.ok(probabilities[0]! < 0.3, `down now: the present hour ${probabilities[0]}`);
  for (let k = 1; k < probabilities.length; k++) t.ok(probabilities[k]! >= probabilities[k - 1]! - 0.05, `it rises towards the seasonal rate: ${probabilities.join(' ')}`);
  const unknown = forecastHours(long, { now: END + 10 * 60_000, present: 'unknown', isOpen: always })!;
  t.same(
    unknown.map((h) => h.probability),
    unknown.map((h) => Math.round(long.slotRates[slotOf(ZONE)(h.from)]! * 100) / 100),
    'an unknown present: the seasonal rates alone',
  );
});

t.test('every probability is in [0, 1] and the hours run on from the present one', async (t) => {
  fc.assert(
    fc.property(fc.array(fc.boolean(), { minLength: 24 * 15, maxLength: 24 * 30 }), fc.integer({ min: 0, max: 7 * 24 * 60 }), fc.constantFrom<'available' | 'unavailable' | 'unknown'>('available', 'unavailable', 'unknown'), (ups, minute, present) => {
      const rows = ups.map((up, i) => row(END - (ups.length - i) * HOUR_MS, up ? { availableMs: HOUR_MS } : { unavailableMs: HOUR_MS }));
      const learned = learn(rows, { timeZone: ZONE, now: END });
      const now = END + minute * 60_000;
      const hours = forecastHours(learned, { now, present, isOpen: always })!;
      return (
        hours.length === FORECAST_HOURS &&
        hours.every((h, k) => h.probability >= 0 && h.probability <= 1 && h.from === Math.floor(now / HOUR_MS) * HOUR_MS + k * HOUR_MS && h.to === h.from + HOUR_MS)
      );
    }),
    { numRuns: 60 },
  );
});

t.test('likelihood words: thresholds of docs/forecast.md', async (t) => {
  const word = (probability: number) => likelihoodOf({ closed: false, probability });
  t.same([1, 0.9, 0.89, 0.7, 0.69, 0.4, 0.39, 0.15, 0.14, 0].map(word), [
    'very_likely', 'very_likely', 'likely', 'likely', 'uncertain', 'uncertain', 'unlikely', 'unlikely', 'very_unlikely', 'very_unlikely',
  ]);
});

t.test('scores: the Brier score and the calibration bins', async (t) => {
  const book = new ScoreBook();
  book.add(0.95, 1);
  book.add(0.95, 0);
  book.add(0.05, 0);
  const scores = book.scores();
  t.equal(scores.pairs, 3);
  t.ok(Math.abs(scores.brier - (0.05 ** 2 + 0.95 ** 2 + 0.05 ** 2) / 3) < 1e-12);
  t.equal(scores.bins.length, CALIBRATION_BINS);
  t.equal(scores.bins[9]!.pairs, 2);
  t.ok(Math.abs(scores.bins[9]!.meanOutcome - 0.5) < 1e-12);
  // |0.95 - 0.5| for two pairs, |0.05 - 0| for one.
  t.ok(Math.abs(scores.calibrationError - (2 * 0.45 + 0.05) / 3) < 1e-12);
  const merged = new ScoreBook();
  merged.merge(book);
  merged.merge(book);
  t.equal(merged.scores().pairs, 6);
  t.equal(merged.scores().brier, scores.brier);
  t.ok(Number.isNaN(new ScoreBook().scores().brier), 'no pairs: no score');
});

t.test('the hour\'s historical rate: plain means of the slot, then of the hour, then overall', async (t) => {
  const slot = slotOf(ZONE);
  const rows = rowsOf(14, (hour) => slot(hour) === 3);
  const rates = historicalRates(rows, ZONE, END);
  t.equal(rates[3], 0, 'Monday 03:00: down both weeks');
  t.equal(rates[4], 1);
  const few = historicalRates(rows.slice(0, 24), ZONE, END);
  t.equal(few[24 + 3], few[3], 'a slot never seen takes the same hour over the weekdays seen');
});

/** The back-test's stated tolerance: a calibration error (weighted mean over ten bins) at most this. */
const CALIBRATION_TOLERANCE = 0.05;
const WEEKS = 8;
const HOLDOUT_DAYS = 14;
const STATIONS_PER_PATTERN = 4;

/**
 * Where the present says something the weekly rate cannot (busy rush hours, flaky outages that last
 * hours), the forecast must beat the better baseline by this share of its Brier score. Where the weekly
 * rate says nearly all (steady, a fixed maintenance window), it must be no worse than the hour's rate by
 * more than NO_WORSE and better than persistence.
 */
const CLEARLY_BETTER = 0.05;
const NO_WORSE = 0.02;
const PRESENT_MATTERS: readonly Pattern[] = ['busy', 'flaky'];

t.test(`the back-test: the forecast beats both baselines (clearly where the present matters) and is calibrated within ${CALIBRATION_TOLERANCE}`, async (t) => {
  const openingHours = 'Mo-Su 06:00-22:00';
  const variants = [
    { name: 'open all hours', isOpen: always },
    { name: openingHours, isOpen: (at: number) => isOpen(openingHours, ZONE, new Date(at)) },
  ];
  const overall = Object.fromEntries(METHODS.map((m) => [m, new ScoreBook()])) as Record<(typeof METHODS)[number], ScoreBook>;
  for (const pattern of PATTERNS as readonly Pattern[]) {
    const books = Object.fromEntries(METHODS.map((m) => [m, new ScoreBook()])) as Record<(typeof METHODS)[number], ScoreBook>;
    for (const variant of variants) {
      for (let k = 0; k < STATIONS_PER_PATTERN; k++) {
        const rows = simulatedHours({ pattern, timeZone: ZONE, from: END - WEEKS * 7 * DAY_MS, to: END, seed: seedOf(`${pattern}/${variant.name}/${k}`), isOpen: variant.isOpen });
        const result = backtest(rows, { timeZone: ZONE, isOpen: variant.isOpen, holdoutDays: HOLDOUT_DAYS, end: END });
        t.ok(result.enough, `${pattern}, ${variant.name}, ${k}: six weeks are enough to learn from`);
        for (const m of METHODS) {
          books[m].merge(result.books[m]);
          overall[m].merge(result.books[m]);
        }
      }
    }
    const scores = Object.fromEntries(METHODS.map((m) => [m, books[m].scores()])) as Record<(typeof METHODS)[number], ReturnType<ScoreBook['scores']>>;
    const line = METHODS.map((m) => `${m} ${scores[m].brier.toFixed(4)} (calibration ${scores[m].calibrationError.toFixed(3)})`).join(', ');
    t.ok(scores.forecast.pairs > 1000, `${pattern}: ${scores.forecast.pairs} pairs scored`);
    t.ok(scores.forecast.brier < scores.persistence.brier, `${pattern}: better than persistence: ${line}`);
    if (PRESENT_MATTERS.includes(pattern)) {
      const better = Math.min(scores.persistence.brier, scores.hourly_rate.brier);
      t.ok(scores.forecast.brier <= better * (1 - CLEARLY_BETTER), `${pattern}: at least ${CLEARLY_BETTER * 100}% better than either baseline: ${line}`);
    } else {
      t.ok(scores.forecast.brier <= scores.hourly_rate.brier * (1 + NO_WORSE), `${pattern}: no worse than the hour's rate: ${line}`);
    }
    t.ok(scores.forecast.calibrationError <= CALIBRATION_TOLERANCE, `${pattern}: calibrated: ${line}`);
  }
  const all = Object.fromEntries(METHODS.map((m) => [m, overall[m].scores()])) as Record<(typeof METHODS)[number], ReturnType<ScoreBook['scores']>>;
  const line = METHODS.map((m) => `${m} ${all[m].brier.toFixed(4)} (calibration ${all[m].calibrationError.toFixed(3)})`).join(', ');
  t.ok(all.forecast.brier < all.persistence.brier && all.forecast.brier < all.hourly_rate.brier, `overall, better than both: ${line}`);
  t.ok(all.forecast.calibrationError <= CALIBRATION_TOLERANCE, `overall, calibrated: ${line}`);
});
