import { LIMITS } from './limits.js';

/**
 * How a request's signals are checked, for import v2 (./validate.ts) and the legacy import
 * (../import-v1/validate.ts): one entry per step, in order, until the request's error budget is spent;
 * every entry after that is answered "not validated". Run whole (tests, scripts) or in slices with a
 * pause between them, so that a large request never holds the event loop long. What an entry's check
 * is, what a skipped entry gets and what the outcomes add up to is each generation's own.
 */

/** A batch under validation: `step()` checks the next entry (false when all are done). */
export interface BatchRun<R> {
  step(): boolean;
  result(): R;
}

/** An entry's outcome and how many messages it reports (spent from the request's error budget). */
export interface Counted<O> {
  outcome: O;
  count: number;
}

/**
 * The run over `entries`: `check` for each while the budget lasts, `skipped()` for the rest; `finish`
 * turns the outcomes, one per entry in order, into the result.
 */
export function batchRun<O, R>(
  entries: readonly unknown[],
  check: (raw: unknown) => Counted<O>,
  skipped: () => O,
  finish: (outcomes: O[]) => R,
): BatchRun<R> {
  let budget: number = LIMITS.reportedErrors;
  const outcomes: O[] = [];
  return {
    step() {
      if (outcomes.length >= entries.length) return false;
      if (budget <= 0) outcomes.push(skipped());
      else {
        const { outcome, count } = check(entries[outcomes.length]);
        budget -= count;
        outcomes.push(outcome);
      }
      return outcomes.length < entries.length;
    },
    result: () => finish(outcomes),
  };
}

/** Every step at once. */
export function runWhole<R>(run: BatchRun<R>): R {
  while (run.step()) {
    // one entry per step
  }
  return run.result();
}

/** `pause` after every `slice` steps, so that a caller can let other work run between slices. */
export async function runInSlices<R>(run: BatchRun<R>, slice: number, pause: () => Promise<void>): Promise<R> {
  for (let done = 1; run.step(); done++) if (done % slice === 0) await pause();
  return run.result();
}
