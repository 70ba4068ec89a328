/**
 * The freshness machine, the live status and the signal writer.
 *
 * One file, one process: its parts share the loaded platform code. Each part is a subtest named after
 * what it covers.
 */
import { randomBytes } from 'node:crypto';
import { get as httpGet, type IncomingHttpHeaders } from 'node:http';
import { gunzipSync } from 'node:zlib';
import fc from 'fast-check';
import { pino } from 'pino';
import t, { type Test } from 'tap';
import { createActor, SimulatedClock } from 'xstate';
import { publishedSignalBatches, SignalWriter, type StoredTransmission } from '../../db/queries/signals.js';
import { StoredSignal, type PublishedSignal } from '../../src/domain/signals.js';
import { freshnessMachine, freshnessOf, type FreshnessPolicy, type FreshnessSnapshot } from '../../machines/freshness.js';
import { LiveStatus, type StatusChange } from '../../machines/live-status.js';
import { FreshnessRunner, type Step } from '../../machines/runner.js';
import type { Category } from '../../src/domain/categories/index.js';
import type { ConfirmedLayout, StationDirectory, StationEntry } from '../../src/domain/stations.js';
import { loadFixture } from '../../src/registry/file/load.js';
import { baseFixture, berlaAssignments, TOKENS } from '../helpers/fixtures.js';
import { ADMIN_TOKEN, freshDatabase, get, postSignals as post, startTestPlatform, type TestPlatform } from '../helpers/platform.js';
import { WsClient } from '../helpers/ws.js';
import { summaryLine } from '../../src/cli/demo/terminal.js';
import { stationStateOf } from '../../src/domain/status/verdict.js';
import { ACCOUNTS, grantPortalRoles, portalFixture, signedIn } from '../helpers/portal.js';
import { holds } from '../helpers/property.js';
import { runs } from '../helpers/scale.js';
import { until } from '../helpers/wait.js';

