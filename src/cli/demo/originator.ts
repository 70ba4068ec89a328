import type { Logger } from 'pino';
import { DemoSimulation, type Station } from './simulation.js';

/**
 * How the demo's monitoring system fails now and then, so that the admins' dashboard has a failing
 * originator to show. Each is drawn per interval with the seed's sequence: reproducible, and a test
 * forces them at once with a mean shorter than the interval.
 */
export interface DemoFailureOptions {
  /** The sequence's seed. */
  seed?: number;
  /** Mean time between refused transmissions (ms; 0: never). Default 15 minutes. */
  refusedEveryMs?: number;
  /** Mean time between outages (ms; 0: never). Default an hour. */
  outageEveryMs?: number;
  /**
   * How long an outage lasts (ms). Default 10 minutes: longer than STATUS_STALE_AFTER (5 minutes by
   * default), so the silenced stations turn stale for a while; longer than STATUS_UNKNOWN_AFTER, unknown.
   */
  outageMs?: number;
  /** How many stations an outage silences. Default 2. */
  outageStations?: number;
}

export const DEMO_FAILURE_DEFAULTS: Required<DemoFailureOptions> = {
  seed: 20261122,
  refusedEveryMs: 15 * 60_000,
  outageEveryMs: 3_600_000,
  outageMs: 10 * 60_000,
  outageStations: 2,
};

/**
 * A station monitoring system for the demo: every interval it posts availability, usage and
 * hydrogen storage for every station through the real import v2 API, and prices on start, on change
 * and as a daily heartbeat; the readings come from the demo's simulated world (simulation.ts). The
 * availability of a few stations goes instead through the legacy import v1.1, per fuelling option, as
 * an older monitoring system of another originator reports it.
 *
 * And it fails now and then (DemoFailureOptions): a transmission the platform refuses (a 400 in the
 * call log, a refused call in the originator's error rate), and outages of a few minutes in which it
 * posts nothing for some stations, whose status then turns stale and unknown.
 */
export class DemoOriginator {
  private timer: NodeJS.Timeout | undefined;
  private ticks = 0;
  private readonly world: DemoSimulation;
  private readonly failures: Required<DemoFailureOptions>;
  private running: Promise<void> | undefined;
  posted = 0;
  /** Transmissions refused on purpose, and outages begun. */
  refused = 0;
  outages = 0;
  /** The outage under way: the stations silenced, until when (epoch ms). */
  outage: { stations: string[]; until: number } | undefined;

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
    failures: DemoFailureOptions = {},
  ) {
    this.failures = { ...DEMO_FAILURE_DEFAULTS, ...failures };
    this.world = new DemoSimulation(stations, this.failures.seed);
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

  /** Whether something with a mean time between occurrences of `everyMs` happens in this interval. */
  private happens(everyMs: number): boolean {
    return everyMs > 0 && this.world.rnd() < Math.min(1, this.intervalMs / everyMs);
  }

  private async tick(): Promise<void> {
    const now = Date.now();
    const datetime = new Date(now).toISOString();
    const day = Math.max(1, Math.round(86_400_000 / this.intervalMs));
    const pricesDue = this.ticks % day === 0;
    this.ticks++;
    if (this.outage && this.outage.until <= now) {
      this.log.info({ stations: this.outage.stations }, 'demo originator: outage over');
      this.outage = undefined;
    }
    // Not on the first tick: the stations have reported once before one goes silent.
    if (!this.outage && this.ticks > 1 && this.happens(this.failures.outageEveryMs)) this.startOutage(now);
    const silenced = new Set(this.outage?.stations ?? []);
    const reporting = this.stations.filter((s) => !silenced.has(s.hrs_id));
    const step = this.intervalMs;
    const legacy = reporting.filter((s) => this.availabilityElsewhere.includes(s.hrs_id));
    const v2 = reporting.filter((s) => !legacy.includes(s));
    if (v2.length > 0) await this.post('availability', v2.map((s) => this.world.availability(s, datetime, step)));
    if (this.legacyToken && legacy.length > 0) await this.postLegacy(legacy.map((s) => this.world.legacySignal(s, datetime, step)));
    if (reporting.length > 0) {
      await this.post('usage', reporting.map((s) => this.world.usage(s, datetime, now)));
      await this.post('hydrogen-storage', reporting.map((s) => this.world.storage(s, datetime, now, step)));
    }
    const pricing = reporting.flatMap((s) => this.world.pricing(s, datetime, step, pricesDue));
    if (pricing.length > 0) await this.post('pricing', pricing);
    if (v2.length > 0 && this.happens(this.failures.refusedEveryMs)) await this.refuse(v2[Math.floor(this.world.rnd() * v2.length)]!, datetime);
  }

  private startOutage(now: number): void {
    const pool = [...this.stations];
    const stations: string[] = [];
    while (stations.length < Math.min(this.failures.outageStations, this.stations.length)) {
      stations.push(pool.splice(Math.floor(this.world.rnd() * pool.length), 1)[0]!.hrs_id);
    }
    this.outage = { stations, until: now + this.failures.outageMs };
    this.outages++;
    this.log.info({ stations, minutes: this.failures.outageMs / 60_000 }, 'demo originator: simulated outage, posting nothing for these stations');
  }

  /** Posts a transmission the platform refuses (a simulated fault: expected, so not a warning). */
  private async refuse(s: Station, datetime: string): Promise<void> {
    const res = await this.send(`/import/v2/signal/availability/`, this.token, [this.world.refused(s, datetime)]);
    if (res.status >= 400 && res.status < 500) this.refused++;
    this.log.info({ hrs: s.hrs_id, status: res.status, body: (await res.text()).slice(0, 500) }, 'demo originator: simulated fault, a transmission the layout does not allow');
  }

  private send(path: string, token: string | undefined, body: unknown): Promise<Response> {
    return fetch(`${this.baseUrl}${path}`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json' },
      body: JSON.stringify(body),
    });
  }

  private async postLegacy(signals: unknown[]): Promise<void> {
    const res = await this.send('/import/v1.1/hrs-availability', this.legacyToken, signals);
    if (res.status !== 204) {
      this.log.warn({ status: res.status, body: (await res.text()).slice(0, 500) }, 'demo legacy originator: transmission refused');
      return;
    }
    this.posted += signals.length;
  }

  private async post(category: string, transmissions: unknown[]): Promise<void> {
    const res = await this.send(`/import/v2/signal/${category}/`, this.token, transmissions);
    if (res.status !== 204) {
      this.log.warn({ category, status: res.status, body: (await res.text()).slice(0, 500) }, 'demo originator: transmission refused');
      return;
    }
    this.posted += transmissions.length;
  }
}
