import type { Logger } from 'pino';
import type { demoFixture } from './fixture.js';

type Fixture = ReturnType<typeof demoFixture>;
type Station = Fixture['stations'][number];

/** A pseudo-random sequence with a seed, so a demo run is varied but reproducible. */
function random(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let x = Math.imul(state ^ (state >>> 15), 1 | state);
    x ^= x + Math.imul(x ^ (x >>> 7), 61 | x);
    return ((x ^ (x >>> 14)) >>> 0) / 4294967296;
  };
}

/**
 * A station monitoring system for the demo: every interval it posts availability, usage and
 * hydrogen storage for every station through the real import v2 API, and prices on start, on change
 * and as a daily heartbeat. Readings drift: nozzles fail and recover, tanks drain and are refilled.
 * The availability of a few stations goes instead through the legacy import v1.1, per fuelling
 * option, as an older monitoring system of another originator reports it.
 */
export class DemoOriginator {
  private timer: NodeJS.Timeout | undefined;
  private ticks = 0;
  private readonly rnd = random(20261122);
  private readonly tanks = new Map<string, number>();
  private readonly prices = new Map<string, number>();
  private running: Promise<void> | undefined;
  posted = 0;

  constructor(
    private readonly baseUrl: string,
    private readonly token: string,
    private readonly stations: Station[],
    private readonly intervalMs: number,
    private readonly log: Logger,
    /** Stations whose availability another originator reports (the legacy one): skipped here. */
    private readonly availabilityElsewhere: readonly string[] = [],
    /** The legacy originator's import v1/v1.1 token: with it, those stations' availability goes through import v1.1. */
    private readonly legacyToken?: string,
  ) {
    for (const s of stations) {
      for (const t of s.layout.storages) this.tanks.set(`${s.hrs_id}/${t.external_id}`, t.nominal_capacity_kg * (0.3 + 0.6 * this.rnd()));
    }
  }

  start(): void {
    const tick = () => {
      this.running = this.tick().catch((err) => this.log.warn({ err }, 'demo originator: posting failed'));
    };
    tick();
    this.timer = setInterval(tick, this.intervalMs);
  }

  async stop(): Promise<void> {
    clearInterval(this.timer);
    await this.running;
  }

  private async tick(): Promise<void> {
    const datetime = new Date().toISOString();
    const day = Math.max(1, Math.round(86_400_000 / this.intervalMs));
    const pricesDue = this.ticks % day === 0;
    this.ticks++;
    const legacy = this.stations.filter((s) => this.availabilityElsewhere.includes(s.hrs_id));
    await this.post('availability', this.stations.filter((s) => !legacy.includes(s)).map((s) => this.availability(s, datetime)));
    if (this.legacyToken && legacy.length > 0) await this.postLegacy(legacy.map((s) => this.legacySignal(s, datetime)));
    await this.post('usage', this.stations.map((s) => this.usage(s, datetime)));
    await this.post('hydrogen-storage', this.stations.map((s) => this.storage(s, datetime)));
    const pricing = this.stations.flatMap((s) => this.pricing(s, datetime, pricesDue));
    if (pricing.length > 0) await this.post('pricing', pricing);
  }

  private availability(s: Station, datetime: string) {
    return {
      hrs: s.hrs_id,
      datetime,
      nozzles: s.layout.dispensers.flatMap((d) => d.nozzles.map((n) => ({ id: n.external_id, available: this.rnd() > 0.08 }))),
      station: { maintenance: this.rnd() < 0.02, limitedly_available: this.rnd() < 0.05 },
    };
  }

  /** A v1.1 signal: one entry per fuelling option the station's layout provides, as a legacy system reports. */
  private legacySignal(s: Station, datetime: string) {
    const options = [...new Set(s.layout.dispensers.flatMap((d) => d.nozzles.flatMap((n) => n.fuelling_options)))];
    return {
      hrs: s.hrs_id,
      datetime,
      dispensers: options.map((fuel_type) => ({ fuel_type, available: this.rnd() > 0.08 })),
      maintenance: this.rnd() < 0.02,
      limitedly_available: this.rnd() < 0.05,
    };
  }

  private usage(s: Station, datetime: string) {
    return {
      hrs: s.hrs_id,
      datetime,
      // A dispenser serves one vehicle at a time: a busy dispenser reports all its nozzles in use.
      nozzles: s.layout.dispensers.map((d) => {
        const r = this.rnd();
        return { dispenser_id: d.external_id, usage_status: r < 0.25 ? 'in-use' : r < 0.3 ? 'reserved' : 'free' };
      }),
    };
  }

  private storage(s: Station, datetime: string) {
    return {
      hrs: s.hrs_id,
      datetime,
      storages: s.layout.storages.map((t) => {
        const key = `${s.hrs_id}/${t.external_id}`;
        let kg = (this.tanks.get(key) ?? 0) - this.rnd() * t.nominal_capacity_kg * 0.02;
        if (kg < 40) kg = t.nominal_capacity_kg * 0.95; // the trailer came
        this.tanks.set(key, kg);
        return { id: t.external_id, remaining_kg: kg.toFixed(2) };
      }),
    };
  }

  private pricing(s: Station, datetime: string, due: boolean) {
    const products = s.layout.products.map((p) => {
      const key = `${s.hrs_id}/${p.external_id}`;
      const base = this.prices.get(key) ?? (p.pressure_stage === 700 ? 13.5 : 12.5) + this.rnd();
      const changed = this.rnd() < 0.01;
      const price = changed ? base + (this.rnd() - 0.5) * 0.4 : base;
      const first = !this.prices.has(key);
      this.prices.set(key, price);
      return { product: { id: p.external_id, gross_price: price.toFixed(3), net_price: (price / 1.19).toFixed(3), currency: s.details.country === 'CH' ? 'CHF' : 'EUR' }, send: first || changed };
    });
    if (products.length === 0 || !(due || products.some((p) => p.send))) return [];
    return [{ hrs: s.hrs_id, datetime, products: products.map((p) => p.product) }];
  }

  private async postLegacy(signals: unknown[]): Promise<void> {
    const res = await fetch(`${this.baseUrl}/import/v1.1/hrs-availability`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${this.legacyToken}`, 'Content-Type': 'application/json' },
      body: JSON.stringify(signals),
    });
    if (res.status !== 204) {
      this.log.warn({ status: res.status, body: (await res.text()).slice(0, 500) }, 'demo legacy originator: transmission refused');
      return;
    }
    this.posted += signals.length;
  }

  private async post(category: string, transmissions: unknown[]): Promise<void> {
    const res = await fetch(`${this.baseUrl}/import/v2/signal/${category}/`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${this.token}`, 'Content-Type': 'application/json' },
      body: JSON.stringify(transmissions),
    });
    if (res.status !== 204) {
      this.log.warn({ category, status: res.status, body: (await res.text()).slice(0, 500) }, 'demo originator: transmission refused');
      return;
    }
    this.posted += transmissions.length;
  }
}
