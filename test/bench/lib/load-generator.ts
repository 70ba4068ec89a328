/**
 * The load generator: autocannon in a process of its own, so it shares no event loop with the server
 * under test. Warms up, reports `ready`, waits for `go`, measures and sends `result`.
 * Latency percentiles are computed here from every 2xx response's timing (autocannon's own histogram
 * rounds to whole milliseconds, too coarse for sub-millisecond servers).
 *
 * Bodies (LoadRequest.bodies) are handed out in turn across all connections, each built when its
 * request is (autocannon's setupRequest), with the current time in place of the time marker; paths
 * (LoadRequest.paths) the same way.
 */
import autocannon from 'autocannon';
import { next, ready, send } from './ipc.js';
import type { LoadRequest, LoadResult } from './load.js';

const request = JSON.parse(process.argv[2] ?? '{}') as LoadRequest;
const method = request.method ?? 'GET';

/** Each body split at the time marker, so building a request is one join. */
const bodies = (request.bodies ?? []).map((body) => (request.nowPlaceholder ? body.split(request.nowPlaceholder) : [body]));
let built = 0;
function nextBody(): string {
  const parts = bodies[built++ % bodies.length]!;
  return parts.length === 1 ? parts[0]! : parts.join(new Date().toISOString());
}

const paths = request.paths ?? [];
let routed = 0;
const nextPath = (): string => paths[routed++ % paths.length]!;

/** Each request's varying parts, when there are any (else autocannon builds the request once per connection). */
function setupRequest(req: autocannon.Request): autocannon.Request {
  return { ...req, ...(bodies.length > 0 ? { body: nextBody() } : {}), ...(paths.length > 0 ? { path: nextPath() } : {}) };
}

/** What draining needs of an autocannon client (not in its typings; checked when a client is made). */
interface DrainableClient {
  /** Requests written on this connection so far. */
  reqsMade: number;
  /** Once `reqsMade` reaches it, the client closes instead of sending the next request. */
  responseMax: number | undefined;
}

interface Run {
  result: autocannon.Result;
  /** Responses of any status received before the time was up. */
  answeredInTime: number;
  /** Milliseconds from the start until the time was up (with drain) or the run ended. */
  loadedMs: number;
}

function cannon(durationSeconds: number, onResponse?: (status: number, ms: number) => void): Promise<Run> {
  return new Promise((resolve, reject) => {
    const clients: DrainableClient[] = [];
    let draining = false;
    let answeredInTime = 0;
    const started = performance.now();
    let loadedMs = 0;
    let timer: NodeJS.Timeout | undefined;
    const instance = autocannon(
      {
        url: request.url,
        method,
        headers: request.headers,
        connections: request.connections,
        pipelining: 1,
        // With drain the run ends once every connection has its last answer; the longer duration
        // only bounds a drain that would not end.
        duration: request.drain ? durationSeconds + 30 : durationSeconds,
        // How soon after the last connection closes the run is over (samples are not used then).
        ...(request.drain ? { sampleInt: 100 } : {}),
        timeout: 10,
        ...(bodies.length > 0 || paths.length > 0 ? { requests: [{ method, setupRequest }] } : {}),
        ...(request.drain
          ? {
              setupClient: (client: autocannon.Client) => {
                const c = client as unknown as Partial<DrainableClient>;
                if (typeof c.reqsMade !== 'number' || !('responseMax' in c)) {
                  throw new Error('this autocannon version has no reqsMade/responseMax on its clients: cannot drain');
                }
                clients.push(c as DrainableClient);
              },
            }
          : {}),
      },
      (err, result) => {
        clearTimeout(timer);
        if (err) reject(err);
        else resolve({ result, answeredInTime, loadedMs: loadedMs || performance.now() - started });
      },
    );
    instance.on('response', (_client, status, _bytes, ms) => {
      if (!draining) answeredInTime++;
      onResponse?.(status, ms);
    });
    if (request.drain) {
      timer = setTimeout(() => {
        draining = true;
        loadedMs = performance.now() - started;
        // After the answer it is waiting for, each connection closes instead of sending again.
        for (const client of clients) client.responseMax = Math.max(1, client.reqsMade);
      }, durationSeconds * 1000);
    }
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
const run = await cannon(request.durationSeconds, (status, ms) => {
  // A 304 is a success too (a revalidated cache): its latency counts.
  if ((status < 200 || status > 299) && status !== 304) return;
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
const { result } = run;

const summary: LoadResult = {
  requestsPerSecond: request.drain ? run.answeredInTime / (run.loadedMs / 1000) : result.requests.average,
  requestsTotal: result.requests.total,
  p50Ms: percentile(sorted, 50),
  p99Ms: percentile(sorted, 99),
  responses2xx: count,
  non2xx: result.non2xx,
  statusCodes: Object.fromEntries(Object.entries(result.statusCodeStats ?? {}).map(([code, stat]) => [code, stat?.count ?? 0])),
  errors: result.errors,
  timeouts: result.timeouts,
  durationSeconds: request.drain ? run.loadedMs / 1000 : result.duration,
  loaderCpu: (cpu.user + cpu.system) / 1000 / wallMs,
};
send({ type: 'result', result: summary });
// The parent stops this process once it has the result.
