/**
 * The rate-limit floor: a bare uWebSockets.js endpoint that does only what no export v2 request can
 * skip. `GET /*` counts the request against the export v2 per-user limits through the platform's own
 * `RateLimiter` (the same Lua script, the same batching per event-loop turn, the same Redis), then
 * answers 200 with a fixed body (BENCH_FLOOR_BODY: the platform's answer for the same station), or
 * for `GET /answer/I` with one of the platform's answers byte for byte (for the floor of its latency). No
 * token check, routing, live-status read or response headers: the gap between this and the platform is
 * what those cost; the gap between this and hello world is what exact, shared rate limits cost.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import uWS from 'uWebSockets.js';
import { openRedis } from '../../../src/infra/redis.js';
import { EXPORT_V2_DAY_LIMIT, EXPORT_V2_MINUTE_LIMIT } from '../../../src/api/export-v2/family.js';
import { RateLimiter } from '../../../src/infra/rate-limit.js';
import { onStop, ready } from './ipc.js';

const body = process.env.BENCH_FLOOR_BODY ?? '';
const redis = await openRedis(process.env.REDIS_URL || 'redis://127.0.0.1:6379', 'hrs-bench-rate-floor');
const limiter = new RateLimiter(redis, `${process.env.BENCH_REDIS_PREFIX ?? 'hrs-bench'}:floor`);
// As the benchmark's platform: limits far beyond the load, so every request is counted and allowed.
const limits = [
  { ...EXPORT_V2_MINUTE_LIMIT, limit: 100_000_000 },
  { ...EXPORT_V2_DAY_LIMIT, limit: 100_000_000 },
];

/**
 * Bodies of `GET /answer/I`: the files `answer-0`, `answer-1`, … in the folder BENCH_FLOOR_ANSWERS
 * names, read once: answers exactly as the platform sent them, encoded or not. The bytes themselves
 * matter to a load generator: autocannon decodes every body it receives as UTF-8, which costs it
 * several times more for gzip's bytes than for ASCII of the same length.
 */
const answers: Buffer[] = [];
const answersDir = process.env.BENCH_FLOOR_ANSWERS;
if (answersDir) for (let i = 0; existsSync(join(answersDir, `answer-${i}`)); i++) answers.push(readFileSync(join(answersDir, `answer-${i}`)));

function counted(res: uWS.HttpResponse, answer: string | Buffer): void {
  let aborted = false;
  res.onAborted(() => {
    aborted = true;
  });
  limiter.hit('export_v2:user:alice', limits).then(
    (result) => {
      if (aborted) return;
      res.cork(() => (result.allowed ? res.writeStatus('200 OK').end(answer) : res.writeStatus('429 Too Many Requests').end()));
    },
    (err: unknown) => {
      process.stderr.write(`rate-limit floor: ${(err as Error).message}\n`);
      if (!aborted) res.cork(() => res.writeStatus('500 Internal Server Error').end());
    },
  );
}

const app = uWS
  .App()
  .get('/answer/:i', (res, req) => {
    const answer = answers[Number(req.getParameter(0))];
    if (answer) counted(res, answer);
    else res.writeStatus('404 Not Found').end();
  })
  .get('/*', (res) => counted(res, body));

app.listen('127.0.0.1', 0, (socket) => {
  if (!socket) {
    process.stderr.write('rate-limit floor: cannot listen on 127.0.0.1\n');
    process.exit(1);
  }
  onStop(async () => {
    uWS.us_listen_socket_close(socket);
    await redis.quit();
  });
  ready({ port: uWS.us_socket_local_port(socket as unknown as uWS.us_socket) });
});
