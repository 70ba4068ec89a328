import { hazardsOf, type Pattern } from '../../domain/forecast/patterns.js';
import { slotOf } from '../../domain/forecast/model.js';
import { seedOf } from '../../domain/random.js';
import { stationTimeZone } from '../../registry/time-zone.js';
import type { demoFixture } from './fixture.js';

export type Fixture = ReturnType<typeof demoFixture>;
export type Station = Fixture['stations'][number];

const HOUR_MS = 3_600_000;

/** A pseudo-random sequence with a seed, so a demo run is varied but reproducible. */
export function random(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let x = Math.imul(state ^ (state >>> 15), 1 | state);
    x ^= x + Math.imul(x ^ (x >>> 7), 61 | x);
    return ((x ^ (x >>> 14)) >>> 0) / 4294967296;
  };
}

/** The chance that something happening `perHour` times an hour on average happens within `ms`. */
const chance = (perHour: number, ms: number) => 1 - Math.exp((-perHour * ms) / HOUR_MS);

/**
 * How busy a station is at `at`: few vehicles at night, most in the morning and evening rush hours
 * (the demo's stations are in Central Europe: local time is taken as UTC+1).
 */
export function busyShare(at: number): number {
  const hour = (new Date(at).getUTCHours() + 1) % 24;
  if (hour < 5) return 0.03;
  if ((hour >= 7 && hour < 9) || (hour >= 16 && hour < 19)) return 0.45;
  return hour >= 22 ? 0.08 : 0.2;
}

/**
 * Which of the forecast's simulated patterns (src/domain/forecast/patterns.ts) each demo station follows;
 * the stations not named are `steady`. The busy pattern drains the 700 bar storage: its 700 bar options
 * go down together in the weekday rush hours, its 350 bar ones stay steady. The maintenance station is
 * steady besides its weekly window, which it reports as maintenance (MAINTENANCE_WINDOW).
 */
export const DEMO_PATTERNS: Readonly<Record<string, Pattern>> = {
  BERAP: 'busy',
  FRANK: 'busy',
  AMSTE: 'busy',
  STUTT: 'maintenance',
  COLOG: 'flaky',
};

/**
 * The demo's weekly maintenance window, in the station's local time: Tuesdays 09:00–12:00 (Stuttgart
 * Nord is closed at night, where the simulated pattern's window lies). Weekday 0 is Monday.
 */
export const MAINTENANCE_WINDOW = { weekday: 1, from: 9, to: 12 } as const;

/** The pattern a demo station follows. */
export const demoPattern = (hrsId: string): Pattern => DEMO_PATTERNS[hrsId] ?? 'steady';

/**
 * The demo stations' simulated world, shared by the live originator and the history the demo starts
 * with. Each station's fuelling options are up or down as its pattern (DEMO_PATTERNS) says, by the
 * station's local weekday and hour: every nozzle of an option reports the option's state, so the option's
 * five-state summary follows the pattern. The maintenance station reports maintenance in its weekly
 * window. Dispensers are busier in the rush hours, tanks drain with use and are refilled by a trailer
 * below a tenth of their capacity, a station with a low tank reports itself limitedly available, prices
 * change every few days. Each call moves the world by `stepMs`.
 *
 * The options' states come from sequences of their own (seeded by the world's seed and the station's
 * id), so they do not depend on how often the other signals are drawn.
 */
export class DemoSimulation {
  readonly rnd: () => number;
  /** Per station and part (`700`: its 700 bar options under the busy pattern; `all`: the rest), up or down, and its sequence. */
  private readonly parts = new Map<string, { up: boolean; rnd: () => number }>();
  private readonly slots = new Map<string, (instant: number) => number>();
  private readonly tanks = new Map<string, number>();
  private readonly prices = new Map<string, number>();

  constructor(readonly stations: readonly Station[], private readonly seed: number) {
    this.rnd = random(seed);
    for (const s of stations) {
      for (const t of s.layout.storages) this.tanks.set(`${s.hrs_id}/${t.external_id}`, t.nominal_capacity_kg * (0.3 + 0.6 * this.rnd()));
    }
  }

  /** A v2 availability transmission at `datetime`: each nozzle as its options' part of the station stands. */
  availability(s: Station, datetime: string, stepMs: number) {
    const at = Date.parse(datetime);
    this.step(s, at, stepMs);
    return {
      hrs: s.hrs_id,
      datetime,
      nozzles: s.layout.dispensers.flatMap((d) => d.nozzles.map((n) => ({ id: n.external_id, available: this.up(s, n.fuelling_options) }))),
      station: { maintenance: this.maintenance(s, at), limitedly_available: this.low(s) },
    };
  }

  /** A v1.1 signal: one entry per fuelling option the station's layout provides, as a legacy system reports. */
  legacySignal(s: Station, datetime: string, stepMs: number) {
    const at = Date.parse(datetime);
    this.step(s, at, stepMs);
    const options = [...new Set(s.layout.dispensers.flatMap((d) => d.nozzles.flatMap((n) => n.fuelling_options)))];
    return {
      hrs: s.hrs_id,
      datetime,
      dispensers: options.map((fuel_type) => ({ fuel_type, available: this.up(s, [fuel_type]) })),
      maintenance: this.maintenance(s, at),
      limitedly_available: this.low(s),
    };
  }

