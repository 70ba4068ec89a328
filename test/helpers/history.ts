import type { FreshnessPolicy } from '../../src/domain/categories/index.js';
import { classify, type HistoryReading } from '../../src/domain/history/timeline.js';

/**
 * The reference the history's property tests hold the materialiser to: the state of an availability
 * series at `at`, straight from the readings (the newest by measurement among those received by then,
 * classified by its age at `at`); null before the first.
 */
export function referenceState(policy: FreshnessPolicy, readings: readonly HistoryReading[], at: number): string | null {
  let held: HistoryReading | undefined;
  for (const r of readings) {
    if (r.receivedAt > at) break;
    if (!held || r.measuredAt >= held.measuredAt) held = r;
  }
  return held ? classify(policy, held.measuredAt, at) : null;
}
