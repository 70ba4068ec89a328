import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import { AnswerMetrics, PairCounter } from './answers.js';
import { refusedByRateLimit } from '../../http/rate-limit-guard.js';
import type { Answered } from '../../http/server.js';

/**
 * The platform's Prometheus metrics, one registry per running platform (several run in one test
 * process; the global default registry is never used). Counters and histograms are fed by hooks as
 * things happen (answers, transmissions, commits); gauges (actors, sockets, queues) are read from
 * their sources when scraped.
 */

/** What an import v2 transmission became: stored, validated as a dry run, or refused with its request. */
export type TransmissionOutcome = 'accepted' | 'dry_run' | 'rejected';

/** The states of a BullMQ queue's jobs that are reported. */
export const QUEUE_STATES = ['waiting', 'active', 'delayed', 'failed', 'completed'] as const;

/** What is read at scrape time. */
export interface MetricSources {
  /** Freshness actors held, by freshness (`fresh`, `stale`, `unknown`). */
  actors(): Record<string, number>;
  /** Open push sockets, and how many were closed since start for falling too far behind. */
  push(): { streams: number; admins: number; closedSlow?: number };
  /** Jobs per queue name and state (BullMQ `getJobCounts`). */
  queues(): Promise<Record<string, Record<string, number>>>;
  /** Stations left out of the DATEX II publications, by reason (`no_capacity`, `no_coordinates`). */
  datex2LeftOut?(): Record<string, number>;
  /** Open streams of the public map (none while PUBLIC_MAP=false). */
  mapStreams?(): number;
}

/** How long a scrape waits for the queue counts (Redis may be down) before leaving them out. */
const QUEUE_TIMEOUT_MS = 1000;

const LATENCY_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];
const BATCH_BUCKETS = [1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 2000];

export class PlatformMetrics {
  readonly registry = new Registry();
  private sources: MetricSources | undefined;
  /** Where the exposition text comes from instead of this registry alone (`hrs serve --processes`: every process's). */
  private gather: (() => Promise<string>) | undefined;
  /** `hrs_http_requests_total` and `hrs_http_request_duration_seconds`: fed by every answer (./answers.ts). */
  private readonly answers = new AnswerMetrics(this.registry, LATENCY_BUCKETS);
  private readonly refusals = new Counter({
    name: 'hrs_rate_limit_refusals_total',
    help: 'Requests refused (429) because a rate limit was exhausted, by API family.',
    labelNames: ['family'] as const,
    registers: [this.registry],
  });
  private readonly transmissionCount = new PairCounter(this.registry, {
    name: 'hrs_import_v2_transmissions_total',
    help: 'Import v2 transmissions by signal category and outcome (accepted: stored; dry_run: validated only; rejected: refused with their request).',
    labelNames: ['category', 'outcome'] as const,
  });
  private readonly legacySignalCount = new Counter({
    name: 'hrs_import_v1_signals_total',
    help: 'Legacy import signals by family (import_v1, import_v1.1) and outcome (accepted: stored; rejected: refused in their request, which stored the others).',
    labelNames: ['family', 'outcome'] as const,
    registers: [this.registry],
  });
  private readonly commitRows = new Histogram({
    name: 'hrs_signal_commit_rows',
    help: 'Transmissions stored per group commit.',
    buckets: BATCH_BUCKETS,
    registers: [this.registry],
  });
  private readonly commitSeconds = new Histogram({
    name: 'hrs_signal_commit_duration_seconds',
    help: 'Seconds a group commit of transmissions took.',
    buckets: LATENCY_BUCKETS,
    registers: [this.registry],
  });
  private readonly webhookChangeRows = new Counter({
    name: 'hrs_webhook_change_rows_total',
    help: 'Status and fuelling-option changes this instance recorded for webhooks, by change-log topic and outcome (written; duplicate: another instance had written it; dropped: PostgreSQL failed and the buffer was full).',
    labelNames: ['topic', 'outcome'] as const,
    registers: [this.registry],
  });

  constructor(version: string) {
    // One fact for the whole platform: when the processes of `hrs serve --processes` are added up, the first one's.
    const info = new Gauge({ name: 'hrs_build_info', help: 'The running version (always 1).', labelNames: ['version'] as const, registers: [this.registry], aggregator: 'first' });
    info.set({ version }, 1);
    this.scraped();
    collectDefaultMetrics({ register: this.registry });
  }

  /** Where the gauges read from, once the platform has built them (before: they are left out). */
  watch(sources: MetricSources): void {
    this.sources = sources;
  }

  /** The HTTP server's `onAnswered`: every answer, counted and timed. */
  readonly answered = (a: Answered): void => {
    this.answers.add(a.family.name, a.route ?? 'unmatched', a.req.method, a.status, a.seconds);
    if (a.status === 429 && refusedByRateLimit(a.req)) this.refusals.inc({ family: a.family.name });
  };

