/**
 * The mail worker as `hrs worker` runs it (startMailWorker with the outbox wired, token e-mails
 * rendered by tokenMailRenderer, as workers/index.ts does), without the sweep's schedule and without
 * the other workers. The parent chooses the database (migrated already), the Redis prefix and the
 * SMTP server: BENCH_DATABASE_URL, BENCH_REDIS_PREFIX, BENCH_SMTP_URL; REDIS_URL is taken from the
 * environment when set. BENCH_MAIL_CONCURRENCY, when set, is handed to the worker as its concurrency
 * (otherwise the worker's default). Logs are off, as in the other benchmark servers.
 */
import { connect } from '../../../db/connect.js';
import { DEFAULT_REDIS_URL } from '../../../src/config/config.js';
import { closeRedis, openRedis } from '../../../src/infra/redis.js';
import { createLogger } from '../../../src/config/log.js';
import { startMailWorker, tokenMailRenderer } from '../../../workers/mail/processor.js';
import { openQueue, QUEUES } from '../../../workers/queues.js';
import { onStop, ready } from './ipc.js';

const MAIL_FROM = 'HRS signal platform <no-reply@bench.example>';
const PORTAL_URL = 'http://127.0.0.1:8080/portal/';
const TIME_ZONE = 'Europe/Berlin';

const databaseUrl = process.env.BENCH_DATABASE_URL;
const redisPrefix = process.env.BENCH_REDIS_PREFIX;
const smtpUrl = process.env.BENCH_SMTP_URL;
if (!databaseUrl || !redisPrefix || !smtpUrl) throw new Error('BENCH_DATABASE_URL, BENCH_REDIS_PREFIX and BENCH_SMTP_URL are required');
const concurrency = process.env.BENCH_MAIL_CONCURRENCY ? Number(process.env.BENCH_MAIL_CONCURRENCY) : undefined;

const log = createLogger('silent');
const sql = connect(databaseUrl);
const redis = await openRedis(process.env.REDIS_URL || DEFAULT_REDIS_URL, 'hrs-bench-mail-worker');
const queue = openQueue(QUEUES.mail, redis, redisPrefix, log);
const worker = startMailWorker({
  redis,
  redisPrefix,
  smtpUrl,
  mailFrom: MAIL_FROM,
  log,
  concurrency,
  outbox: {
    sql,
    queue,
    render: tokenMailRenderer(PORTAL_URL, TIME_ZONE),
  },
});
onStop(async () => {
  await worker.close();
  await queue.close();
  await closeRedis(redis);
  await sql.end({ timeout: 5 });
});
await worker.waitUntilReady();
ready({ concurrency: worker.opts.concurrency });
