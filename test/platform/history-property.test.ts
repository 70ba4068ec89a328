import fc from 'fast-check';
import t from 'tap';
import { referenceState } from '../helpers/history.js';
import { readRegistryRows } from '../../db/queries/registry.js';
import { storeTransmissions } from '../../db/queries/signals.js';
import { freshnessPolicies } from '../../src/domain/categories/index.js';
import type { HistoryReading } from '../../src/domain/history/timeline.js';
import { Registry } from '../../src/registry/registry.js';
import { loadFixture } from '../../src/registry/file/load.js';
import { materialize, rollUpHours, type HistoryJobs } from '../../workers/history/jobs.js';
import { baseFixture, berlaAssignments } from '../helpers/fixtures.js';
import { freshDatabase } from '../helpers/platform.js';

/**
 * The figures against a reference: random availability sequences for one station are stored, turned
 * into intervals by the materialiser in random steps, rolled up by the hour; the milliseconds per
 * freshness state of every hour must equal a reference computed straight from the readings (the state
 * is piecewise constant between receipts and deadlines, so it is summed exactly between those instants).
 */

const MIN = 60_000;
const HOUR = 60 * MIN;
const policies = freshnessPolicies({ staleAfterMs: 5 * MIN, unknownAfterMs: 30 * MIN, pricingStaleAfterMs: 25 * HOUR });


/** Milliseconds per state in [from, to), exactly. */
function referenceDurations(readings: readonly HistoryReading[], from: number, to: number): Record<string, number> {
  const cuts = new Set([from, to]);
  for (const r of readings) for (const at of [r.receivedAt, r.measuredAt + 5 * MIN, r.measuredAt + 30 * MIN]) if (at > from && at < to) cuts.add(at);
  const sorted = [...cuts].sort((a, b) => a - b);
  const out: Record<string, number> = { fresh: 0, stale: 0, unknown: 0 };
  for (let k = 0; k + 1 < sorted.length; k++) {
    const state = referenceState(policies.availability, readings, sorted[k]!);
    if (state !== null) out[state]! += sorted[k + 1]! - sorted[k]!;
  }
  return out;
}

t.test('property: hourly roll-ups of random sequences equal the reference, whatever the materialiser\'s steps', async (t) => {
  const { sql } = await freshDatabase(t);
  await loadFixture(sql, { ...baseFixture(), assignments: berlaAssignments() }, { baseDir: '.' });
  const registry = new Registry(() => readRegistryRows(sql));
  await registry.reload();
  // Whole hours, 6 to 3 hours ago (no midnight needed: the pieces are cut there and summed again).
  const base = Math.floor(Date.now() / HOUR) * HOUR - 6 * HOUR;
  const end = base + 3 * HOUR;
  let runs = 0;
  await fc.assert(
    fc.asyncProperty(
      fc.array(fc.record({ gap: fc.integer({ min: 1000, max: 40 * MIN }), delay: fc.integer({ min: 0, max: 5 * MIN }) }), { minLength: 1, maxLength: 30 }),
      fc.array(fc.integer({ min: 1, max: 99 }), { maxLength: 4 }),
      async (steps, cuts) => {
        runs++;
        await sql`TRUNCATE signal_history, status_intervals, history_series, history_hourly, history_progress, signal_latest, published_signals`;
        let received = base;
        const readings: HistoryReading[] = [];
        for (const { gap, delay } of steps) {
          received += gap;
          if (received >= end) break;
          readings.push({ hrsId: 'BERLA', category: 'availability', originatorId: 'mon-1', measuredAt: received - delay, receivedAt: received, payload: null });
        }
        if (readings.length === 0) return;
        await storeTransmissions(
          sql,
          readings.map((r) => ({
            originatorId: 'mon-1', hrsId: 'BERLA', category: 'availability', state: 'live',
            measuredAt: new Date(r.measuredAt), receivedAt: new Date(r.receivedAt), transmissionId: null,
            payload: { station: { maintenance: false, limitedly_available: false }, nozzles: [{ id: 'N1', available: true }] },
          })),
        );
        let clock = base;
        const jobs: HistoryJobs = { sql, stations: () => registry, policies, lagMs: 0, retentionDays: 400, now: () => clock };
        for (const c of [...new Set(cuts)].sort((a, b) => a - b)) {
          clock = base + Math.floor(((end - base) * c) / 100);
          await materialize(jobs);
        }
        clock = end;
        await materialize(jobs);
        await rollUpHours(jobs);
        const rows = await sql<{ hour: Date; fresh_ms: number; stale_ms: number; unknown_ms: number }[]>`
          SELECT hour, fresh_ms, stale_ms, unknown_ms FROM history_hourly WHERE series = 'availability' ORDER BY hour`;
        for (let hour = base; hour < end; hour += HOUR) {
          const expected = referenceDurations(readings, hour, hour + HOUR);
          const row = rows.find((r) => r.hour.getTime() === hour);
          const got = { fresh: row?.fresh_ms ?? 0, stale: row?.stale_ms ?? 0, unknown: row?.unknown_ms ?? 0 };
          if (got.fresh !== expected.fresh || got.stale !== expected.stale || got.unknown !== expected.unknown) {
            throw new Error(`hour +${(hour - base) / HOUR}: expected ${JSON.stringify(expected)}, rolled up ${JSON.stringify(got)}`);
          }
        }
      },
    ),
    { numRuns: 40 },
  );
  t.ok(runs >= 40, `${runs} random sequences`);
});
