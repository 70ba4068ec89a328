/**
 * A Redis outage is one warning when it starts and one info line when it ends, per process, however
 * many BullMQ workers and queues the process runs (the promise of docs/operations.md): `hrs serve` with all four
 * workers (mail, call log, history, sandbox) against a Redis of this file's own that is killed and
 * started again, its pino lines counted.
 */
import t from 'tap';
import { EventEmitter } from 'node:events';
import type { Worker } from 'bullmq';
import type { Redis } from '../../src/infra/redis.js';
import { isConnectionError, logWorkerErrors } from '../../workers/connection-errors.js';
import { createLogger } from '../../src/config/log.js';
import { startPlatform } from '../../src/platform.js';
import { baseFixture } from '../helpers/fixtures.js';
import { logCapture, testConfig } from '../helpers/platform.js';
import { privateRedis } from '../helpers/private-services.js';
import { smtpSink } from '../helpers/smtp.js';
import { loadFixture } from '../../src/registry/file/load.js';
import { until } from '../helpers/wait.js';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
/** pino's levels: info 30, warn 40, error 50. */
const INFO = 30;

t.test('hrs serve with its five workers: one warning per Redis outage, one info line when it ends', async (t) => {
  const redis = await privateRedis(t);
  const smtp = await smtpSink(t);
  const config = testConfig(t, { REDIS_URL: redis.url, SMTP_URL: `smtp://127.0.0.1:${smtp.port}`, SANDBOX: 'on', LOG_LEVEL: 'info' });
  const logs = logCapture();
  const platform = await startPlatform(config, createLogger('info', logs.stream));
  t.teardown(() => platform.stop('test over'));
  await loadFixture(platform.parts.sql, baseFixture(), { baseDir: process.cwd() });
  t.equal(platform.parts.config.sandbox, true);
  const listening = logs.lines.find((l) => l.msg === 'listening');
  t.same(listening?.workers, ['mail', 'call-log', 'history', 'change-log', 'sandbox'], 'five workers run in the process');
  await sleep(1000);

  const beforeOutage = logs.lines.length;
  await redis.stop();
  await sleep(6000);
  const outage = logs.lines.slice(beforeOutage).filter((l) => (l.level as number) >= INFO);
  t.same(
    outage.map((l) => [l.level, l.msg]),
    [[40, outage[0]?.msg]],
    `one line in 6 s of outage (${outage.length}: ${[...new Set(outage.map((l) => l.msg))].join(' | ')})`,
  );
  t.match(outage[0]?.msg, /^Redis unavailable: /, 'the warning says what the platform does meanwhile');

  const beforeRecovery = logs.lines.length;
  await redis.start();
  await until('Redis is back', () => (platform.parts.redis.isReady ? true : undefined));
  await sleep(3000);
  const recovery = logs.lines.slice(beforeRecovery).filter((l) => (l.level as number) >= INFO);
  t.same(recovery.map((l) => [l.level, l.msg]), [[INFO, 'Redis available again']], `one info line when it ends (${recovery.length})`);
  t.ok((recovery[0]?.down_ms as number) >= 6000, 'with how long it was down');

  // A second outage is reported again, once.
  const second = logs.lines.length;
  await redis.stop();
  await sleep(3000);
  await redis.start();
  await until('Redis is back', () => (platform.parts.redis.isReady ? true : undefined));
  await sleep(3000);
  t.same(
    logs.lines.slice(second).filter((l) => (l.level as number) >= INFO).map((l) => l.msg as string).map((m) => m.replace(/:.*/, '')),
    ['Redis unavailable', 'Redis available again'],
    'the next outage: one warning, one info line',
  );
});

t.test("a worker's other errors still show as errors; connection errors are debug lines", async (t) => {
  const logs = logCapture();
  const log = createLogger('debug', logs.stream);
  const worker = new EventEmitter() as unknown as Worker;
  const redis = { isReady: true } as Redis;
  logWorkerErrors(worker, redis, log, 'test worker');
  const refused = Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:1'), { code: 'ECONNREFUSED' });
  class SocketClosedUnexpectedlyError extends Error {}
  worker.emit('error', refused);
  worker.emit('error', new SocketClosedUnexpectedlyError('Socket closed unexpectedly'));
  worker.emit('error', new Error('Missing lock for job 7'));
  (redis as { isReady: boolean }).isReady = false;
  worker.emit('error', new Error('Missing lock for job 8'));
  await new Promise((resolve) => setImmediate(resolve));
  t.same(
    logs.lines.map((l) => [l.level, l.msg, (l.err as { message: string }).message]),
    [
      [20, 'test worker error: Redis connection', 'connect ECONNREFUSED 127.0.0.1:1'],
      [20, 'test worker error: Redis connection', 'Socket closed unexpectedly'],
      [50, 'test worker error', 'Missing lock for job 7'],
      [20, 'test worker error: Redis connection', 'Missing lock for job 8'],
    ],
  );
  t.ok(isConnectionError(refused));
  t.notOk(isConnectionError('ECONNREFUSED'));
});
