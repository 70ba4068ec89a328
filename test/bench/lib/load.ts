import { Child } from './child.js';
import type { BenchOptions } from './scenario.js';

export interface LoadRequest {
  url: string;
  headers: Record<string, string>;
  connections: number;
  durationSeconds: number;
  warmupSeconds: number;
}

export interface LoadResult {
  /** Mean of autocannon's per-second request counts. */
  requestsPerSecond: number;
  requestsTotal: number;
  /** Latency percentiles over every 2xx response, in milliseconds. */
  p50Ms: number;
  p99Ms: number;
  non2xx: number;
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

/** Drives `url` with autocannon from a separate process and samples the server's CPU around it. */
export async function measure(
  server: Child,
  target: { url: string; headers?: Record<string, string> },
  options: BenchOptions,
): Promise<Measurement> {
  const request: LoadRequest = {
    url: target.url,
    headers: target.headers ?? {},
    connections: options.connections,
    durationSeconds: options.durationSeconds,
    warmupSeconds: options.warmupSeconds,
  };
  const { child: loader } = await Child.start('load generator', new URL('./load-generator.ts', import.meta.url), {
    args: [JSON.stringify(request)],
    readyTimeoutMs: (options.warmupSeconds + 60) * 1000,
  });
  try {
    const cpuBefore = await server.cpuMicros();
    const started = performance.now();
    const reply = await loader.request({ type: 'go' }, 'result', (options.durationSeconds + 60) * 1000);
    const wallMs = performance.now() - started;
    const serverCpu = (await server.cpuMicros()) - cpuBefore;
    return { ...(reply.result as LoadResult), serverCpu: serverCpu / 1000 / wallMs };
  } finally {
    await loader.stop();
  }
}