t.test('freshness-machine', async (t) => {
  /**
   * The freshness machine on a simulated clock (xstate's SimulatedClock driving a real actor), the
   * FreshnessRunner that computes its steps for the live-status layer, and LiveStatus's timers and
   * change stream (a fake registry, a clock the test moves, real timers of a few hundred milliseconds).
   */
  const SECOND = 1000;
  const MINUTE = 60 * SECOND;
  const HOUR = 60 * MINUTE;
  const DAY = 24 * HOUR;

  /** The platform's defaults: availability and usage; hydrogen storage; pricing. */
  const SHORT: FreshnessPolicy = { staleAfterMs: 5 * MINUTE, unknownAfterMs: 30 * MINUTE };
  const STORAGE: FreshnessPolicy = { staleAfterMs: 5 * MINUTE, unknownAfterMs: null };
  const PRICING: FreshnessPolicy = { staleAfterMs: 25 * HOUR, unknownAfterMs: null };

  const T0 = Date.parse('2025-03-01T12:00:00.000Z');

  // ---------------------------------------------------------------------------------------------------
  // The machine as an xstate actor on a simulated clock
  // ---------------------------------------------------------------------------------------------------

  interface Simulated {
    clock: SimulatedClock;
    send(datetime: number): void;
    value(): string;
    freshness(): ReturnType<typeof freshnessOf>;
    snapshot(): FreshnessSnapshot;
    /** Every state the actor settled in after its first, with the simulated time it did. */
    transitions: [string, number][];
  }

  /**
   * A started actor whose first reading is `datetime`, handled at `now` (the clock starts there).
   * The tests move the clock onto each deadline rather than past it: xstate's own scheduler counts a
   * delay from when the event that raised it was processed, so a clock jumped past the stale deadline
   * delivers `stale` late and the unknown timer starts late with it (the runner below has no such drift).
   */
  function simulate(t: Test, policy: FreshnessPolicy, datetime: number, now = datetime): Simulated {
    const clock = new SimulatedClock();
    clock.set(now);
    const actor = createActor(freshnessMachine, { input: { policy, datetime, now: clock.now() }, clock });
    const transitions: [string, number][] = [];
    let last: string | undefined;
    actor.subscribe((snapshot) => {
      const value = snapshot.value as string;
      if (last !== undefined && value !== last) transitions.push([value, clock.now()]);
      last = value;
    });
    actor.start();
    last = actor.getSnapshot().value as string;
    t.teardown(() => actor.stop());
    return {
      clock,
      send: (reading) => actor.send({ type: 'signal', datetime: reading, now: clock.now() }),
      value: () => actor.getSnapshot().value as string,
      freshness: () => freshnessOf(actor.getSnapshot()),
      snapshot: () => actor.getSnapshot(),
      transitions,
    };
  }

  t.test('machine: fresh turns stale exactly at datetime + staleAfterMs, unknown exactly 30 minutes after datetime', async (t) => {
    const m = simulate(t, SHORT, T0);
    t.equal(m.value(), 'fresh', 'a reading of this instant is fresh');

    m.clock.set(T0 + 5 * MINUTE - 1);
    t.equal(m.value(), 'fresh', '1 ms before the stale deadline: still fresh');
    m.clock.set(T0 + 5 * MINUTE);
    t.equal(m.value(), 'stale', 'at the stale deadline: stale');
    t.equal(m.freshness(), 'stale');
    t.equal(m.snapshot().context.enteredAt, T0 + 5 * MINUTE, 'stale was entered at the deadline itself');

    m.clock.set(T0 + 30 * MINUTE - 1);
    t.equal(m.value(), 'stale', '1 ms before the unknown deadline: still stale');
    m.clock.set(T0 + 30 * MINUTE);
    t.equal(m.value(), 'unknown', 'at 30 minutes after datetime: unknown');

    m.clock.set(T0 + 10 * DAY);
    t.equal(m.value(), 'unknown', 'unknown until the next signal');
    t.same(m.transitions, [
      ['stale', T0 + 5 * MINUTE],
      ['unknown', T0 + 30 * MINUTE],
    ]);
  });

  t.test('machine: a signal brings it back to fresh, deadlines restarted from the new datetime', async (t) => {
    const m = simulate(t, SHORT, T0);
    m.clock.set(T0 + 5 * MINUTE);
    m.clock.set(T0 + 30 * MINUTE);
    t.equal(m.value(), 'unknown');

    // From unknown: a reading measured 10 s before it is handled.
    const second = T0 + 40 * MINUTE;
    m.clock.set(second + 10 * SECOND);
    m.send(second);
    t.equal(m.value(), 'fresh', 'a new reading: fresh again');
    t.equal(m.snapshot().context.datetime, second);
    m.clock.set(second + 5 * MINUTE - 1);
    t.equal(m.value(), 'fresh', 'fresh until the new datetime + 5 min');
    m.clock.set(second + 5 * MINUTE);
    t.equal(m.value(), 'stale', 'stale at the new datetime + 5 min');

    // From stale: the pending unknown deadline of the previous reading (second + 30 min) is dropped.
    const third = second + 26 * MINUTE;
    m.clock.set(third);
    t.equal(m.value(), 'stale');
    m.send(third);
    t.equal(m.value(), 'fresh');
    m.clock.set(second + 30 * MINUTE);
    t.equal(m.value(), 'fresh', "the previous reading's unknown deadline does not apply");

    // From fresh: the pending stale deadline of the previous reading (third + 5 min) is dropped too.
    const fourth = third + 4 * MINUTE + 30 * SECOND;
    m.clock.set(fourth);
    m.send(fourth);
    m.clock.set(third + 5 * MINUTE);
    t.equal(m.value(), 'fresh', "the previous reading's stale deadline does not apply");
    m.clock.set(fourth + 5 * MINUTE - 1);
    t.equal(m.value(), 'fresh');
    m.clock.set(fourth + 5 * MINUTE);
    t.equal(m.value(), 'stale');
    m.clock.set(fourth + 30 * MINUTE - 1);
    t.equal(m.value(), 'stale');
    m.clock.set(fourth + 30 * MINUTE);
    t.equal(m.value(), 'unknown');

    t.same(m.transitions, [
      ['stale', T0 + 5 * MINUTE],
      ['unknown', T0 + 30 * MINUTE],
      ['fresh', second + 10 * SECOND],
      ['stale', second + 5 * MINUTE],
      ['fresh', third],
      ['stale', fourth + 5 * MINUTE],
      ['unknown', fourth + 30 * MINUTE],
    ]);
  });

  t.test('machine: a reading already 4 minutes old is fresh for exactly 1 more minute and unknown 26 minutes later', async (t) => {
    for (const via of ['input', 'signal'] as const) {
      t.test(`given as the ${via}`, async (t) => {
        let m: Simulated;
        if (via === 'input') m = simulate(t, SHORT, T0 - 4 * MINUTE, T0);
        else {
          // An actor whose previous reading is long unknown gets the 4-minute-old one at T0.
          m = simulate(t, SHORT, T0 - 2 * HOUR, T0 - HOUR);
          t.equal(m.value(), 'unknown');
          m.clock.set(T0);
          m.send(T0 - 4 * MINUTE);
        }
        t.equal(m.value(), 'fresh', '4 minutes old: fresh');
        m.clock.increment(MINUTE - 1);
        t.equal(m.value(), 'fresh', '1 minute - 1 ms later: still fresh');
        m.clock.increment(1);
        t.equal(m.value(), 'stale', 'exactly 1 minute later: stale');
        m.clock.increment(25 * MINUTE - 1);
        t.equal(m.value(), 'stale', '26 minutes - 1 ms later: still stale');
        m.clock.increment(1);
        t.equal(m.value(), 'unknown', 'exactly 26 minutes later: unknown');
        t.same(m.transitions.slice(-2), [
          ['stale', T0 + MINUTE],
          ['unknown', T0 + 26 * MINUTE],
        ]);
      });
    }
  });

  t.test('machine: a reading past a deadline starts in the state it has reached', async (t) => {
    const cases: [string, FreshnessPolicy, number, string, ReturnType<typeof freshnessOf>][] = [
      ['availability, 31 minutes old', SHORT, 31 * MINUTE, 'unknown', 'unknown'],
      ['availability, exactly 30 minutes old', SHORT, 30 * MINUTE, 'unknown', 'unknown'],
      ['availability, 30 minutes - 1 ms old', SHORT, 30 * MINUTE - 1, 'stale', 'stale'],
      ['availability, 6 minutes old', SHORT, 6 * MINUTE, 'stale', 'stale'],
      ['availability, exactly 5 minutes old', SHORT, 5 * MINUTE, 'stale', 'stale'],
      ['availability, 5 minutes - 1 ms old', SHORT, 5 * MINUTE - 1, 'fresh', 'fresh'],
      ['availability, measured 2 s in the future', SHORT, -2 * SECOND, 'fresh', 'fresh'],
      ['hydrogen storage, 6 minutes old', STORAGE, 6 * MINUTE, 'staleForGood', 'stale'],
      ['hydrogen storage, 31 minutes old', STORAGE, 31 * MINUTE, 'staleForGood', 'stale'],
      ['hydrogen storage, 3 minutes old', STORAGE, 3 * MINUTE, 'fresh', 'fresh'],
      ['pricing, 24 hours old', PRICING, 24 * HOUR, 'fresh', 'fresh'],
      ['pricing, 26 hours old', PRICING, 26 * HOUR, 'staleForGood', 'stale'],
      ['pricing, 40 days old', PRICING, 40 * DAY, 'staleForGood', 'stale'],
    ];
    for (const [label, policy, age, value, freshness] of cases) {
      const m = simulate(t, policy, T0 - age, T0);
      t.equal(m.value(), value, `${label}: ${value}`);
      t.equal(m.freshness(), freshness, `${label}: published as ${freshness}`);
    }

    // The 6-minute-old availability reading: unknown at datetime + 30 min, 24 minutes on.
    const six = simulate(t, SHORT, T0 - 6 * MINUTE, T0);
    six.clock.set(T0 + 24 * MINUTE - 1);
    t.equal(six.value(), 'stale');
    six.clock.set(T0 + 24 * MINUTE);
    t.equal(six.value(), 'unknown', 'unknown exactly 30 minutes after its datetime');
  });

  t.test('machine: hydrogen storage and pricing turn stale and never unknown', async (t) => {
    for (const [label, policy] of [
      ['hydrogen storage (stale after 5 min)', STORAGE],
      ['pricing (stale after 25 h)', PRICING],
    ] as const) {
      t.test(label, async (t) => {
        const m = simulate(t, policy, T0);
        m.clock.set(T0 + policy.staleAfterMs - 1);
        t.equal(m.value(), 'fresh', '1 ms before the deadline: fresh');
        m.clock.set(T0 + policy.staleAfterMs);
        t.equal(m.value(), 'staleForGood', 'at the deadline: stale, with no deadline left');
        t.equal(m.freshness(), 'stale');
        // Many days, an hour at a time, then a year at once.
        for (let hour = 1; hour <= 60 * 24; hour++) {
          m.clock.increment(HOUR);
          if (m.value() !== 'staleForGood') break;
        }
        m.clock.increment(365 * DAY);
        t.equal(m.freshness(), 'stale', '60 days and a year later: still stale');
        t.same(m.transitions, [['staleForGood', T0 + policy.staleAfterMs]], 'one transition, never unknown');

        // A signal still makes it fresh again.
        m.send(m.clock.now());
        t.equal(m.value(), 'fresh');
      });
    }
  });

  // ---------------------------------------------------------------------------------------------------
  // FreshnessRunner: the same transitions, with due times instead of timers
  // ---------------------------------------------------------------------------------------------------

  /** Delivers the step's one scheduled deadline (however late: the runner takes no time with it). */
  function deliver(runner: FreshnessRunner, step: Step): Step {
    if (step.schedule.length !== 1) throw new Error(`expected one scheduled deadline, got ${JSON.stringify(step.schedule)}`);
    return runner.deliver(step.snapshot, step.schedule[0]!.deadline);
  }

  const dues = (step: Step) => step.schedule.map((d) => [d.deadline, d.due]);

  t.test('runner: due times are datetime + deadline exactly, however late the timed event is delivered', async (t) => {
    const runner = new FreshnessRunner();
    // Handled 30 s after its datetime.
    const first = runner.start({ policy: SHORT, datetime: T0, now: T0 + 30 * SECOND });
    t.equal(first.snapshot.value, 'fresh');
    t.same(dues(first), [['stale', T0 + 5 * MINUTE]], 'stale due at datetime + 5 min, not now + 5 min');
    t.same(first.cancel, []);
    t.same(first.schedule[0], { deadline: 'stale', due: T0 + 5 * MINUTE }, 'the deadline by its own name, nothing of xstate');

    // Delivered 17 minutes late (the runner is never told when): unknown is still due at datetime + 30 min.
    const stale = deliver(runner, first);
    t.equal(stale.snapshot.value, 'stale');
    t.equal(stale.snapshot.context.enteredAt, T0 + 5 * MINUTE, 'entered at the deadline, not at delivery');
    t.same(dues(stale), [['unknown', T0 + 30 * MINUTE]]);
    t.same(stale.cancel, ['stale'], 'leaving fresh cancels its own (now delivered) event');

    const unknown = deliver(runner, stale);
    t.equal(unknown.snapshot.value, 'unknown');
    t.equal(unknown.snapshot.context.enteredAt, T0 + 30 * MINUTE);
    t.same(unknown.schedule, [], 'nothing left to wait for');
    t.same(unknown.cancel, ['unknown']);

    // Readings handled late start with what is left of their deadlines.
    const late = runner.start({ policy: SHORT, datetime: T0 - 4 * MINUTE, now: T0 });
    t.same(dues(late), [['stale', T0 + MINUTE]], '4 minutes old: stale due in 1 minute');
    t.same(dues(deliver(runner, late)), [['unknown', T0 + 26 * MINUTE]], 'then unknown 26 minutes after handling');
    const six = runner.start({ policy: SHORT, datetime: T0 - 6 * MINUTE, now: T0 });
    t.equal(six.snapshot.value, 'stale');
    t.same(dues(six), [['unknown', T0 + 24 * MINUTE]], '6 minutes old: stale, unknown due at datetime + 30 min');
    t.same(six.cancel, []);
    const old = runner.start({ policy: SHORT, datetime: T0 - 31 * MINUTE, now: T0 });
    t.equal(old.snapshot.value, 'unknown');
    t.same(old.schedule, []);

    for (const [label, policy] of [
      ['storage', STORAGE],
      ['pricing', PRICING],
    ] as const) {
      const s = runner.start({ policy, datetime: T0, now: T0 + 1 });
      t.same(dues(s), [['stale', T0 + policy.staleAfterMs]], `${label}: stale due at datetime + ${policy.staleAfterMs} ms`);
      const good = deliver(runner, s);
      t.equal(good.snapshot.value, 'staleForGood', `${label}: stale for good`);
      t.equal(freshnessOf(good.snapshot), 'stale');
      t.same(good.schedule, [], `${label}: never unknown, nothing scheduled`);
      t.same(good.cancel, ['stale']);
      const restored = runner.start({ policy, datetime: T0 - 400 * DAY, now: T0 });
      t.equal(restored.snapshot.value, 'staleForGood', `${label}: 400 days old, still only stale`);
      t.same(restored.schedule, []);
    }
  });

  t.test('runner: every deadline ahead of the handling time is due exactly where the policy puts it', async (t) => {
    const runner = new FreshnessRunner();
    await holds(
      t,
      fc.property(
        fc.integer({ min: -MINUTE, max: 40 * MINUTE }),
        fc.constantFrom(SHORT, STORAGE, PRICING, { staleAfterMs: 200, unknownAfterMs: 400 }),
        (age, policy) => {
          const now = T0 + age;
          let step = runner.start({ policy, datetime: T0, now });
          const seen: number[] = [];
          while (step.schedule.length > 0) {
            seen.push(step.schedule[0]!.due);
            step = deliver(runner, step);
          }
          const deadlines = [T0 + policy.staleAfterMs, ...(policy.unknownAfterMs === null ? [] : [T0 + policy.unknownAfterMs])];
          const expected = deadlines.filter((due) => due > now);
          if (JSON.stringify(seen) !== JSON.stringify(expected)) return false;
          return freshnessOf(step.snapshot) === (policy.unknownAfterMs === null ? 'stale' : 'unknown');
        },
      ),
      { numRuns: runs(500) },
      'dues match the deadlines for every age',
    );
  });

  t.test('runner: re-entry on a signal cancels the pending event and schedules from the new datetime', async (t) => {
    const runner = new FreshnessRunner();
    const fresh = runner.start({ policy: SHORT, datetime: T0, now: T0 });

    const again = runner.send(fresh.snapshot, { type: 'signal', datetime: T0 + 2 * MINUTE, now: T0 + 2 * MINUTE });
    t.equal(again.snapshot.value, 'fresh');
    t.same(again.cancel, ['stale'], 'fresh -> fresh: the old stale deadline is cancelled');
    t.same(dues(again), [['stale', T0 + 7 * MINUTE]], 'and the new one scheduled from the new datetime');

    const stale = deliver(runner, again);
    const fromStale = runner.send(stale.snapshot, { type: 'signal', datetime: T0 + 10 * MINUTE, now: T0 + 10 * MINUTE + 500 });
    t.equal(fromStale.snapshot.value, 'fresh');
    t.same(fromStale.cancel, ['unknown'], 'stale -> fresh: the unknown deadline is cancelled');
    t.same(dues(fromStale), [['stale', T0 + 15 * MINUTE]]);

    const unknown = runner.start({ policy: SHORT, datetime: T0 - HOUR, now: T0 });
    const fromUnknown = runner.send(unknown.snapshot, { type: 'signal', datetime: T0 - 4 * MINUTE, now: T0 });
    t.same(fromUnknown.cancel, [], 'unknown waits for nothing, so nothing to cancel');
    t.same(dues(fromUnknown), [['stale', T0 + MINUTE]]);

    const toUnknown = runner.send(fresh.snapshot, { type: 'signal', datetime: T0 - 31 * MINUTE, now: T0 });
    t.equal(toUnknown.snapshot.value, 'unknown', 'a signal already past both deadlines');
    t.same(toUnknown.cancel, ['stale']);
    t.same(toUnknown.schedule, []);

    const toStale = runner.send(fresh.snapshot, { type: 'signal', datetime: T0 - 6 * MINUTE, now: T0 });
    t.equal(toStale.snapshot.value, 'stale');
    t.same(toStale.cancel, ['stale']);
    t.same(dues(toStale), [['unknown', T0 + 24 * MINUTE]]);

    const good = deliver(runner, runner.start({ policy: STORAGE, datetime: T0, now: T0 }));
    const fromGood = runner.send(good.snapshot, { type: 'signal', datetime: T0 + HOUR, now: T0 + HOUR });
    t.same(fromGood.cancel, []);
    t.same(dues(fromGood), [['stale', T0 + HOUR + 5 * MINUTE]]);
  });

  t.test('runner: a delayed event of a state that was left changes nothing', async (t) => {
    const runner = new FreshnessRunner();
    const fresh = runner.start({ policy: SHORT, datetime: T0, now: T0 });
    const stale = deliver(runner, fresh);
    const pending = stale.schedule[0]!;
    t.equal(pending.deadline, 'unknown');
    // A signal arrives before the unknown deadline: the caller is told to cancel it ...
    const renewed = runner.send(stale.snapshot, { type: 'signal', datetime: T0 + 20 * MINUTE, now: T0 + 20 * MINUTE });
    t.ok(renewed.cancel.includes(pending.deadline), 'the pending unknown deadline is in the cancel list');
    t.notOk(renewed.schedule.some((d) => d.deadline === pending.deadline), 'and not scheduled again');
    // ... and if its timer fires anyway, the machine ignores it.
    const ignored = runner.deliver(renewed.snapshot, pending.deadline);
    t.equal(ignored.snapshot.value, 'fresh', 'the cancelled unknown event does not make the new reading unknown');
    t.equal(ignored.snapshot.context.datetime, T0 + 20 * MINUTE);
    t.same(ignored.schedule, [], 'and schedules nothing');
    t.same(ignored.cancel, []);
    // The snapshot given in is not changed by the step.
    t.equal(stale.snapshot.value, 'stale');
    t.equal(fresh.snapshot.value, 'fresh');
  });

  t.test('runner: many actors share one runner without seeing each other', async (t) => {
    const runner = new FreshnessRunner();
    const a = runner.start({ policy: SHORT, datetime: T0, now: T0 });
    const b = runner.start({ policy: PRICING, datetime: T0 - HOUR, now: T0 });
    const a2 = deliver(runner, a);
    t.same(dues(b), [['stale', T0 + 24 * HOUR]], "b's step holds only b's event");
    t.same(dues(a2), [['unknown', T0 + 30 * MINUTE]], "a's step holds only a's event");
    t.equal(b.snapshot.context.policy, PRICING);
    t.equal(a2.snapshot.context.policy, SHORT);
  });

  // ---------------------------------------------------------------------------------------------------
  // LiveStatus: one actor per station and category, their deadlines on one timer, the change stream
  // ---------------------------------------------------------------------------------------------------

  function layout(): ConfirmedLayout {
    return {
      nozzles: new Map([
        ['N1', { dispenser: 'D1', fuellingOptions: ['700ld'] }],
        ['N2', { dispenser: 'D1', fuellingOptions: ['350ld'] }],
      ]),
      dispensers: new Map([['D1', ['N1', 'N2']]]),
      storages: new Set(['S1']),
      products: new Set(['P700']),
    };
  }

  /** The station directory LiveStatus uses: stations with BERLA's layout, every category live; `reload` tells the listeners as the registry does. */
  type FakeRegistry = StationDirectory & { live: Set<string>; onReload(fn: (changed: ReadonlySet<string>) => void): void; reload(changed: string[]): void };
  function fakeRegistry(ids: string[]): FakeRegistry {
    const stations = new Map<string, StationEntry>(ids.map((hrsId) => [hrsId, { hrsId, name: `Station ${hrsId}`, heavyDuty: false, layout: layout() }]));
    const listeners: ((changed: ReadonlySet<string>) => void)[] = [];
    const live = new Set<string>(ids);
    const fake = {
      live,
      station: (hrsId: string) => stations.get(hrsId),
      stationIds: () => stations.keys(),
      hasLiveSource: (hrsId: string) => live.has(hrsId),
      onReload: (fn: (changed: ReadonlySet<string>) => void) => listeners.push(fn),
      reload: (changed: string[]) => listeners.forEach((fn) => fn(new Set(changed))),
    };
    return fake as unknown as FakeRegistry;
  }

  const PAYLOADS: Record<Category, Record<string, unknown>> = {
    availability: {
      station: { maintenance: false, limitedly_available: true },
      nozzles: [
        { id: 'N1', available: true },
        { id: 'N2', available: false },
      ],
      fuelling_options: { '700ld': true, '350ld': false },
    },
    usage: { nozzles: [{ id: 'N1', usage_status: 'in-use' }] },
    'hydrogen-storage': { storages: [{ id: 'S1', remaining_kg: '42.50', low_h2_storage: true }] },
    pricing: { products: [{ id: 'P700', gross_price: '13.850', net_price: null, currency: 'EUR' }] },
  };

  interface Harness {
    status: LiveStatus;
    registry: FakeRegistry;
    changes: (StatusChange & { at: number })[];
    /** The clock LiveStatus reads; the test moves it. Timers are real. */
    clock: { now: number };
    publish(category: Category, datetime: number, hrsId?: string): number;
  }

  /** LiveStatus with stale after 200 ms, unknown after 400 ms, pricing stale after 300 ms. */
  function harness(t: Test, options: { realTime?: boolean } = {}): Harness {
    const registry = fakeRegistry(['BERLA', 'HAMBG']);
    const clock = { now: T0 };
    const now = options.realTime ? Date.now : () => clock.now;
    const status = new LiveStatus(registry, pino({ level: 'silent' }), {
      staleAfterMs: 200,
      unknownAfterMs: 400,
      pricingStaleAfterMs: 300,
      now,
    });
    registry.onReload((changed) => status.stationsChanged(changed));
    t.teardown(() => status.close());
    const changes: Harness['changes'] = [];
    status.onChange((change) => changes.push({ ...change, at: now() }));
    return {
      status,
      registry,
      changes,
      clock,
      publish: (category, datetime, hrsId = 'BERLA') =>
        status.publish([{ hrsId, category, originatorId: 'mon-1', datetime, receivedAt: datetime + 5, payload: PAYLOADS[category] }]),
    };
  }

  const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

  /** Waits (real time) for the change stream to reach `count` events. */
  async function changesReach(h: Harness, count: number, ms = 2000): Promise<void> {
    const deadline = Date.now() + ms;
    while (h.changes.length < count) {
      if (Date.now() > deadline) throw new Error(`timed out waiting for change #${count}; have ${JSON.stringify(h.changes)}`);
      await sleep(5);
    }
  }

  const iso = (ms: number) => new Date(ms).toISOString();
  const availabilitySection = (datetime: number, freshness: 'fresh' | 'stale' = 'fresh') => ({
    datetime: iso(datetime),
    received_datetime: iso(datetime + 5),
    freshness,
    station: { maintenance: false, limitedly_available: true },
    nozzles: [
      { id: 'N1', available: true },
      { id: 'N2', available: false },
    ],
  });

  /** What a change says of the reading held: its times (received 5 ms after measurement here) and originator. */
  const reading = (datetime: number) => ({ datetime, receivedAt: datetime + 5, originatorId: 'mon-1' });

  t.test('LiveStatus: stale and unknown exactly at the deadlines, each on the change stream', async (t) => {
    const h = harness(t);
    t.equal(h.publish('availability', T0), 1);
    t.same(h.changes, [
      { hrsId: 'BERLA', category: 'availability', cause: 'signal', previous: null, freshness: 'fresh', section: availabilitySection(T0), ...reading(T0), at: T0 },
    ]);
    t.equal(h.status.size, 1);

    // The timer (200 ms of real time) fires, but the clock has not reached the deadline: nothing happens.
    await sleep(300);
    t.equal(h.status.freshness('BERLA', 'availability'), 'fresh', 'the clock decides, not the timer');
    h.clock.now = T0 + 199;
    await sleep(250);
    t.equal(h.status.freshness('BERLA', 'availability'), 'fresh', '1 ms before the deadline: fresh');
    t.equal(h.changes.length, 1);

    h.clock.now = T0 + 200;
    await changesReach(h, 2);
    t.same(h.changes[1], {
      hrsId: 'BERLA',
      category: 'availability',
      cause: 'freshness',
      previous: 'fresh',
      freshness: 'stale',
      section: availabilitySection(T0, 'stale'),
      ...reading(T0),
      at: T0 + 200,
    }, 'stale is still published, and says so');
    t.equal(h.status.freshness('BERLA', 'availability'), 'stale');
    t.same(JSON.parse(h.status.stationJson('BERLA')!).availability, availabilitySection(T0, 'stale'));

    h.clock.now = T0 + 399;
    await sleep(300);
    t.equal(h.status.freshness('BERLA', 'availability'), 'stale', '1 ms before the unknown deadline: stale');
    h.clock.now = T0 + 400;
    await changesReach(h, 3);
    t.same(h.changes[2], {
      hrsId: 'BERLA',
      category: 'availability',
      cause: 'freshness',
      previous: 'stale',
      freshness: 'unknown',
      section: null,
      ...reading(T0),
      at: T0 + 400,
    }, 'unknown: the section is withdrawn');
    t.same(JSON.parse(h.status.stationJson('BERLA')!), { hrs_id: 'BERLA', availability: null, usage: null, hydrogen_storage: null, pricing: null });

    // A new reading, measured 10 ms before it is handled: fresh again, deadlines from its datetime.
    const next = T0 + 1000;
    h.clock.now = next + 10;
    t.equal(h.publish('availability', next), 1);
    t.same(h.changes[3], {
      hrsId: 'BERLA',
      category: 'availability',
      cause: 'signal',
      previous: 'unknown',
      freshness: 'fresh',
      section: availabilitySection(next),
      ...reading(next),
      at: next + 10,
    });
    t.same(JSON.parse(h.status.stationJson('BERLA')!).availability, availabilitySection(next), 'published again');
    h.clock.now = next + 199;
    await sleep(250);
    t.equal(h.status.freshness('BERLA', 'availability'), 'fresh');
    h.clock.now = next + 200;
    await changesReach(h, 5);
    t.match(h.changes[4], { cause: 'freshness', previous: 'fresh', freshness: 'stale', at: next + 200 });
    t.equal(h.changes.length, 5, 'no other change');
  });

  t.test('LiveStatus: with the real clock, no transition comes before its deadline', async (t) => {
    const h = harness(t, { realTime: true });
    const datetime = Date.now();
    h.publish('availability', datetime);
    h.publish('usage', datetime - 250);
    t.equal(h.status.freshness('BERLA', 'usage'), 'stale', 'a reading 250 ms old starts stale');
    await changesReach(h, 5, 3000);
    const freshness = h.changes.filter((c) => c.cause === 'freshness');
    const at = (category: Category, to: string) => freshness.find((c) => c.category === category && c.freshness === to)?.at;
    const usageUnknown = at('usage', 'unknown');
    const stale = at('availability', 'stale');
    const unknown = at('availability', 'unknown');
    t.ok(usageUnknown !== undefined && usageUnknown >= datetime - 250 + 400, `usage unknown at +${usageUnknown! - (datetime - 250)} ms (deadline 400)`);
    t.ok(stale !== undefined && stale >= datetime + 200, `stale at +${stale! - datetime} ms (deadline 200)`);
    t.ok(unknown !== undefined && unknown >= datetime + 400, `unknown at +${unknown! - datetime} ms (deadline 400)`);
    t.ok(unknown! - datetime < 2400, 'and not seconds late');
    t.same(
      h.changes.map((c) => [c.category, c.cause, c.previous, c.freshness, c.section === null]),
      [
        ['availability', 'signal', null, 'fresh', false],
        ['usage', 'signal', null, 'stale', false],
        ['usage', 'freshness', 'stale', 'unknown', true],
        ['availability', 'freshness', 'fresh', 'stale', false],
        ['availability', 'freshness', 'stale', 'unknown', true],
      ],
    );
  });

  t.test('LiveStatus: readings past a deadline start stale or unknown', async (t) => {
    const h = harness(t);
    h.publish('availability', T0 - 450);
    h.publish('usage', T0 - 250);
    h.publish('hydrogen-storage', T0 - 10 * DAY);
    h.publish('pricing', T0 - 301);
    t.same(
      h.changes.map((c) => [c.category, c.cause, c.previous, c.freshness, c.section === null]),
      [
        ['availability', 'signal', null, 'unknown', true],
        ['usage', 'signal', null, 'stale', false],
        ['hydrogen-storage', 'signal', null, 'stale', false],
        ['pricing', 'signal', null, 'stale', false],
      ],
    );
    const station = JSON.parse(h.status.stationJson('BERLA')!);
    t.equal(station.availability, null, 'unknown from the start: not published');
    t.same(station.usage, { datetime: iso(T0 - 250), received_datetime: iso(T0 - 245), freshness: 'stale', nozzles: [{ id: 'N1', usage_status: 'in-use' }] });
    t.same(station.hydrogen_storage.storages, [{ id: 'S1', low_h2_storage: true }]);
    t.same(station.pricing.products, [{ id: 'P700', gross_price: '13.850', net_price: null, currency: 'EUR' }]);

    // The usage reading turns unknown at its datetime + 400 ms: 150 ms after it was handled.
    h.clock.now = T0 + 149;
    await sleep(200);
    t.equal(h.status.freshness('BERLA', 'usage'), 'stale');
    h.clock.now = T0 + 150;
    await changesReach(h, 5);
    t.match(h.changes[4], { category: 'usage', cause: 'freshness', previous: 'stale', freshness: 'unknown', section: null, at: T0 + 150 });
  });

  t.test('LiveStatus: hydrogen storage and pricing turn stale and never unknown', async (t) => {
    const h = harness(t);
    h.publish('hydrogen-storage', T0);
    h.publish('pricing', T0);
    h.clock.now = T0 + 200;
    await changesReach(h, 3);
    t.match(h.changes[2], { category: 'hydrogen-storage', cause: 'freshness', previous: 'fresh', freshness: 'stale', at: T0 + 200 });
    t.not(h.changes[2]!.section, null, 'stale storage is still published');
    t.equal(h.status.freshness('BERLA', 'pricing'), 'fresh', 'pricing has 300 ms');
    h.clock.now = T0 + 300;
    await changesReach(h, 4);
    t.match(h.changes[3], { category: 'pricing', cause: 'freshness', previous: 'fresh', freshness: 'stale', at: T0 + 300 });

    h.clock.now = T0 + 60 * DAY;
    await sleep(300);
    t.equal(h.changes.length, 4, 'sixty days on: no further change');
    t.equal(h.status.freshness('BERLA', 'hydrogen-storage'), 'stale');
    t.equal(h.status.freshness('BERLA', 'pricing'), 'stale');
    const station = JSON.parse(h.status.stationJson('BERLA')!);
    t.not(station.hydrogen_storage, null);
    t.not(station.pricing, null);
  });

  t.test('LiveStatus: a newer reading restarts the deadlines, an older one is ignored', async (t) => {
    const h = harness(t);
    h.publish('availability', T0);
    h.clock.now = T0 + 150;
    t.equal(h.publish('availability', T0 + 150), 1);
    t.match(h.changes[1], { cause: 'signal', previous: 'fresh', freshness: 'fresh', section: availabilitySection(T0 + 150) });
    h.clock.now = T0 + 200;
    await sleep(300);
    t.equal(h.status.freshness('BERLA', 'availability'), 'fresh', "the first reading's deadline no longer applies");
    t.equal(h.changes.length, 2);

    t.equal(h.publish('availability', T0 + 100), 0, 'a reading measured earlier is not applied');
    t.equal(h.changes.length, 2, 'and not announced');
    t.same(JSON.parse(h.status.stationJson('BERLA')!).availability, availabilitySection(T0 + 150));

    t.equal(h.publish('availability', T0 + 150), 1, 'the same datetime again is applied (and announced)');
    t.match(h.changes[2], { cause: 'signal', previous: 'fresh', freshness: 'fresh' });

    h.clock.now = T0 + 350;
    await changesReach(h, 4);
    t.match(h.changes[3], { cause: 'freshness', previous: 'fresh', freshness: 'stale', at: T0 + 350 });
  });

  t.test('LiveStatus: one actor per station and category, each with its own deadline', async (t) => {
    const h = harness(t);
    h.publish('availability', T0, 'BERLA');
    h.publish('availability', T0 + 100, 'HAMBG');
    h.publish('usage', T0 + 50, 'BERLA');
    t.equal(h.publish('availability', T0, 'NOPE1'), 0, 'a station not in the registry gets no actor');
    t.equal(h.status.size, 3);
    h.clock.now = T0 + 250;
    await changesReach(h, 5);
    t.same(
      h.changes.slice(3).map((c) => [c.hrsId, c.category, c.freshness]).sort(),
      [
        ['BERLA', 'availability', 'stale'],
        ['BERLA', 'usage', 'stale'],
      ],
    );
    t.equal(h.status.freshness('HAMBG', 'availability'), 'fresh', "HAMBG's reading is 100 ms younger");
    h.clock.now = T0 + 300;
    await changesReach(h, 6);
    t.match(h.changes[5], { hrsId: 'HAMBG', category: 'availability', freshness: 'stale', at: T0 + 300 });
    t.same(
      JSON.parse(h.status.allJson()).stations.map((s: { hrs_id: string }) => s.hrs_id),
      ['BERLA', 'HAMBG'],
    );
  });

  t.test('LiveStatus: without a live source nothing is published, freshness still runs', async (t) => {
    const h = harness(t);
    h.registry.live.delete('HAMBG');
    h.publish('availability', T0, 'HAMBG');
    t.match(h.changes[0], { hrsId: 'HAMBG', cause: 'signal', freshness: 'fresh', section: null });
    h.registry.live.add('HAMBG');
    h.registry.reload(['HAMBG']);
    t.match(h.changes[1], { hrsId: 'HAMBG', cause: 'registry', previous: 'fresh', freshness: 'fresh', section: availabilitySection(T0) });
    h.clock.now = T0 + 200;
    await changesReach(h, 3);
    t.match(h.changes[2], { hrsId: 'HAMBG', cause: 'freshness', freshness: 'stale' });
  });

  t.test('LiveStatus: a registry reload that changes nothing of a section is no news', async (t) => {
    const registry = fakeRegistry(['BERLA']);
    const status = new LiveStatus(registry, pino({ level: 'silent' }), { staleAfterMs: 60_000, unknownAfterMs: 120_000, pricingStaleAfterMs: 60_000 });
    registry.onReload((changed) => status.stationsChanged(changed));
    t.teardown(() => status.close());
    const now = Date.now();
    // Published while nobody listens: nothing serialised yet.
    status.publish([{ hrsId: 'BERLA', category: 'pricing', originatorId: 'mon-1', datetime: now, receivedAt: now, payload: PAYLOADS.pricing }]);
    const changes: StatusChange[] = [];
    status.onChange((change) => changes.push(change));
    registry.reload(['BERLA']);
    t.same(changes, [], 'unchanged and unseen: no event');
    status.stationJson('BERLA');
    registry.reload(['BERLA']);
    t.same(changes, [], 'unchanged and seen: no event');
    (registry.station('BERLA')!.layout!.products as Set<string>).delete('P700');
    registry.reload(['BERLA']);
    t.match(changes, [{ hrsId: 'BERLA', category: 'pricing', cause: 'registry', previous: 'fresh', freshness: 'fresh', section: null }], 'a removed product is news');
  });

  t.test('LiveStatus: close() stops every timer', async (t) => {
    const h = harness(t);
    h.publish('availability', T0);
    h.status.close();
    h.clock.now = T0 + HOUR;
    await sleep(300);
    t.equal(h.changes.length, 1, 'no transition after close');
    t.equal(h.status.freshness('BERLA', 'availability'), 'fresh');
    t.equal(h.publish('availability', T0 + HOUR), 0, 'and no reading applied');
  });

  t.test('LiveStatus: restore re-arms deadlines from the stored datetime', async (t) => {
    const { sql } = await freshDatabase(t);
    await sql`INSERT INTO operators (id, name) VALUES ('h2-demo', 'H2 Demo')`;
    await sql`INSERT INTO stations (hrs_id, operator_id, name) VALUES ('BERLA', 'h2-demo', 'Berlin'), ('HAMBG', 'h2-demo', 'Hamburg'), ('GONEX', 'h2-demo', 'Gone')`;
    await sql`INSERT INTO originators (id, name) VALUES ('mon-1', 'Monitoring One')`;
    const rows: [string, Category, number][] = [
      ['BERLA', 'availability', T0 - 450], // past unknown
      ['BERLA', 'usage', T0 - 250], // stale, unknown in 150 ms
      ['BERLA', 'hydrogen-storage', T0 - 10 * DAY], // stale for good
      ['BERLA', 'pricing', T0 - 100], // fresh, stale in 200 ms
      ['HAMBG', 'availability', T0 - 20], // fresh, stale in 180 ms
      ['GONEX', 'availability', T0], // not in the registry
    ];
    for (const [hrsId, category, measured] of rows) {
      await sql`
      INSERT INTO published_signals (hrs_id, category, originator_id, measured_at, received_at, payload)
      VALUES (${hrsId}, ${category}, 'mon-1', ${new Date(measured)}, ${new Date(measured + 5)}, ${sql.json(PAYLOADS[category] as never)})`;
    }
    const h = harness(t);
    // Every reading as the restore read it: their payloads are parsed when first read, not at the restore.
    const read: StoredSignal[] = [];
    async function* kept(batches: AsyncIterable<PublishedSignal[]>) {
      for await (const batch of batches) {
        read.push(...(batch as StoredSignal[]));
        yield batch;
      }
    }
    t.equal(await h.status.restore(kept(publishedSignalBatches(sql, 2))), 5, 'every stored reading of a registered station, in batches of 2');
    t.equal(h.changes.length, 0, 'restoring announces nothing');
    t.equal(h.status.size, 5);
    t.equal(read.length, 6, 'the stored readings came as stored signals');
    t.ok(read.every((signal) => signal instanceof StoredSignal && !signal.reading.parsed), 'no payload was parsed by the restore');
    const hamburg = read.find((signal) => signal.hrsId === 'HAMBG')!;
    t.same(hamburg.payload, PAYLOADS.availability, 'a payload read is the stored one');
    t.ok(hamburg.reading.parsed);
    t.equal(h.status.freshness('BERLA', 'availability'), 'unknown');
    t.equal(h.status.freshness('BERLA', 'usage'), 'stale');
    t.equal(h.status.freshness('BERLA', 'hydrogen-storage'), 'stale');
    t.equal(h.status.freshness('BERLA', 'pricing'), 'fresh');
    t.equal(h.status.freshness('HAMBG', 'availability'), 'fresh');
    t.equal(h.status.freshness('GONEX', 'availability'), null);
    const berla = JSON.parse(h.status.stationJson('BERLA')!);
    t.equal(berla.availability, null);
    t.equal(berla.usage.datetime, iso(T0 - 250), 'the stored datetime, to the millisecond');
    t.same(JSON.parse(h.status.stationJson('HAMBG')!).availability, availabilitySection(T0 - 20));

    h.clock.now = T0 + 149;
    await sleep(250);
    t.equal(h.changes.length, 0, 'nothing is due before T0 + 150');
    h.clock.now = T0 + 150;
    await changesReach(h, 1);
    t.match(h.changes[0], { hrsId: 'BERLA', category: 'usage', cause: 'freshness', previous: 'stale', freshness: 'unknown', section: null, at: T0 + 150 });
    h.clock.now = T0 + 180;
    await changesReach(h, 2);
    t.match(h.changes[1], { hrsId: 'HAMBG', category: 'availability', previous: 'fresh', freshness: 'stale', at: T0 + 180 });
    h.clock.now = T0 + 200;
    await changesReach(h, 3);
    t.match(h.changes[2], { hrsId: 'BERLA', category: 'pricing', previous: 'fresh', freshness: 'stale', at: T0 + 200 });
    h.clock.now = T0 + DAY;
    await sleep(250);
    t.same(
      h.changes.slice(3).map((c) => [c.hrsId, c.category, c.freshness]),
      [['HAMBG', 'availability', 'unknown']],
      'then only HAMBG turns unknown',
    );
    await sql`DELETE FROM published_signals`;
  });

  t.test('LiveStatus: many deadlines on one timer, moved by new readings, none lost', async (t) => {
    const ids = Array.from({ length: 300 }, (_, i) => `S${String(i).padStart(4, '0')}`);
    const registry = fakeRegistry(ids);
    const clock = { now: T0 };
    const status = new LiveStatus(registry, pino({ level: 'silent' }), {
      staleAfterMs: 200,
      unknownAfterMs: 400,
      pricingStaleAfterMs: 300,
      now: () => clock.now,
    });
    registry.onReload((changed) => status.stationsChanged(changed));
    t.teardown(() => status.close());
    const stale = new Set<string>();
    status.onChange((change) => {
      if (change.freshness === 'stale') stale.add(change.hrsId);
    });
    // Readings of ages spread over 0-150 ms, published in a shuffled order.
    const order = ids.map((id, i) => ({ id, age: (i * 37) % 151 })).sort((a, b) => ((a.age * 7919) % 97) - ((b.age * 7919) % 97));
    for (const { id, age } of order) {
      status.publish([{ hrsId: id, category: 'availability', originatorId: 'mon-1', datetime: T0 - age, receivedAt: T0, payload: PAYLOADS.availability }]);
    }
    // Every third station reports again: its deadline moves 150 ms later.
    const renewed = ids.filter((_, i) => i % 3 === 0);
    clock.now = T0 + 100;
    for (const id of renewed) {
      status.publish([{ hrsId: id, category: 'availability', originatorId: 'mon-1', datetime: T0 + 100, receivedAt: T0 + 100, payload: PAYLOADS.availability }]);
    }
    clock.now = T0 + 250;
    await until('the stations not renewed to turn stale', () => (stale.size >= ids.length - renewed.length ? true : undefined), 3000, 10);
    await sleep(50);
    t.equal(stale.size, ids.length - renewed.length, 'exactly the stations whose deadline passed');
    t.ok(renewed.every((id) => status.freshness(id, 'availability') === 'fresh'), 'moved deadlines did not fire early');
    clock.now = T0 + 300;
    await until('every station to be stale', () => (stale.size === ids.length ? true : undefined), 3000, 10);
    t.same(renewed.filter((id) => status.freshness(id, 'availability') !== 'stale'), [], 'and the moved ones at their new deadline');
  });
});

