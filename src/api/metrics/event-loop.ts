import { monitorEventLoopDelay, type IntervalHistogram } from 'node:perf_hooks';
import { Counter, Gauge, type Registry } from 'prom-client';
import type { Logger } from 'pino';
import type { BlockingSection } from '../../http/server.js';

/**
 * The event-loop guard: one process's event loop measured (`perf_hooks.monitorEventLoopDelay`), and
 * every stall longer than EVENT_LOOP_STALL (1 s by default) reported as it ends: one warning in the log
 * with its length and, when a request's own checks and handler ran at least that long in one go, the
 * request (its method and route), and in `/metrics` (a counter of stalls, the longest delay seen). While the
 * loop is blocked nothing at all is answered, `/healthz` included: a stall is what an instance that
 * "froze" did, and this is how the next one is seen.
 */

export interface EventLoopGuardOptions {
  log: Logger;
  /** A delay at least this long is a stall (EVENT_LOOP_STALL). */
  thresholdMs: number;
  /** Where its metrics are registered (the platform's registry). */
  registry: Registry;
  /** The longest synchronous stretch of one request since last asked (the HTTP server's). */
  sections: { takeLongestSection(): BlockingSection | undefined };
}

/** How often the histogram is read: often enough to report a stall soon after it ends, at most every half second. */
const tickMs = (thresholdMs: number) => Math.max(10, Math.min(500, Math.floor(thresholdMs / 2)));

export class EventLoopGuard {
  private readonly histogram: IntervalHistogram;
  private readonly timer: NodeJS.Timeout;
  private readonly stalls: Counter;
  private readonly longest: Gauge;
  private longestMs = 0;

  constructor(private readonly options: EventLoopGuardOptions) {
    this.stalls = new Counter({
      name: 'hrs_event_loop_stalls_total',
      help: 'Times the event loop was blocked for EVENT_LOOP_STALL (1 s by default) or longer: nothing was answered meanwhile, /healthz included. Each is also a warning in the log.',
      registers: [options.registry],
    });
    this.longest = new Gauge({
      name: 'hrs_event_loop_delay_max_seconds',
      help: 'The longest event-loop delay this process has had since it started, in seconds (perf_hooks.monitorEventLoopDelay).',
      registers: [options.registry],
    });
    this.longest.set(0);
    this.histogram = monitorEventLoopDelay({ resolution: 10 });
    this.histogram.enable();
    this.timer = setInterval(() => this.check(), tickMs(options.thresholdMs)).unref();
  }

  /** Reads the delays since the last look; a stall is counted and logged. */
  check(): void {
    const delayMs = this.histogram.max / 1e6;
    this.histogram.reset();
    const section = this.options.sections.takeLongestSection();
    if (delayMs > this.longestMs) {
      this.longestMs = delayMs;
      this.longest.set(delayMs / 1000);
    }
    if (delayMs < this.options.thresholdMs) return;
    this.stalls.inc();
    // The request is named when its own synchronous work was a stall by itself.
    const request = section && section.ms >= this.options.thresholdMs ? { method: section.method, route: section.route, request_ms: Math.round(section.ms) } : {};
    const during = 'route' in request ? ` while ${request.method} ${request.route} was being handled` : '';
    this.options.log.warn({ stall_ms: Math.round(delayMs), ...request }, `the event loop was blocked for ${Math.round(delayMs)} ms${during}: nothing was answered meanwhile`);
  }

  stop(): void {
    clearInterval(this.timer);
    this.histogram.disable();
  }
}
