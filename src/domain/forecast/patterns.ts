/**
 * Station behaviours worth forecasting, simulated: the demo's stations follow them, and the forecast's
 * tests and back-test learn from them. Each is a two-state process (available, unavailable) stepped
 * every SIMULATION_STEP_MS, with hazards by the station's local weekday and hour; seeded, so a station's
 * history is the same on every run.
 *
 * - `steady`: rarely down (once in about four days), back within the hour;
 * - `busy`: the weekday rush hours (07–09 and 16–19) drain the 700 bar storage: back-to-back fills
 *   leave the option unavailable for half an hour at a time, about a quarter of those hours;
 * - `maintenance`: as steady, but down every Tuesday from 02:00 to 05:00 for the weekly maintenance;
 * - `flaky`: down about once in 33 hours, for four hours on average: its state now says much about the
 *   next hours, and little about the same hour next week.
 */
import { HOUR_MS, slotOf, type HourRow } from './model.js';
import { seededRandom } from '../random.js';

export { seedOf } from '../random.js';

export const PATTERNS = ['steady', 'busy', 'maintenance', 'flaky'] as const;
export type Pattern = (typeof PATTERNS)[number];

export const SIMULATION_STEP_MS = 5 * 60_000;

interface Hazards {
  /** Per hour: the chance rate of going down when up, and of coming back when down. */
  down: number;
  up: number;
  /** Held down whatever the hazards say (the maintenance window). */
  forcedDown?: boolean;
}

/** A pattern's hazards at a slot of the local week (weekday 0 = Monday, × 24 + hour). */
export function hazardsOf(pattern: Pattern, slot: number): Hazards {
  const weekday = Math.floor(slot / 24);
  const hour = slot % 24;
  switch (pattern) {
    case 'steady':
      return { down: 0.01, up: 1.5 };
    case 'busy': {
      const rush = weekday < 5 && ((hour >= 7 && hour < 9) || (hour >= 16 && hour < 19));
      return rush ? { down: 0.7, up: 2 } : { down: 0.015, up: 1.5 };
    }
    case 'maintenance':
      return weekday === 1 && hour >= 2 && hour < 5 ? { down: 0, up: 0, forcedDown: true } : { down: 0.01, up: 1.5 };
    case 'flaky':
      return { down: 0.03, up: 0.25 };
  }
}

export interface SimulationOptions {
  pattern: Pattern;
  timeZone: string;
  /** Whole hours (UTC ms): the history covers [from, to). */
  from: number;
  to: number;
  seed: number;
  /** Whether the station is open at an instant; closed time is counted as closed, not simulated. Open all the time when absent. */
  isOpen?: (instant: number) => boolean;
  /** The share of hours whose signal was lost (counted unknown), in runs of a few hours. Default 0.01. */
  gapShare?: number;
}

/** One simulated step of a history: its start and whether the option was available (closed and unknown steps included as such). */
export type StepState = 'available' | 'unavailable' | 'closed' | 'unknown';

/**
 * Simulates a pattern step by step, calling `visit` with each step's start and state, in order.
 * The state before `from` is available.
 */
export function simulate(options: SimulationOptions, visit: (at: number, state: StepState) => void): void {
  const random = seededRandom(options.seed);
  const slot = slotOf(options.timeZone);
  const gapShare = options.gapShare ?? 0.01;
  // A lost signal lasts three hours on average: a gap starts at this rate per step.
  const gapStart = gapShare / (3 * (HOUR_MS / SIMULATION_STEP_MS));
  const gapEnd = 1 / (3 * (HOUR_MS / SIMULATION_STEP_MS));
  const stepHours = SIMULATION_STEP_MS / HOUR_MS;
  let up = true;
  let lost = false;
  for (let at = options.from; at < options.to; at += SIMULATION_STEP_MS) {
    const hazards = hazardsOf(options.pattern, slot(at));
    if (hazards.forcedDown) up = false;
    else if (up) up = random() >= 1 - Math.exp(-hazards.down * stepHours);
    else up = random() < 1 - Math.exp(-hazards.up * stepHours);
    lost = lost ? random() >= gapEnd : random() < gapStart;
    const open = options.isOpen ? options.isOpen(at) : true;
    visit(at, !open ? 'closed' : lost ? 'unknown' : up ? 'available' : 'unavailable');
  }
}

/** A simulated history summed per hour, as the roll-up keeps it. */
export function simulatedHours(options: SimulationOptions): HourRow[] {
  const rows: HourRow[] = [];
  let row: HourRow | undefined;
  simulate(options, (at, state) => {
    const hour = Math.floor(at / HOUR_MS) * HOUR_MS;
    if (row?.hour !== hour) {
      row = { hour, availableMs: 0, limitedMs: 0, unavailableMs: 0, closedMs: 0, unknownMs: 0 };
      rows.push(row);
    }
    if (state === 'available') row.availableMs += SIMULATION_STEP_MS;
    else if (state === 'unavailable') row.unavailableMs += SIMULATION_STEP_MS;
    else if (state === 'closed') row.closedMs += SIMULATION_STEP_MS;
    else row.unknownMs += SIMULATION_STEP_MS;
  });
  return rows;
}
