import { Counter, Gauge, type Registry } from 'prom-client';
import type { Logger } from 'pino';
import type { BlockingSection } from '../../http/server.js';

/**
 * The event-loop guard: one process's event loop measured (a timer every 10 ms, and how late it ran), and
 * every stall longer than EVENT_LOOP_STALL (1 s by default) reported as it ends: one warning in the log
 * with its length and, when a request's own checks and handler ran at least that long in one go, the
 * request (its method and route), and in `/metrics` (a counter of stalls, the longest delay seen). While the
 * loop is blocked nothing at all is answered, `/healthz` included: a stall is what an instance that
 * "froze" did, and this is how the next one is seen.
 *
 * The guard measures the delay itself rather than reading `perf_hooks.monitorEventLoopDelay`: that
 * histogram records a delay only when its own timer next runs, and its `reset()` forgets the stretch its
 * timer had begun, so a check that ran after a stall but before that timer lost the stall altogether
 * (and took the request's section with it). Here the check closes the stretch itself before reading it.
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

/** How often the loop's turn is timed: the resolution of a delay. */
const resolutionMs = 10;

/** How often the delays are read: often enough to report a stall soon after it ends, at most every half second. */
const tickMs = (thresholdMs: number) => Math.max(10, Math.min(500, Math.floor(thresholdMs / 2)));

export class EventLoopGuard {
  private readonly beat: NodeJS.Timeout;
  private readonly timer: NodeJS.Timeout;
  /** When the loop was last seen turning, and the longest delay since the last check. */
  private lastTurn = performance.now();
  private worstMs = 0;
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
      help: 'The longest event-loop delay this process has had since it started, in seconds (how late a 10 ms timer ran).',
      registers: [options.registry],
    });
    this.longest.set(0);
    this.beat = setInterval(() => this.turn(), resolutionMs).unref();
    this.timer = setInterval(() => this.check(), tickMs(options.thresholdMs)).unref();
  }

  /** The loop turned now: the time since it last did, beyond the timer's own interval, is a delay. */
  private turn(): void {
    const now = performance.now();
    const delayMs = now - this.lastTurn - resolutionMs;
    this.lastTurn = now;
    if (delayMs > this.worstMs) this.worstMs = delayMs;
  }

  /** Reads the delays since the last look (the stretch up to now included); a stall is counted and logged. */
  check(): void {
    this.turn();
    const delayMs = this.worstMs;
    this.worstMs = 0;
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
    clearInterval(this.beat);
  }
}