t.test('status', async (t) => {
  /** Tests that poll the status API many times a second raise the export v2 burst limit. */
  const POLLING = { EXPORT_V2_RATE_LIMIT_MINUTE: '1000000' };

  const ago = (seconds: number) => new Date(Date.now() - seconds * 1000).toISOString();

  /** BERLA live for all four types with mon-1; HAMBG (draft layout only) has no signals. */
  function fixture() {
    const f = baseFixture();
    f.assignments = berlaAssignments();
    return f;
  }

  type Fixture = ReturnType<typeof fixture>;
  type Layout = { dispensers: { nozzles: { external_id: string }[] }[]; products: { external_id: string }[] };
  const layoutOf = (f: Fixture) => (f.stations[0] as unknown as { layout: Layout }).layout;


  async function status(p: TestPlatform, hrsId = 'BERLA'): Promise<Record<string, any>> {
    const res = await get(`${p.url}/v2/hrs/${hrsId}/status`, TOKENS.export_v2);
    if (res.status !== 200) throw new Error(`status of ${hrsId} answered ${res.status}: ${await res.text()}`);
    return (await res.json()) as Record<string, any>;
  }

  const availability = (datetime = ago(5), nozzles: unknown[] = [{ id: 'N1', available: true }, { id: 'N2', available: false }]) => ({
    hrs: 'BERLA',
    datetime,
    nozzles,
    station: { maintenance: false, limitedly_available: true },
  });

  /** Posts one reading of every category to BERLA. */
  async function postAll(p: TestPlatform, datetime = ago(5)): Promise<void> {
    await post(p, 'availability', [availability(datetime)]);
    await post(p, 'usage', [{ hrs: 'BERLA', datetime, nozzles: [{ dispenser_id: 'D1', usage_status: 'in-use' }] }]);
    await post(p, 'hydrogen-storage', [{ hrs: 'BERLA', datetime, storages: [{ id: 'S1', remaining_kg: '42.50' }] }]);
    await post(p, 'pricing', [
      {
        hrs: 'BERLA',
        datetime,
        products: [
          { id: 'P700', gross_price: '13.850', currency: 'EUR' },
          { id: 'P350', gross_price: '11.5', net_price: '9.664' },
        ],
      },
    ]);
  }

  const iso = (text: string) => new Date(text).toISOString();

  t.test('the status object, section by section, exactly as the spec lists it', async (t) => {
    const p = await startTestPlatform(t, { fixture: fixture() });
    const before = Date.now();
    const datetime = new Date(Date.now() - 7000).toISOString().replace('Z', '+00:00');
    await postAll(p, datetime);
    const res = await get(`${p.url}/v2/hrs/BERLA/status`, TOKENS.export_v2);
    t.equal(res.status, 200);
    t.equal(res.headers.get('content-type'), 'application/json; charset=utf-8');
    t.equal(res.headers.get('last-modified'), null, 'status is not conditional');
    const text = await res.text();
    t.notMatch(text, /remaining/, 'the hydrogen inventory never leaves the platform');
    const body = JSON.parse(text);
    t.same(Object.keys(body), ['hrs_id', 'fuelling_options', 'availability', 'usage', 'hydrogen_storage', 'pricing'], 'the verdict per option, then the four sections');
    const received = body.availability.received_datetime as string;
    t.match(received, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/, 'ISO 8601 with its offset');
    t.ok(Date.parse(received) >= before - 1000 && Date.parse(received) <= Date.now(), 'received when posted');
    t.same(body, {
      hrs_id: 'BERLA',
      // The station says it is limitedly available: that decides for every option (rule 4 of the summary).
      fuelling_options: [
        { fuelling_option: '700ld', status: 'LIMITEDLY_AVAILABLE', reason: 'limited', datetime: iso(datetime), freshness: 'fresh' },
        { fuelling_option: '350ld', status: 'LIMITEDLY_AVAILABLE', reason: 'limited', datetime: iso(datetime), freshness: 'fresh' },
      ],
      availability: {
        datetime: iso(datetime),
        received_datetime: received,
        freshness: 'fresh',
        station: { maintenance: false, limitedly_available: true },
        nozzles: [
          { id: 'N1', available: true },
          { id: 'N2', available: false },
        ],
      },
      usage: {
        datetime: iso(datetime),
        received_datetime: body.usage.received_datetime,
        freshness: 'fresh',
        nozzles: [
          { id: 'N1', usage_status: 'in-use' },
          { id: 'N2', usage_status: 'in-use' },
        ],
      },
      hydrogen_storage: {
        datetime: iso(datetime),
        received_datetime: body.hydrogen_storage.received_datetime,
        freshness: 'fresh',
        storages: [{ id: 'S1', low_h2_storage: true }],
      },
      pricing: {
        datetime: iso(datetime),
        received_datetime: body.pricing.received_datetime,
        freshness: 'fresh',
        products: [
          { id: 'P700', gross_price: '13.850', net_price: null, currency: 'EUR' },
          { id: 'P350', gross_price: '11.500', net_price: '9.664', currency: 'EUR' },
        ],
      },
    });

    const all = await get(`${p.url}/v2/hrs/status`, TOKENS.export_v2);
    t.equal(all.status, 200);
    const list = (await all.json()) as { stations: Record<string, unknown>[] };
    t.same(
      list.stations.map((s) => s.hrs_id),
      ['BERLA', 'HAMBG'],
      'every registered station, sorted by hrs_id',
    );
    t.same(list.stations[0], body, 'the same object as the single-station endpoint');
    t.same(
      list.stations[1],
      { hrs_id: 'HAMBG', fuelling_options: [], availability: null, usage: null, hydrogen_storage: null, pricing: null },
      'no live signal: all null (HAMBG provides no option yet: its layout is a draft)',
    );
  });

  t.test('authentication, unknown stations and the problem body', async (t) => {
    const p = await startTestPlatform(t, { fixture: fixture() });
    const missing = await get(`${p.url}/v2/hrs/NOPE1/status`, TOKENS.export_v2);
    t.equal(missing.status, 404);
    t.equal(missing.headers.get('content-type'), 'application/problem+json; charset=utf-8');
    t.match(await missing.json(), { status: 404, title: String, detail: 'No station with hrs_id "NOPE1".' });
    for (const token of [undefined, TOKENS.import_v2, TOKENS.export_v1]) {
      t.equal((await get(`${p.url}/v2/hrs/BERLA/status`, token)).status, 401, `token ${token ?? 'none'}`);
      t.equal((await get(`${p.url}/v2/hrs/status`, token)).status, 401);
    }
  });

  t.test('one verdict on every face: a station outside its hours is CLOSED everywhere at the same moment', async (t) => {
    /**
     * BERLA reports 700ld available and 350ld unavailable, open around the clock; then its operator
     * gives it hours that are closed now. The export v1.1 summary, export v2's status (one station and
     * the list), the status stream, the admins' feed (the dashboard's state and cells), the public map's
     * feed, the webhooks' change log and the demo's minute line then all say CLOSED, read together.
     */
    /** The portal's registry, BERLA live for every category and on the map. */
    const registry = (hours: Record<string, string> = {}) => {
      const f = portalFixture();
      f.assignments = berlaAssignments();
      Object.assign(f.stations[0]!, { details: { city: 'Berlin', coordinates: { lat: 52.3667, lon: 13.5033 } }, ...hours });
      return f;
    };
    const f = registry();
    const env = { ...POLLING, MAP_RATE_LIMIT: '100000', WEBHOOK_SECRET_KEY: randomBytes(32).toString('hex'), WEBHOOK_ALLOW_LOOPBACK: 'false' };
    const first = await startTestPlatform(t, { fixture: f, env });
    await grantPortalRoles(first);
    const made = await (await signedIn(first, ACCOUNTS.none)).call('POST', '/portal/v1/webhooks', { url: 'https://93.184.215.14/hooks/hrs', kinds: ['fuelling_options'] });
    t.equal(made.status, 201, 'a subscription to fuelling-option changes');
    // An instance started now records those changes from its start (the first one reads the subscriptions every few seconds).
    const p = await startTestPlatform(t, { sameStoreAs: first });
    const measured = ago(5);
    await post(p, 'availability', [availability(measured)]);

    const stream = await WsClient.connect(`${p.url.replace('http:', 'ws:')}/v2/hrs/status/stream`, { Authorization: `Bearer ${TOKENS.export_v2}` });
    t.teardown(() => stream.close());
    t.equal((await stream.next()).type, 'authenticated');
    stream.send({ type: 'subscribe', hrs_ids: ['BERLA'] });
    t.equal((await stream.next()).type, 'subscribed');
    t.equal((await stream.next()).type, 'snapshot');
    const admin = await WsClient.connect(`${p.url.replace('http:', 'ws:')}/admin/v1/live`, { Authorization: `Bearer ${ADMIN_TOKEN}` });
    t.teardown(() => admin.close());
    const snapshot = await admin.until((m) => m.type === 'snapshot');
    const row = (message: any) => message.stations?.find((s: { hrs_id: string }) => s.hrs_id === 'BERLA') ?? message.station;
    t.match(row(snapshot).verdict, { status: 'LIMITEDLY_AVAILABLE', reason: 'limited', freshness: 'fresh' }, 'open: the station flag decides (limitedly available)');

    // Closed now: one hour a day, twelve hours from now (UTC).
    const hour = (new Date().getUTCHours() + 12) % 24;
    const two = (n: number) => String(n).padStart(2, '0');
    await p.load(registry({ opening_hours: `Mo-Su ${two(hour)}:00-${two(hour)}:59`, time_zone: 'UTC' }));

    const CLOSED = (option: string) => ({ status: 'CLOSED', reason: 'outside_opening_hours', fuelling_option: option });
    // The faces that change by push or by a worker, once each has heard of it.
    const streamed = await stream.until((m) => m.type === 'status' && m.station.fuelling_options[0]?.status === 'CLOSED');
    const adminRow = row(await admin.until((m) => m.type === 'station' && m.station.hrs_id === 'BERLA' && m.station.verdict?.status === 'CLOSED'));
    const mapFeature = await until('the map feed saying CLOSED', async () => {
      const res = await fetch(`${p.url}/map/v1/stations.geojson`);
      if (res.status !== 200) throw new Error(`the map feed answered ${res.status}`);
      const feed = (await res.json()) as { features: { id: string; properties: Record<string, any> }[] };
      const feature = feed.features.find((x) => x.id === 'BERLA');
      return feature?.properties.fuelling_options[0]?.status === 'CLOSED' ? feature : undefined;
    });
    const webhookRows = await until('the change log\'s option rows', async () => {
      const rows = await p.sql<{ entity: string; payload: Record<string, unknown> }[]>`SELECT entity, payload FROM change_log WHERE topic = 'option' ORDER BY seq`;
      return rows.filter((r) => r.payload.status === 'CLOSED').length === 2 ? rows : undefined;
    });

    // The rest, read together.
    const [v11, v2One, v2List] = await Promise.all([
      get(`${p.url}/v1.1/hrs/BERLA/status`, TOKENS.export_v1).then((r) => r.json() as Promise<any>),
      status(p),
      get(`${p.url}/v2/hrs/status`, TOKENS.export_v2).then((r) => r.json() as Promise<any>),
    ]);
    const ids = ['BERLA', 'HAMBG', 'KIELX'];
    const line = summaryLine(new Date(), 60, { accepted: 1, refused: 0 }, ids.map((id) => stationStateOf(p.parts.verdicts.of(id))));

    t.match(v11.fuelling_options, [{ fuel_type: '700ld', status: 'CLOSED', reason: 'outside_opening_hours' }, { fuel_type: '350ld', status: 'CLOSED' }], 'export v1.1');
    t.match(v2One.fuelling_options, [CLOSED('700ld'), CLOSED('350ld')], 'export v2, one station');
    t.same(v2List.stations.find((s: { hrs_id: string }) => s.hrs_id === 'BERLA'), v2One, 'export v2, the list: the same object');
    t.same(streamed.station, v2One, 'the status stream: the same object');
    t.match(adminRow.verdict, { status: 'CLOSED', reason: 'outside_opening_hours', fuelling_options: [CLOSED('700ld'), CLOSED('350ld')] }, 'the admins\' feed');
    t.equal(stationStateOf(adminRow.verdict), 'closed', 'the dashboard\'s state and chip: closed');
    t.match(mapFeature.properties, { open_now: false, fuelling_options: [CLOSED('700ld'), CLOSED('350ld')] }, 'the public map');
    t.match(
      webhookRows.filter((r) => r.payload.status === 'CLOSED'),
      [{ entity: 'BERLA/700ld', payload: { reason: 'outside_opening_hours' } }, { entity: 'BERLA/350ld', payload: { reason: 'outside_opening_hours' } }],
      'webhooks: a fuelling_option.changed to CLOSED per option',
    );
    t.match(line, / · 3 stations: .*1 closed/, `the demo's minute line (${line})`);
    t.equal(v2One.availability.nozzles[0].available, true, 'the reading itself still says N1 is available: only the verdict closes');
    for (const verdict of [adminRow.verdict, ...v2One.fuelling_options]) t.equal(verdict.datetime, iso(measured), 'each says when the reading it weighed was measured');
  });

  t.test('a snapshot replaces the previous one; late readings never overwrite newer ones', async (t) => {
    const p = await startTestPlatform(t, { fixture: fixture() });
    await post(p, 'availability', [availability(ago(20))]);
    await post(p, 'availability', [availability(ago(10), [{ id: 'N2', available: true }])]);
    let s = await status(p);
    t.same(s.availability.nozzles, [{ id: 'N2', available: true }], 'N1 was left out: it has no reported state');
    const newest = s.availability.datetime;
    await post(p, 'availability', [availability(ago(60), [{ id: 'N1', available: false }])]);
    s = await status(p);
    t.equal(s.availability.datetime, newest, 'a reading measured earlier is stored but does not replace the published one');
    t.same(s.availability.nozzles, [{ id: 'N2', available: true }]);
    const [row] = await p.sql<{ measured_at: Date }[]>`SELECT measured_at FROM published_signals WHERE hrs_id = 'BERLA' AND category = 'availability'`;
    t.equal(row!.measured_at.toISOString(), newest, 'memory and database agree');
  });

  t.test('testing and unassigned signals are never published', async (t) => {
    const f = fixture();
    f.assignments = [
      { originator: 'mon-1', hrs_id: 'BERLA', signal_type: 'availability', state: 'live' },
      { originator: 'mon-1', hrs_id: 'BERLA', signal_type: 'pricing', state: 'testing' },
    ];
    const p = await startTestPlatform(t, { fixture: f });
    await postAll(p);
    const s = await status(p);
    t.not(s.availability, null, 'live: published');
    t.equal(s.pricing, null, 'testing: not published');
    t.equal(s.usage, null, 'not assigned: not published');
    t.equal(s.hydrogen_storage, null);
    t.equal(p.parts.status.freshness('BERLA', 'pricing'), null, 'no actor for what is not published');
  });

  t.test('registry changes reach the published status at once, on every instance', async (t) => {
    const a = await startTestPlatform(t, { fixture: fixture(), env: POLLING });
    const b = await startTestPlatform(t, { sameStoreAs: a });
    await postAll(a);
    await until('instance B to see the pricing', async () => ((await status(b)).pricing ? true : undefined));

    const f = fixture();
    layoutOf(f).products = layoutOf(f).products.filter((product) => product.external_id !== 'P350');
    layoutOf(f).dispensers[0]!.nozzles = layoutOf(f).dispensers[0]!.nozzles.filter((n) => n.external_id !== 'N2');
    (layoutOf(f).products[0] as unknown as { nozzle_external_ids: string[] }).nozzle_external_ids = ['N1'];
    (f.stations[0] as { v1_fuel_types?: string[] }).v1_fuel_types = ['700car']; // the 350 bar option went with N2
    await a.load(f);
    await a.parts.bus.publish({ type: 'registry', hrs_ids: ['BERLA'], tokens: false });
    for (const [name, p] of [['A', a], ['B', b]] as const) {
      const s = await until(`instance ${name} to drop P350`, async () => {
        const current = await status(p);
        return current.pricing?.products.length === 1 ? current : undefined;
      });
      t.same(s.pricing.products.map((x: { id: string }) => x.id), ['P700'], `${name}: a removed product's price stops at once`);
      t.same(s.availability.nozzles, [{ id: 'N1', available: true }], `${name}: a removed nozzle disappears`);
      t.same(s.usage.nozzles, [{ id: 'N1', usage_status: 'in-use' }]);
    }

    layoutOf(f).products = [];
    await a.load(f);
    await a.parts.bus.publish({ type: 'registry', hrs_ids: ['BERLA'], tokens: false });
    for (const [name, p] of [['A', a], ['B', b]] as const) {
      // Waited for: the pricing of P700 alone to change; asserted: what it changed to.
      const s = await until(`instance ${name} to change its pricing`, async () => {
        const current = await status(p);
        return current.pricing?.products.length === 1 ? undefined : current;
      });
      t.equal(s.pricing, null, `${name}: no registered product left: pricing is null`);
    }

    f.assignments = f.assignments.map((x) => (x.signal_type === 'usage' ? { ...x, state: 'testing' } : x));
    await a.load(f);
    await a.parts.bus.publish({ type: 'registry', hrs_ids: ['BERLA'], tokens: false });
    for (const [name, p] of [['A', a], ['B', b]] as const) {
      const s = await until(`instance ${name} to change its usage`, async () => {
        const current = await status(p);
        return current.usage?.nozzles.length === 1 ? undefined : current;
      });
      t.equal(s.usage, null, `${name}: no live source for usage any more: the section is null`);
    }

    f.stations = f.stations.filter((s) => s.hrs_id !== 'BERLA');
    f.assignments = f.assignments.filter((x) => x.hrs_id !== 'BERLA');
    await a.load(f);
    await a.parts.bus.publish({ type: 'registry', hrs_ids: ['BERLA'], tokens: false });
    for (const p of [a, b]) {
      await until('BERLA to be gone', async () => ((await get(`${p.url}/v2/hrs/BERLA/status`, TOKENS.export_v2)).status === 404 ? true : undefined));
      t.equal(p.parts.status.freshness('BERLA', 'availability'), null, 'its actors are removed');
    }
  });

  t.test('availability and usage turn null at the unknown deadline and come back with the next signal', async (t) => {
    const p = await startTestPlatform(t, { fixture: fixture(), env: { STATUS_STALE_AFTER: '1', STATUS_UNKNOWN_AFTER: '2', ...POLLING } });
    const changes: StatusChange[] = [];
    p.parts.status.onChange((change) => changes.push(change));
    const posted = Date.now();
    await postAll(p, new Date(posted).toISOString());
    t.equal(p.parts.status.freshness('BERLA', 'availability'), 'fresh');
    await until('availability to turn stale', () => (p.parts.status.freshness('BERLA', 'availability') === 'stale' ? true : undefined), 5000, 10);
    t.not((await status(p)).availability, null, 'stale is still published');
    const s = await until('availability to turn null', async () => {
      const current = await status(p);
      return current.availability === null ? current : undefined;
    }, 6000, 20);
    t.ok(Date.now() - posted >= 2000, 'not before the deadline');
    t.equal(s.usage, null, 'usage too');
    t.not(s.hydrogen_storage, null, 'hydrogen storage never turns unknown');
    t.not(s.pricing, null, 'pricing never turns unknown');
    t.equal(p.parts.status.freshness('BERLA', 'hydrogen-storage'), 'stale');

    const transitions = changes
      .filter((c) => c.category === 'availability')
      .map((c) => [c.cause, c.previous, c.freshness, c.section === null]);
    t.same(transitions, [
      ['signal', null, 'fresh', false],
      ['freshness', 'fresh', 'stale', false],
      ['freshness', 'stale', 'unknown', true],
    ], 'every published change and freshness transition is on the change stream');

    await post(p, 'availability', [availability(ago(0))]);
    t.not((await status(p)).availability, null, 'the next signal brings it back');
    t.same(changes.at(-1), { ...changes.at(-1), category: 'availability', cause: 'signal', previous: 'unknown', freshness: 'fresh' });
  });

  t.test('a restart restores the same status, with deadlines from the stored datetime', async (t) => {
    const a = await startTestPlatform(t, { fixture: fixture() });
    await postAll(a);
    const before = await status(a);
    const config = { ...a.parts.config };
    await a.stop('restart');
    const b = await startTestPlatform(t, { sameStoreAs: { ...a, parts: { ...a.parts, config } } as TestPlatform });
    t.same(await status(b), before, 'every section restored as it was published');
    t.equal(b.parts.status.freshness('BERLA', 'availability'), 'fresh');

    // Age the stored readings (the running instance keeps its own), then start again.
    await b.sql`UPDATE published_signals SET measured_at = now() - interval '31 minutes' WHERE category = 'availability'`;
    await b.sql`UPDATE published_signals SET measured_at = now() - interval '10 minutes' WHERE category = 'usage'`;
    await b.sql`UPDATE published_signals SET measured_at = now() - interval '3 days' WHERE category IN ('hydrogen-storage', 'pricing')`;
    await b.stop('restart');
    const c = await startTestPlatform(t, { sameStoreAs: { ...a, parts: { ...a.parts, config } } as TestPlatform });
    const s = await status(c);
    t.equal(c.parts.status.freshness('BERLA', 'availability'), 'unknown', '31 minutes old: back as unknown, not fresh');
    t.equal(s.availability, null);
    t.equal(c.parts.status.freshness('BERLA', 'usage'), 'stale', '10 minutes old: stale');
    t.not(s.usage, null);
    t.equal(c.parts.status.freshness('BERLA', 'pricing'), 'stale');
    t.not(s.pricing, null, 'old prices are still the prices');
    t.not(s.hydrogen_storage, null);
  });

  t.test('two instances: a signal accepted by one is served by the other, and both age it alike', async (t) => {
    const a = await startTestPlatform(t, { fixture: fixture(), env: { STATUS_STALE_AFTER: '1', STATUS_UNKNOWN_AFTER: '3', ...POLLING } });
    const b = await startTestPlatform(t, { sameStoreAs: a });
    const datetime = new Date().toISOString();
    await post(a, 'availability', [availability(datetime)]);
    const seen = await until('instance B to serve the signal', async () => {
      const s = await status(b);
      return s.availability ? s : undefined;
    });
    t.same(seen, await status(a), 'both serve the same object');
    const deadline = Date.parse(datetime) + 3000;
    for (const [name, p] of [['A', a], ['B', b]] as const) {
      await until(`${name} to turn availability unknown`, async () => ((await status(p)).availability === null ? true : undefined), 8000, 20);
      t.ok(Date.now() >= deadline, `${name}: unknown from the same datetime, not before ${new Date(deadline).toISOString()}`);
    }
  });

  t.test('the all-stations list is sent gzip-encoded to clients that accept it', async (t) => {
    const p = await startTestPlatform(t, { fixture: fixture() });
    await postAll(p);
    const raw = (acceptEncoding?: string) =>
      new Promise<{ headers: IncomingHttpHeaders; body: Buffer }>((resolve, reject) => {
        const headers: Record<string, string> = { Authorization: `Bearer ${TOKENS.export_v2}` };
        if (acceptEncoding !== undefined) headers['Accept-Encoding'] = acceptEncoding;
        httpGet(`${p.url}/v2/hrs/status`, { headers }, (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (c: Buffer) => chunks.push(c));
          res.on('end', () => resolve({ headers: res.headers, body: Buffer.concat(chunks) }));
        }).on('error', reject);
      });
    const plain = await raw();
    t.equal(plain.headers['content-encoding'], undefined);
    t.equal(plain.headers.vary, 'Accept, Accept-Encoding', 'by Accept too: JSON or GeoJSON');
    t.equal(Number(plain.headers['content-length']), plain.body.length);
    const list = JSON.parse(plain.body.toString('utf8')) as { stations: { hrs_id: string }[] };
    t.same(list.stations.map((s) => s.hrs_id), ['BERLA', 'HAMBG']);
    for (const header of ['gzip', 'br, gzip;q=0.5', 'deflate, *']) {
      const zipped = await raw(header);
      t.equal(zipped.headers['content-encoding'], 'gzip', `Accept-Encoding: ${header}`);
      t.same(gunzipSync(zipped.body), plain.body, 'the same bytes once decoded');
    }
    for (const header of ['gzip;q=0', 'br', 'identity', '*;q=0']) {
      t.equal((await raw(header)).headers['content-encoding'], undefined, `Accept-Encoding: ${header}`);
    }
    await post(p, 'availability', [availability(ago(1), [{ id: 'N1', available: false }])]);
    const after = JSON.parse(gunzipSync((await raw('gzip')).body).toString('utf8')) as { stations: Record<string, any>[] };
    t.same(after.stations[0]!.availability.nozzles, [{ id: 'N1', available: false }], 'a new signal is in the next list, encoded or not');
  });
});

