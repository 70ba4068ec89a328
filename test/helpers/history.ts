import type { FreshnessPolicy } from '../../src/domain/categories/index.js';
import { classify, type HistoryReading } from '../../src/domain/history/timeline.js';
import type { HourRow } from '../../src/domain/forecast/model.js';
import type { Sql } from '../../db/connect.js';

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

/**
 * Writes hourly five-state roll-ups of one fuelling option of a station, as the history jobs would
 * have written them (what a forecast learns from; src/domain/forecast/patterns.ts simulates them).
 */
export async function writeOptionHours(sql: Sql, hrsId: string, option: string, rows: readonly HourRow[]): Promise<void> {
  for (let i = 0; i < rows.length; i += 1000) {
    const slice = rows.slice(i, i + 1000).map((r) => ({
      hrs_id: hrsId,
      series: `option:${option}`,
      hour: new Date(r.hour),
      available_ms: r.availableMs,
      limited_ms: r.limitedMs,
      unavailable_ms: r.unavailableMs,
      closed_ms: r.closedMs,
      unknown_ms: r.unknownMs,
    }));
    await sql`INSERT INTO history_hourly ${sql(slice)}`;
  }
}

/** Publishes the history up to `at` (the end of the last hour rolled up), as the roll-up does. */
export async function publishHoursUntil(sql: Sql, at: number): Promise<void> {
  await sql`INSERT INTO history_progress (name, until, changed_at) VALUES ('rolled_up', ${new Date(at)}, now())
    ON CONFLICT (name) DO UPDATE SET until = EXCLUDED.until, changed_at = now()`;
}
