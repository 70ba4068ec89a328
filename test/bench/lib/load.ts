import { Child } from './child.js';
import type { BenchOptions } from './scenario.js';

export interface LoadRequest {
  url: string;
  headers: Record<string, string>;
  connections: number;
  durationSeconds: number;
  warmupSeconds: number;
  /** HTTP method; GET when absent. */
  method?: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
  /**
   * Request bodies, sent in turn: request n (counted over every connection) carries body n modulo the
   * count. None: requests carry no body.
   */
  bodies?: string[];
  /**
   * A marker in the bodies replaced, each time a request is built, by the time of day as ISO 8601
   * (`new Date().toISOString()`), so every request says when it was sent.
   */
  nowPlaceholder?: string;
  /**
   * Request paths (with query, if any), sent in turn: request n (counted over every connection) goes
   * to path n modulo the count, on the host and port of `url`. None: every request goes to `url`'s.
   */
  paths?: string[];
  /**
   * End each run gracefully: when the time is up every connection waits for the answer to the
   * request it has out and sends no further one, so no request is left unanswered (and possibly
   * processed) when the run ends. The rate then counts the answers received within the measured
   * seconds; answers received while draining count everywhere else (status counts, latency).
   * Without it the run ends as autocannon ends it: sockets closed with requests still out.
   */
  drain?: boolean;
}

export interface LoadResult {
  /** Mean of autocannon's per-second request counts (with `drain`: answers within the measured seconds per second). */
  requestsPerSecond: number;
  requestsTotal: number;
  /** Latency percentiles over every 2xx and 304 response, in milliseconds. */
  p50Ms: number;
  p99Ms: number;
  /** 2xx and 304 responses received (with `drain`: including those received while draining). */
  responses2xx: number;
  non2xx: number;
  /** Responses by status code. */
  statusCodes: Record<string, number>;
  /** Connection errors, timeouts included. */
  errors: number;
  timeouts: number;
  durationSeconds: number;
  /** CPU the load generator used, in cores (1 = one core busy all the time). */
  loaderCpu: number;
}

export interface Measurement extends LoadResult {
  /** CPU the server process used during the measurement, in cores. */
  serverCpu: number;
}

export interface LoadTarget {
  url: string;
  headers?: Record<string, string>;
  method?: LoadRequest['method'];
  bodies?: string[];
  nowPlaceholder?: string;
  paths?: string[];
  drain?: boolean;
}

export interface MeasureHooks {
  /** Runs after the warm-up, right before the measured load starts (e.g. to read a counter). */
  beforeLoad?: () => Promise<void>;
  /** Runs right after the measured load has ended, inside the CPU sampling window. */
  afterLoad?: () => Promise<void>;
}

/** Drives `url` with autocannon from a separate process and samples the server's CPU around it. */
export async function measure(server: Child, target: LoadTarget, options: BenchOptions, hooks: MeasureHooks = {}): Promise<Measurement> {
  const request: LoadRequest = {
    url: target.url,
    headers: target.headers ?? {},
    connections: options.connections,
    durationSeconds: options.durationSeconds,
    warmupSeconds: options.warmupSeconds,
    method: target.method,
    bodies: target.bodies,
    nowPlaceholder: target.nowPlaceholder,
    paths: target.paths,
    drain: target.drain,
  };
  const { child: loader } = await Child.start('load generator', new URL('./load-generator.ts', import.meta.url), {
    // One argument: Linux takes up to 128 KiB in one, room for batches of several hundred transmissions
    // (or a few thousand paths).
    args: [JSON.stringify(request)],
    readyTimeoutMs: (options.warmupSeconds + 60) * 1000,
  });
  try {
    await hooks.beforeLoad?.();
    const cpuBefore = await server.cpuMicros();
    const started = performance.now();
    const reply = await loader.request({ type: 'go' }, 'result', (options.durationSeconds + 60) * 1000);
    await hooks.afterLoad?.();
    const wallMs = performance.now() - started;
    const serverCpu = (await server.cpuMicros()) - cpuBefore;
    return { ...(reply.result as LoadResult), serverCpu: serverCpu / 1000 / wallMs };
  } finally {
    await loader.stop();
  }
}