t.test('signal-writer', async (t) => {
  t.test('group commit: many concurrent requests, one commit each batch, every write durable and isolated', async (t) => {
    const { sql } = await freshDatabase(t);
    await loadFixture(sql, baseFixture(), { baseDir: '.' });
    const writer = new SignalWriter(sql);
    const base = Date.now() - 60_000;
    const row = (i: number, hrsId = 'BERLA'): StoredTransmission => ({
      originatorId: 'mon-1',
      hrsId,
      category: 'availability',
      state: 'live',
      // Measurement times arrive out of order: the published snapshot must be the newest one.
      measuredAt: new Date(base + ((i * 37) % 100) * 100),
      receivedAt: new Date(),
      transmissionId: `w-${i}`,
      payload: { i },
    });

    const results = await Promise.allSettled([
      ...Array.from({ length: 100 }, (_, i) => writer.write([row(i)])),
      writer.write([row(1000), row(1001, 'NOWHR')]), // a station that does not exist: this request fails alone
    ]);
    t.equal(results.filter((r) => r.status === 'fulfilled').length, 100, 'every good request was stored');
    t.equal(results[100]!.status, 'rejected', 'the bad one failed');
    const [history] = await sql`SELECT count(*)::int AS n FROM signal_history`;
    t.equal(history!.n, 100, 'the failing request left nothing behind');
    t.notOk((await sql`SELECT 1 FROM signal_history WHERE transmission_id = 'w-1000'`).length, 'not even its valid row');
    const [published] = await sql`SELECT measured_at, payload FROM published_signals WHERE hrs_id = 'BERLA'`;
    const newest = Math.max(...Array.from({ length: 100 }, (_, i) => base + ((i * 37) % 100) * 100));
    t.equal(published!.measured_at.getTime(), newest, 'the published snapshot is the newest measurement');
    const [latest] = await sql`SELECT count(*)::int AS n FROM signal_latest`;
    t.equal(latest!.n, 1, 'one latest row per originator, station and category');
  });
});
