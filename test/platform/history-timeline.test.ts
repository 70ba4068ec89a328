import fc from 'fast-check';
import t from 'tap';
import { referenceState } from '../helpers/history.js';
import {
  DAY_MS,
  StationReplay,
  type HistoryReading,
  type Interval,
  type SeriesState,
} from '../../src/domain/history/timeline.js';
import { freshnessPolicies } from '../../src/domain/categories/index.js';
import type { StationEntry } from '../../src/domain/stations.js';
import { runs } from '../helpers/scale.js';
import { holds } from '../helpers/property.js';

const MIN = 60_000;
const policies = freshnessPolicies({ staleAfterMs: 5 * MIN, unknownAfterMs: 30 * MIN, pricingStaleAfterMs: 25 * 60 * MIN });
const T0 = Date.UTC(2026, 10, 23, 10, 0, 0);

function station(openingHours: string | null = '24/7'): StationEntry {
  return {
    hrsId: 'BERLA',
    name: 'Berlin',
    heavyDuty: false,
    layout: {
      nozzles: new Map([
        ['N1', { dispenser: 'D1', fuellingOptions: ['700ld'] }],
        ['N2', { dispenser: 'D1', fuellingOptions: ['350ld'] }],
      ]),
      dispensers: new Map([['D1', ['N1', 'N2']]]),
      storages: new Set(),
      products: new Set(),
    },
    openingHours,
    timeZone: 'UTC',
    holidayCountry: null,
  };
}

const availability = (measuredAt: number, receivedAt: number, n1 = true, n2 = false, station: object = {}): HistoryReading => ({
  hrsId: 'BERLA',
  category: 'availability',
  originatorId: 'mon-1',
  measuredAt,
  receivedAt,
  payload: { station: { maintenance: false, limitedly_available: false, ...station }, nozzles: [{ id: 'N1', available: n1 }, { id: 'N2', available: n2 }] },
});

const brief = (i: Interval) => [i.series, i.state, i.reason, i.startsAt - T0, i.endsAt - T0];

t.test('fresh → stale → unknown → fresh, each at its exact time', async (t) => {
  const replay = new StationReplay('BERLA', station(), policies, []);
  const readings = [availability(T0, T0 + 1000), availability(T0 + 40 * MIN, T0 + 40 * MIN + 500)];
  const out = replay.run(readings, T0 + 44 * MIN);
  const freshness = out.intervals.filter((i) => i.series === 'availability').map(brief);
  t.same(freshness, [
    ['availability', 'fresh', null, 1000, 5 * MIN],
    ['availability', 'stale', null, 5 * MIN, 30 * MIN],
    ['availability', 'unknown', null, 30 * MIN, 40 * MIN + 500],
  ]);
  const options = out.intervals.filter((i) => i.series.startsWith('option:')).map(brief);
  t.same(options, [
    ['option:700ld', 'AVAILABLE', 'reported_available', 1000, 30 * MIN],
    ['option:350ld', 'UNAVAILABLE', 'reported_unavailable', 1000, 30 * MIN],
    ['option:700ld', 'UNKNOWN', 'no_signal', 30 * MIN, 40 * MIN + 500],
    ['option:350ld', 'UNKNOWN', 'no_signal', 30 * MIN, 40 * MIN + 500],
  ]);
  const open = new Map(out.changed.map((s) => [s.series, s]));
  t.equal(open.get('availability')!.state, 'fresh');
  t.equal(open.get('availability')!.since, T0 + 40 * MIN + 500);
  t.equal(open.get('availability')!.nextDue, T0 + 45 * MIN, 'the next deadline: stale at datetime + 5 min');
  t.equal(open.get('option:700ld')!.state, 'AVAILABLE');
});

t.test('a reading measured before the one held changes nothing; maintenance decides for every option', async (t) => {
  const replay = new StationReplay('BERLA', station(), policies, []);
  const out = replay.run(
    [availability(T0, T0 + 1000), availability(T0 - MIN, T0 + 2000, false, false), availability(T0 + MIN, T0 + MIN + 100, true, true, { maintenance: true })],
    T0 + 2 * MIN,
  );
  t.same(out.intervals.map(brief), [
    ['option:700ld', 'AVAILABLE', 'reported_available', 1000, MIN + 100],
    ['option:350ld', 'UNAVAILABLE', 'reported_unavailable', 1000, MIN + 100],
  ]);
  const open = new Map(out.changed.map((s) => [s.series, s]));
  t.equal(open.get('option:700ld')!.reason, 'maintenance');
  t.equal(open.get('option:350ld')!.state, 'UNAVAILABLE');
  t.equal(open.get('availability')!.measuredAt, T0 + MIN);
});