  /** Whether the station is in its weekly maintenance window at `at`. */
  maintenance(s: Station, at: number): boolean {
    if (demoPattern(s.hrs_id) !== 'maintenance') return false;
    const slot = this.slot(s)(at);
    const hour = slot % 24;
    return Math.floor(slot / 24) === MAINTENANCE_WINDOW.weekday && hour >= MAINTENANCE_WINDOW.from && hour < MAINTENANCE_WINDOW.to;
  }

  /** A dispenser serves one vehicle at a time: a busy dispenser reports all its nozzles in use. */
  usage(s: Station, datetime: string, at: number) {
    const busy = busyShare(at);
    return {
      hrs: s.hrs_id,
      datetime,
      nozzles: s.layout.dispensers.map((d) => {
        const r = this.rnd();
        return { dispenser_id: d.external_id, usage_status: r < busy ? 'in-use' : r < busy + 0.04 ? 'reserved' : 'free' };
      }),
    };
  }

  /** Tanks drain with the station's use (about 15 kg an hour per busy dispenser). */
  storage(s: Station, datetime: string, at: number, stepMs: number) {
    const dispensers = s.layout.dispensers.length;
    return {
      hrs: s.hrs_id,
      datetime,
      storages: s.layout.storages.map((t) => {
        const key = `${s.hrs_id}/${t.external_id}`;
        const used = dispensers * busyShare(at) * 15 * (stepMs / HOUR_MS) * (0.5 + this.rnd());
        let kg = (this.tanks.get(key) ?? 0) - used;
        if (kg < t.nominal_capacity_kg * 0.1) kg = t.nominal_capacity_kg * (0.9 + 0.05 * this.rnd()); // the trailer came
        this.tanks.set(key, kg);
        return { id: t.external_id, remaining_kg: kg.toFixed(2) };
      }),
    };
  }

  /** Prices on the first call, when they change (every few days) and when `due` (the daily heartbeat). */
  pricing(s: Station, datetime: string, stepMs: number, due: boolean) {
    const products = s.layout.products.map((p) => {
      const key = `${s.hrs_id}/${p.external_id}`;
      const base = this.prices.get(key) ?? (p.pressure_stage === 700 ? 13.5 : 12.5) + this.rnd();
      const changed = this.rnd() < chance(1 / 60, stepMs);
      const price = changed ? base + (this.rnd() - 0.5) * 0.4 : base;
      const first = !this.prices.has(key);
      this.prices.set(key, price);
      return { product: { id: p.external_id, gross_price: price.toFixed(3), net_price: (price / 1.19).toFixed(3), currency: s.details.country === 'CH' ? 'CHF' : 'EUR' }, send: first || changed };
    });
    if (products.length === 0 || !(due || products.some((p) => p.send))) return [];
    return [{ hrs: s.hrs_id, datetime, products: products.map((p) => p.product) }];
  }

  /**
   * A transmission the platform refuses: availability for a nozzle the station's confirmed layout does
   * not have (a monitoring system that learnt of a new dispenser before the layout was confirmed).
   */
  refused(s: Station, datetime: string) {
    const nozzles = s.layout.dispensers.flatMap((d) => d.nozzles.map((n) => ({ id: n.external_id, available: true })));
    const extra = `D${s.layout.dispensers.length + 1}-H70`;
    return { hrs: s.hrs_id, datetime, nozzles: [...nozzles, { id: extra, available: true }], station: { maintenance: false, limitedly_available: false } };
  }

  /** The station's local weekday and hour (its zone from where it is, as the registry finds it; UTC where none). */
  private slot(s: Station): (instant: number) => number {
    let slot = this.slots.get(s.hrs_id);
    if (!slot) this.slots.set(s.hrs_id, (slot = slotOf(stationTimeZone(null, s.details) ?? 'UTC')));
    return slot;
  }

  /** The part of the station a set of options belongs to: the 700 bar storage of a busy station, or the rest. */
  private partOf(s: Station, options: readonly string[]): string {
    return demoPattern(s.hrs_id) === 'busy' && options.some((o) => o.startsWith('700')) ? '700' : 'all';
  }

  /** Moves each part of the station by `stepMs` to `at`, with its pattern's hazards at the hour `at` falls in. */
  private step(s: Station, at: number, stepMs: number): void {
    const pattern = demoPattern(s.hrs_id);
    for (const part of pattern === 'busy' ? ['700', 'all'] : ['all']) {
      const key = `${s.hrs_id}/${part}`;
      let state = this.parts.get(key);
      if (!state) this.parts.set(key, (state = { up: true, rnd: random(this.seed ^ seedOf(key)) }));
      // A busy station's other options, and the maintenance station outside its window, are steady.
      const hazards = hazardsOf(part === '700' || pattern === 'flaky' ? pattern : 'steady', this.slot(s)(at));
      const r = state.rnd();
      state.up = state.up ? r >= chance(hazards.down, stepMs) : r < chance(hazards.up, stepMs);
    }
  }

  private up(s: Station, options: readonly string[]): boolean {
    return this.parts.get(`${s.hrs_id}/${this.partOf(s, options)}`)?.up ?? true;
  }

  /** Below a fifth of its capacity a station reports itself limitedly available. */
  private low(s: Station): boolean {
    return s.layout.storages.some((t) => (this.tanks.get(`${s.hrs_id}/${t.external_id}`) ?? Infinity) < t.nominal_capacity_kg * 0.2);
  }
}