  /** Import v2: `count` transmissions of `category` had `outcome`. */
  readonly transmissions = (category: string, outcome: TransmissionOutcome, count: number): void => {
    this.transmissionCount.add(category, outcome, count);
  };

  /** The legacy import: `count` signals sent to `family` had `outcome`. */
  readonly legacySignals = (family: string, outcome: 'accepted' | 'rejected', count: number): void => {
    if (count > 0) this.legacySignalCount.inc({ family, outcome }, count);
  };

  /** The signal writer's `onCommit`: one group commit of `rows` transmissions took `seconds`. */
  readonly committed = (rows: number, seconds: number): void => {
    this.commitRows.observe(rows);
    this.commitSeconds.observe(seconds);
  };

  /** The webhook change recorder: `rows` of `topic` had `outcome`. */
  readonly webhookChanges = (topic: string, outcome: 'written' | 'duplicate' | 'dropped', rows: number): void => {
    if (rows > 0) this.webhookChangeRows.inc({ topic, outcome }, rows);
  };

  /** The exposition text: this registry's, or what `gatherWith` says (every process's). */
  text(): Promise<string> {
    return this.gather ? this.gather() : this.registry.metrics();
  }

  /** Scrapes answer with `gather`'s text from now on (src/cli/supervisor/metrics.ts: every process of the set). */
  gatherWith(gather: () => Promise<string>): void {
    this.gather = gather;
  }

  get contentType(): string {
    return this.registry.contentType;
  }

  /** The gauges read at scrape time: declared alike, as prom-client declares a gauge; each reads its own source. */
  private scraped(): void {
    const metrics = this;
    new Gauge({
      name: 'hrs_status_actors',
      help: 'Freshness actors (one per station and signal category with a reading), by freshness.',
      labelNames: ['freshness'] as const,
      registers: [this.registry],
      collect() {
        this.reset();
        for (const [freshness, n] of Object.entries(metrics.sources?.actors() ?? {})) this.set({ freshness }, n);
      },
    });
    new Gauge({
      name: 'hrs_push_sockets',
      help: 'Open WebSockets by kind (stream: status streams; admin: the admins\' live feed; map: the public map\'s stream).',
      labelNames: ['kind'] as const,
      registers: [this.registry],
      collect() {
        this.reset();
        const push = metrics.sources?.push();
        if (push) for (const kind of ['streams', 'admins'] as const) this.set({ kind: kind.slice(0, -1) }, push[kind]);
        const map = metrics.sources?.mapStreams?.();
        if (map !== undefined) this.set({ kind: 'map' }, map);
      },
    });
    new Gauge({
      name: 'hrs_datex2_stations_left_out',
      help: 'Stations left out of the DATEX II publications because the AFIR profile requires what they lack, by reason (no_capacity: no cumulative_daily_hydrogen_capacity; no_coordinates). A station lacking both counts under both.',
      labelNames: ['reason'] as const,
      registers: [this.registry],
      aggregator: 'first',
      collect() {
        this.reset();
        for (const [reason, n] of Object.entries(metrics.sources?.datex2LeftOut?.() ?? {})) this.set({ reason }, n);
      },
    });
    let closedSlow = 0;
    new Counter({
      name: 'hrs_push_closed_slow_total',
      help: 'WebSockets closed (4000) because they fell too far behind: the messages they could not take were dropped with them.',
      registers: [this.registry],
      collect() {
        const now = metrics.sources?.push().closedSlow ?? closedSlow;
        if (now > closedSlow) this.inc(now - closedSlow);
        closedSlow = now;
      },
    });
    this.queueGauge();
  }

  private queueGauge(): void {
    const metrics = this;
    new Gauge({
      name: 'hrs_queue_jobs',
      help: 'BullMQ jobs by queue and state (failed: jobs that exhausted their attempts and are kept); left out when Redis does not answer.',
      labelNames: ['queue', 'state'] as const,
      registers: [this.registry],
      // Every process counts the same queues in Redis: added up, the first one's counts.
      aggregator: 'first',
      async collect() {
        this.reset();
        type Counts = Record<string, Record<string, number>>;
        const counts = await withTimeout<Counts>(metrics.sources?.queues() ?? Promise.resolve({}), QUEUE_TIMEOUT_MS).catch((): Counts => ({}));
        for (const [queue, states] of Object.entries(counts)) {
          for (const state of QUEUE_STATES) this.set({ queue, state }, states[state] ?? 0);
        }
      },
    });
  }
}

function withTimeout<T>(promise: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer within ${ms} ms`)), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}
