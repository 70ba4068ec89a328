/**
 * The load generator: autocannon in a process of its own, so it shares no event loop with the server
 * under test. Warms up, reports `ready`, waits for `go`, measures and sends `result`.
 * Latency percentiles are computed here from every 2xx response's timing (autocannon's own histogram
 * rounds to whole milliseconds, too coarse for sub-millisecond servers).
 */
import autocannon from 'autocannon';
import { next, ready, send } from './ipc.js';
import type { LoadRequest, LoadResult } from './load.js';

const request = JSON.parse(process.argv[2] ?? '{}') as LoadRequest;

function cannon(durationSeconds: number, onResponse?: (status: number, ms: number) => void): Promise<autocannon.Result> {
  return new Promise((resolve, reject) => {
    const instance = autocannon(
      {
        url: request.url,
        method: 'GET',
        headers: request.headers,
        connections: request.connections,
        pipelining: 1,
        duration: durationSeconds,
        timeout: 10,
      },
      (err, result) => (err ? reject(err) : resolve(result)),
    );
    if (onResponse) instance.on('response', (_client, status, _bytes, ms) => onResponse(status, ms));
  });
}

function percentile(sorted: Float64Array, p: number): number {
  if (sorted.length === 0) return Number.NaN;
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;
}

if (request.warmupSeconds > 0) await cannon(request.warmupSeconds);
ready();
await next('go');

let times = new Float64Array(1 << 20);
let count = 0;
const cpuBefore = process.cpuUsage();
const started = performance.now();
const result = await cannon(request.durationSeconds, (status, ms) => {
  if (status < 200 || status > 299) return;
  if (count === times.length) {
    const bigger = new Float64Array(times.length * 2);
    bigger.set(times);
    times = bigger;
  }
  times[count++] = ms;
});
const wallMs = performance.now() - started;
const cpu = process.cpuUsage(cpuBefore);
const sorted = times.subarray(0, count).sort();

const summary: LoadResult = {
  requestsPerSecond: result.requests.average,
  requestsTotal: result.requests.total,
  p50Ms: percentile(sorted, 50),
  p99Ms: percentile(sorted, 99),
  non2xx: result.non2xx,
  errors: result.errors,
  timeouts: result.timeouts,
  durationSeconds: result.duration,
  loaderCpu: (cpu.user + cpu.system) / 1000 / wallMs,
};
send({ type: 'result', result: summary });
// The parent stops this process once it has the result.
