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

const HOUR = 3_600_000;

/**
 * A station's day as its history has it, by hours from the present one on its clock: available
 * throughout, then less and less, closed two hours by its opening hours (null), then hardly at all; the
 * rest of the day available. Weeks of it make a forecast of the next 12 hours with every word.
 */
const DAY_SHAPE = [1, 1, 1, 0.8, 0.8, 0.55, 0.55, 0.25, 0.25, null, null, 0.05];

/**
 * The shaped day from the hour of `now` on `timeZone`'s clock: `hours(from, to)`, one option's hourly
 * rows in [from, to) (whole hours), and the opening hours that close the two hours the shape closes.
 */
export function shapedDay(timeZone: string, now: number): { hours(from: number, to: number): HourRow[]; openingHours: string } {
  const hourOf = (at: number) => Number(new Intl.DateTimeFormat('en-GB', { hour: '2-digit', hourCycle: 'h23', timeZone }).format(new Date(at)));
  const h0 = hourOf(now);
  const shareAt = (hourOfDay: number) => DAY_SHAPE[(hourOfDay - h0 + 24) % 24];
  const open = Array.from({ length: 24 }, (_, hour) => shareAt(hour) !== null);
  const ranges: string[] = [];
  const two = (n: number) => String(n).padStart(2, '0');
  for (let hour = 0; hour < 24; hour++) {
    if (!open[hour] || (hour > 0 && open[hour - 1])) continue;
    let end = hour;
    while (end < 24 && open[end]) end++;
    ranges.push(`${two(hour)}:00-${two(end)}:00`);
  }
  return {
    openingHours: `Mo-Su ${ranges.join(',')}`,
    hours(from, to) {
      const rows: HourRow[] = [];
      for (let hour = from; hour < to; hour += HOUR) {
        const share = shareAt(hourOf(hour));
        if (share === null) rows.push({ hour, availableMs: 0, limitedMs: 0, unavailableMs: 0, closedMs: HOUR, unknownMs: 0 });
        else {
          const available = Math.round((share ?? 1) * HOUR);
          rows.push({ hour, availableMs: available, limitedMs: 0, unavailableMs: HOUR - available, closedMs: 0, unknownMs: 0 });
        }
      }
      return rows;
    },
  };
}