t.test('opening hours: CLOSED at the closing minute without a reading, back at opening', async (t) => {
  const replay = new StationReplay('BERLA', station('Mo-Su 06:00-10:30'), policies, []);
  // Readings every 10 minutes from 10:00 to 11:00 (the station closes at 10:30 UTC).
  const readings = Array.from({ length: 7 }, (_, k) => availability(T0 + k * 10 * MIN, T0 + k * 10 * MIN + 100));
  const out = replay.run(readings, T0 + 65 * MIN);
  const option = out.intervals.filter((i) => i.series === 'option:700ld').map(brief);
  t.same(option, [['option:700ld', 'AVAILABLE', 'reported_available', 100, 30 * MIN]]);
  const open = out.changed.find((s) => s.series === 'option:700ld')!;
  t.equal(open.state, 'CLOSED');
  t.equal(open.since, T0 + 30 * MIN);
  t.equal(open.nextDue, Date.UTC(2026, 10, 24, 6, 0), 'due again at the next opening');
});

t.test('an interval spanning midnight is cut there; the pieces share their start', async (t) => {
  const late = Date.UTC(2026, 10, 23, 23, 50);
  const replay = new StationReplay('BERLA', station(), policies, []);
  const out = replay.run([availability(late, late)], late + 3 * 3600_000);
  const freshness = out.intervals.filter((i) => i.series === 'availability');
  t.same(
    freshness.map((i) => [i.state, i.startsAt, i.endsAt, i.since]),
    [
      ['fresh', late, late + 5 * MIN, late],
      ['stale', late + 5 * MIN, Date.UTC(2026, 10, 24), late + 5 * MIN],
      ['stale', Date.UTC(2026, 10, 24), late + 30 * MIN, late + 5 * MIN],
    ],
  );
  const option = out.intervals.filter((i) => i.series === 'option:700ld');
  t.same(
    option.map((i) => [i.startsAt, i.endsAt, i.since]),
    [
      [late, Date.UTC(2026, 10, 24), late],
      [Date.UTC(2026, 10, 24), late + 30 * MIN, late],
    ],
  );
});


function stateAt(intervals: readonly Interval[], open: SeriesState | undefined, at: number): string | null {
  const found = intervals.find((i) => i.series === 'availability' && i.startsAt <= at && at < i.endsAt);
  if (found) return found.state;
  return open && open.since <= at ? open.state : null;
}

t.test('property: replayed in any number of runs, the intervals give the reference state at every instant', async (t) => {
  const sequence = fc.array(fc.record({ gap: fc.integer({ min: 1, max: 50 * MIN }), delay: fc.integer({ min: 0, max: 6 * MIN }) }), { minLength: 1, maxLength: 25 });
  await holds(
    t,
    fc.property(sequence, fc.array(fc.integer({ min: 1, max: 99 }), { maxLength: 5 }), (steps, cuts) => {
      let received = T0;
      const readings = steps.map(({ gap, delay }) => {
        received += gap;
        return availability(received - Math.min(delay, 5 * MIN), received);
      });
      const end = received + 2 * 3600_000;
      // Runs end at these instants; each run continues from the states the last one left.
      const ends = [...new Set(cuts.map((c) => T0 + Math.floor(((end - T0) * c) / 100))), end].sort((a, b) => a - b);
      let states = new Map<string, SeriesState>();
      const intervals: Interval[] = [];
      let from = T0;
      for (const to of ends) {
        const slice = readings.filter((r) => r.receivedAt > from && r.receivedAt <= to);
        const out = new StationReplay('BERLA', station(), policies, [...states.values()]).run(slice, to);
        intervals.push(...out.intervals);
        for (const s of out.changed) states.set(s.series, s);
        for (const r of out.removed) states.delete(r.series);
        from = to;
      }
      const probes = new Set<number>([end - 1]);
      for (const r of readings) for (const d of [0, 1, 5 * MIN - 1, 5 * MIN, 30 * MIN - 1, 30 * MIN]) probes.add(r.measuredAt + d).add(r.receivedAt + d - 1);
      for (const at of probes) {
        if (at < T0 || at >= end) continue;
        const expected = referenceState(policies.availability, readings, at);
        const got = stateAt(intervals, states.get('availability'), at);
        if (expected !== got) throw new Error(`at +${at - T0} ms: expected ${expected}, got ${got}`);
      }
      // Pieces never overlap and never cross midnight.
      const pieces = intervals.filter((i) => i.series === 'availability').sort((a, b) => a.startsAt - b.startsAt);
      for (let k = 1; k < pieces.length; k++) if (pieces[k]!.startsAt < pieces[k - 1]!.endsAt) throw new Error('overlap');
      for (const p of intervals) if (Math.floor(p.startsAt / DAY_MS) !== Math.floor((p.endsAt - 1) / DAY_MS)) throw new Error('crosses midnight');
    }),
    { numRuns: runs(300) },
    `${runs(300)} random sequences`,
  );
});
