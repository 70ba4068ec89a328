/**
 * How much of a slow behaviour a test exercises. `npm test` runs at the quick scale: property tests with
 * a fifth of their runs (at least 20) and outages of seconds. `npm run test:system` runs the files that
 * use this again with TEST_SCALE=full: every run and the outages' real length, as the issues that
 * introduced them asked. The behaviour tested is the same at both scales; only the amount differs.
 */
export const FULL_SCALE = process.env.TEST_SCALE === 'full';

/** A property test's runs: `full` at the full scale, else a fifth of it (at least 20, at most `full`). */
export function runs(full: number): number {
  return FULL_SCALE ? full : Math.min(full, Math.max(20, Math.ceil(full / 5)));
}

/** A waiting time: `fullMs` at the full scale, `quickMs` at the quick one. */
export function lasting(fullMs: number, quickMs: number): number {
  return FULL_SCALE ? fullMs : quickMs;
}
