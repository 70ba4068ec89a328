import fc from 'fast-check';
import type { Test } from 'tap';

/**
 * Checks a fast-check property as an assertion of the test: it passes when every run held and as
 * many ran as asked (a generator that filtered most of its values away would run fewer); when a run
 * failed, the message carries fast-check's report (the shrunk counterexample and its error).
 */
export async function holds<Ts>(t: Test, property: fc.IRawProperty<Ts>, params: fc.Parameters<Ts> & { numRuns: number }, message: string): Promise<void> {
  const run = await fc.check(property, params);
  t.same({ failed: run.failed, numRuns: run.numRuns }, { failed: false, numRuns: params.numRuns }, run.failed ? `${message}: ${fc.defaultReportMessage(run)}` : message);
}
