import { Child } from './child.js';
import { ProcessCpu } from './process-cpu.js';
import { runWrk } from './wrk.js';
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
  /** The load generator that drove the run. */
  generator: 'wrk' | 'autocannon';
  /** CPU the server process used during the measurement, in cores. */
  serverCpu: number;
  /** Cores busy in every PostgreSQL and every Redis process of this machine during the measurement. */
  databaseCpu: number;
  redisCpu: number;
  /** Answers (any status) received within the measured seconds. */
  measuredAnswers: number;
  /** Requests written over the whole run and answers received (wrk; with autocannon's drain, equal by construction). */
  sent: number;
  answered: number;
}

/** Microseconds of CPU per answered request: `cores` busy while answering `requestsPerSecond`. */
export function microsPerRequest(cores: number, requestsPerSecond: number): number {
  return requestsPerSecond > 0 ? (cores / requestsPerSecond) * 1e6 : Number.NaN;
}

export interface LoadTarget {
  url: string;
  headers?: Record<string, string>;
  method?: LoadRequest['method'];
  bodies?: string[];
  nowPlaceholder?: string;
  paths?: string[];
  /**
   * End each run gracefully (no request left in flight). wrk runs always do; for autocannon see
   * LoadRequest.drain.
   */
  drain?: boolean;
  /**
   * wrk (default) for throughput and CPU per request; autocannon where its per-response latency
   * accounting (every 2xx timed, from the measured seconds only) is what the figure needs.
   */
  generator?: 'wrk' | 'autocannon';
  /** Names the CPU profile of the measured seconds (BENCH_PROFILE_DIR); the URL's path when absent. */
  label?: string;
}

export interface MeasureHooks {
  /**
   * Runs before the counted load starts: with wrk before its first request (warm-up included, as
   * every request of the run is accounted for), with autocannon after its warm-up run.
   */
  beforeLoad?: () => Promise<void>;
  /** Runs once every answer of the run is in (wrk) or the measured run has ended (autocannon). */
  afterLoad?: () => Promise<void>;
  /** Called at the start and the end of the measured seconds, for sampling what the window covers. */
  windowStart?: () => void;
  windowEnd?: () => void;
}

/** What a measurement reads of the server: a ./child.ts child, or anything that reports its CPU alike (../processes.bench.ts). */
export type MeasuredServer = Pick<Child, 'name' | 'cpuMicros' | 'profile'>;

/**
 * Drives `url` from a separate process (wrk by default, see ./wrk.ts; autocannon on request) and
 * samples the server's CPU, PostgreSQL's and Redis' over the measured seconds.
 */
export async function measure(server: MeasuredServer, target: LoadTarget, options: BenchOptions, hooks: MeasureHooks = {}): Promise<Measurement> {
  return (target.generator ?? 'wrk') === 'wrk' ? measureWithWrk(server, target, options, hooks) : measureWithAutocannon(server, target, options, hooks);
}

async function measureWithWrk(server: MeasuredServer, target: LoadTarget, options: BenchOptions, hooks: MeasureHooks): Promise<Measurement> {
  const database = new ProcessCpu(['postgres']);
  const redis = new ProcessCpu(['redis-server']);
  const loader = new ProcessCpu(['wrk']);
  await hooks.beforeLoad?.();
  const run = runWrk({
    url: target.url,
    method: target.method ?? 'GET',
    headers: target.headers ?? {},
    bodies: target.bodies,
    nowPlaceholder: target.nowPlaceholder,
    paths: target.paths,
    connections: options.connections,
    warmupSeconds: options.warmupSeconds,
    durationSeconds: options.durationSeconds,
  });
  // A wrk that fails early ends the wait for its window too.
  const failed = run.result.then(() => new Promise<never>(() => {}));
  failed.catch(() => {}); // seen through the races and through `await run.result`
  await Promise.race([run.windowStart, failed]);
  const stopProfile = await server.profile(target.label ?? `${server.name} ${new URL(target.url).pathname}`);
  const cpuBefore = await server.cpuMicros();
  const startedMs = Date.now();
  database.start();
  redis.start();
  loader.start();
  hooks.windowStart?.();
  await Promise.race([run.windowEnd, failed]);
  hooks.windowEnd?.();
  const cpuAfter = await server.cpuMicros();
  const wallMs = Date.now() - startedMs;
  await stopProfile();
  const databaseCpu = database.stop();
  const redisCpu = redis.stop();
  const loaderCpu = loader.stop();
  const result = await run.result;
  await hooks.afterLoad?.();

  const measuredAnswers = Object.values(result.measuredByStatus).reduce((a, b) => a + b, 0);
  const seconds = (result.windowEndMs - result.windowStartMs) / 1000;
  const ok = (code: string) => (code >= '200' && code <= '299') || code === '304';
  const responses2xx = Object.entries(result.answeredByStatus).reduce((n, [code, count]) => n + (ok(code) ? count : 0), 0);
  return {
    generator: 'wrk',
    requestsPerSecond: measuredAnswers / seconds,
    requestsTotal: result.answered,
    p50Ms: result.p50Ms,
    p99Ms: result.p99Ms,
    responses2xx,
    non2xx: result.answered - responses2xx,
    statusCodes: result.answeredByStatus,
    errors: result.errors.connect + result.errors.read + result.errors.write + result.errors.timeout,
    timeouts: result.errors.timeout,
    durationSeconds: seconds,
    loaderCpu,
    serverCpu: (cpuAfter - cpuBefore) / 1000 / wallMs,
    databaseCpu,
    redisCpu,
    measuredAnswers,
    sent: result.sent,
    answered: result.answered,
  };
}

/** Drives `url` with autocannon from a separate process and samples the server's CPU around it. */
async function measureWithAutocannon(server: MeasuredServer, target: LoadTarget, options: BenchOptions, hooks: MeasureHooks): Promise<Measurement> {
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
  const database = new ProcessCpu(['postgres']);
  const redis = new ProcessCpu(['redis-server']);
  try {
    await hooks.beforeLoad?.();
    const cpuBefore = await server.cpuMicros();
    const started = performance.now();
    database.start();
    redis.start();
    hooks.windowStart?.();
    const reply = await loader.request({ type: 'go' }, 'result', (options.durationSeconds + 60) * 1000);
    hooks.windowEnd?.();
    const databaseCpu = database.stop();
    const redisCpu = redis.stop();
    await hooks.afterLoad?.();
    const wallMs = performance.now() - started;
    const serverCpu = (await server.cpuMicros()) - cpuBefore;
    const result = reply.result as LoadResult;
    const answered = Object.values(result.statusCodes).reduce((a, b) => a + b, 0);
    return {
      ...result,
      generator: 'autocannon',
      serverCpu: serverCpu / 1000 / wallMs,
      databaseCpu,
      redisCpu,
      measuredAnswers: Math.round(result.requestsPerSecond * result.durationSeconds),
      sent: answered + (target.drain ? 0 : result.errors),
      answered,
    };
  } finally {
    await loader.stop();
  }
}
