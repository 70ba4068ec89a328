/**
 * forecast: what computing every station's availability forecast costs, in this process (no server,
 * no PostgreSQL: the model alone, src/domain/forecast/model.ts). For 1,000 and then 10,000 stations,
 * each with two fuelling options and 84 days of hourly history (the most a served forecast learns
 * from), every option is learned (`learn`) and forecast for the next 12 hours (`forecastHours`), as
 * the platform does on a station's first forecast after an hour is published; the learned models are
 * held, as the platform's cache holds them, and the memory they take (the heap and the typed arrays'
 * buffers) is measured after a collection.
 *
 * The histories are the simulated patterns of src/domain/forecast/patterns.ts (steady, busy,
 * maintenance, flaky; four seeds each, a quarter of the stations open 06:00–22:00), shared between
 * stations: a model's cost depends on its rows, not on whose they are. Reading the rows from
 * PostgreSQL (one statement per station) is not counted.
 *
 * No goal: the issue asks for the figures.
 */
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { DAY_MS, forecastHours, HOUR_MS, learn, type HourRow, type Learned } from '../../src/domain/forecast/model.js';
import { PATTERNS, seedOf, simulatedHours } from '../../src/domain/forecast/patterns.js';
import { isOpen } from '../../src/domain/opening-hours.js';
import type { BenchOptions, Scenario } from './lib/scenario.js';
import { fixed, integer, table } from './lib/table.js';

const SIZES = [1_000, 10_000];
const OPTIONS_PER_STATION = 2;
const HISTORY_DAYS = 84;
const SEEDS = 4;
const ZONE = 'Europe/Berlin';
const HOURS_TEXT = 'Mo-Su 06:00-22:00';

setFlagsFromString('--expose-gc');
const collect = runInNewContext('gc') as () => void;

/** The heap and the typed arrays' buffers (kept outside the heap), after a collection. */
function heldAfterCollecting(): number {
  collect();
  collect();
  const { heapUsed, arrayBuffers } = process.memoryUsage();
  return heapUsed + arrayBuffers;
}

interface History {
  rows: HourRow[];
  isOpen: (instant: number) => boolean;
}

async function run(options: BenchOptions): Promise<void> {
  const end = Math.floor(Date.now() / HOUR_MS) * HOUR_MS;
  const madeStarted = performance.now();
  const histories: History[] = [];
  for (const pattern of PATTERNS) {
    for (let seed = 0; seed < SEEDS; seed++) {
      const open = seed === 0 ? (at: number) => isOpen(HOURS_TEXT, ZONE, new Date(at)) : () => true;
      histories.push({ rows: simulatedHours({ pattern, timeZone: ZONE, from: end - HISTORY_DAYS * DAY_MS, to: end, seed: seedOf(`${pattern}/${seed}`), isOpen: open }), isOpen: open });
    }
  }
  const madeMs = performance.now() - madeStarted;
  const results: string[][] = [];
  for (const stations of SIZES) {
    const before = heldAfterCollecting();
    const held: Learned[] = [];
    let forecastMs = 0;
    let hoursOut = 0;
    const started = performance.now();
    for (let s = 0; s < stations; s++) {
      for (let o = 0; o < OPTIONS_PER_STATION; o++) {
        const history = histories[(s * OPTIONS_PER_STATION + o) % histories.length]!;
        const learned = learn(history.rows, { timeZone: ZONE, now: end });
        held.push(learned);
        const at = performance.now();
        const hours = forecastHours(learned, { now: end + 20 * 60_000, present: o === 0 ? 'available' : 'unavailable', isOpen: history.isOpen });
        forecastMs += performance.now() - at;
        hoursOut += hours?.length ?? 0;
      }
    }
    const totalMs = performance.now() - started;
    const heldBytes = heldAfterCollecting() - before;
    const models = stations * OPTIONS_PER_STATION;
    if (hoursOut !== models * 12) throw new Error(`${hoursOut} hours forecast, ${models * 12} expected: some option had too little history`);
    results.push([
      integer(stations),
      integer(models),
      fixed(totalMs / 1000, 2),
      fixed(((totalMs - forecastMs) * 1000) / models, 0),
      fixed((forecastMs * 1000) / models, 1),
      fixed(heldBytes / 1e6, 1),
      integer(heldBytes / models),
    ]);
    held.length = 0;
  }
  options.print(`histories: ${histories.length} simulated options (${PATTERNS.join(', ')}; ${SEEDS} seeds each), ${HISTORY_DAYS} days of hourly rows each (${integer(histories[0]!.rows.length)} rows), made in ${fixed(madeMs / 1000, 1)} s; Node.js ${process.version}`);
  options.print();
  options.print(table(['stations', 'options', 'all forecasts, s', 'learn µs per option', 'the 12 hours µs per option', 'models held, MB', 'bytes per model'], results));
  options.print();
  options.print('all forecasts: every option learned from its rows and forecast 12 hours ahead, one after the other on one core; models held: the memory the learned models take (the heap and their typed arrays\' buffers), measured after a collection (what the platform keeps per station until the next hour is published, for at most 2,000 stations).');
}

const scenario: Scenario = {
  description: 'the availability forecasts: learning and forecasting every option of 1,000 and 10,000 stations from 84 days of hourly history, time and memory',
  run,
};
export default scenario;
