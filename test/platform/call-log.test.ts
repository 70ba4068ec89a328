import t from 'tap';
import type { Queue } from 'bullmq';
import { insertCallLogs, type CallLogRow } from '../../db/queries/call-logs.js';
import { createLogger } from '../../src/config/log.js';
import { MAX_STORED_BODY_BYTES, capBody, type CallLogEntry } from '../../workers/call-log/job.js';
import { startCallLogWorker, type CallLogWorker } from '../../workers/call-log/processor.js';
import { CallLogRecorder } from '../../workers/call-log/producer.js';
import type { CallLogMode } from '../../src/domain/vocabulary.js';
import { QUEUES, openQueue } from '../../workers/queues.js';
import { baseFixture, TOKENS } from '../helpers/fixtures.js';
import { ADMIN_TOKEN, get, logCapture, startTestPlatform, type TestPlatform } from '../helpers/platform.js';
import { until } from '../helpers/wait.js';

type Test = Parameters<typeof startTestPlatform>[0];


/**
 * The platform (started without workers) with the call-log worker beside it, and a queue handle to
 * look at the call-log jobs. Three extra originators, one per mode.
 */
async function setup(t: Test, workerOptions: { batchSize?: number; maxWaitMs?: number } = {}) {
  const p = await startTestPlatform(t, { fixture: baseFixture() });
  await p.load({
    originators: [
      { id: 'log-disabled', name: 'Logs nothing', call_log_mode: 'disabled' },
      { id: 'log-errors', name: 'Logs failures', call_log_mode: 'errors' },
      { id: 'log-always', name: 'Logs everything', call_log_mode: 'always' },
    ],
  });
  const { redis, config, log } = p.parts;
  const queue = openQueue(QUEUES.callLog, redis, config.redisPrefix);
  let worker: CallLogWorker | undefined;
  // Teardowns run last-added first: the worker stops before the platform closes its connections.
  t.teardown(async () => {
    await queue.obliterate({ force: true });
    await queue.close();
  });
  const startWorker = () => {
    worker = startCallLogWorker({ redis, redisPrefix: config.redisPrefix, sql: p.sql, log, ...workerOptions });
    t.teardown(() => worker!.close());
    return worker;
  };
  return { p, queue, startWorker };
}

/** Resolves once no call-log job is waiting, active or scheduled for a retry. */
async function drained(queue: Queue): Promise<void> {
  await until('the call-log queue to drain', async () => {
    const counts = await queue.getJobCounts('wait', 'active', 'delayed', 'prioritized', 'waiting-children');
    return Object.values(counts).every((n) => n === 0) ? true : undefined;
  });
}

async function rows(p: TestPlatform, originator?: string) {
  return p.sql<
    { id: string; originator_id: string; request_time: Date; endpoint: string; station_ids: string[]; status: number; request_body: string; response_body: string | null; error_details: unknown; request_id: string }[]
  >`SELECT * FROM call_logs ${originator ? p.sql`WHERE originator_id = ${originator}` : p.sql``} ORDER BY id`;
}

function entry(originator: string, status: number, extra: Partial<CallLogEntry> = {}): CallLogEntry {
  return {
    originator,
    requestTime: new Date('2026-05-01T08:00:00.123Z'),
    endpoint: 'POST /import/v2/signal/usage/',
    stationIds: ['BERLA', 'HAMBG'],
    status,
    requestBody: Buffer.from('[{"hrs_id":"BERLA"},{"hrs_id":"HAMBG"}]'),
    responseBody: status >= 400 ? '[{"nozzles":["unknown nozzle id: N9"]},{}]' : undefined,
    errorDetails: status >= 400 ? { code: 'validation_failed', issues: [{ path: [0, 'nozzles'], message: 'unknown nozzle id: N9' }] } : undefined,
    requestId: `req-${originator}-${status}`,
    ...extra,
  };
}

t.test('each mode records what it says', async (t) => {
  const { p, queue, startWorker } = await setup(t);
  const modes: CallLogMode[] = ['disabled', 'errors', 'always'];
  for (const mode of modes) {
    await p.parts.callLog.record(mode, entry(`log-${mode}`, 204));
    await p.parts.callLog.record(mode, entry(`log-${mode}`, 400));
  }
  t.equal(await queue.count(), 3, 'disabled enqueued nothing, errors one entry, always two');

  const worker = startWorker();
  await until('the three rows', () => (worker.stats.rows === 3 ? true : undefined));
  await drained(queue);

  t.same(await rows(p, 'log-disabled'), [], 'disabled: nothing stored');

  const failedOnly = await rows(p, 'log-errors');
  t.same(failedOnly.map((r) => r.status), [400], 'errors: only the failed call');
  t.match(failedOnly[0], {
    originator_id: 'log-errors',
    request_time: new Date('2026-05-01T08:00:00.123Z'),
    endpoint: 'POST /import/v2/signal/usage/',
    station_ids: ['BERLA', 'HAMBG'],
    request_body: '[{"hrs_id":"BERLA"},{"hrs_id":"HAMBG"}]',
    response_body: '[{"nozzles":["unknown nozzle id: N9"]},{}]',
    error_details: { code: 'validation_failed', issues: [{ path: [0, 'nozzles'], message: 'unknown nozzle id: N9' }] },
    request_id: 'req-log-errors-400',
  });

  const both = await rows(p, 'log-always');
  t.same(both.map((r) => r.status), [204, 400], 'always: both calls, in order');
  t.equal(both[0]!.request_body, '[{"hrs_id":"BERLA"},{"hrs_id":"HAMBG"}]', 'a successful call keeps its request body');
  t.equal(both[0]!.response_body, null, 'but no response body');
  t.equal(both[0]!.error_details, null, 'and no error details');
  t.equal(both[1]!.response_body, '[{"nozzles":["unknown nozzle id: N9"]},{}]');

  // A successful call's response body and error details are dropped even when a handler passes them.
  await p.parts.callLog.record('always', entry('log-always', 200, { responseBody: '{"x":1}', errorDetails: { x: 1 }, requestId: 'ok-with-extras' }));
  await until('the fourth row', () => (worker.stats.rows === 4 ? true : undefined));
  t.match((await rows(p, 'log-always'))[2], { request_id: 'ok-with-extras', response_body: null, error_details: null });
});

t.test('bodies are stored as received, capped with a marker; strings PostgreSQL refuses are made storable', async (t) => {
  const { p, startWorker } = await setup(t);
  const worker = startWorker();

  // One byte, then two-byte characters: the cap falls inside one and the cut backs off by a byte.
  const big = Buffer.from(`[${'é'.repeat(MAX_STORED_BODY_BYTES)}]`);
  const nul = '{"note":"a\u0000b","lone":"\ud800"}';
  await p.parts.callLog.record('always', entry('log-always', 413, { requestBody: big, responseBody: big, requestId: 'big' }));
  await p.parts.callLog.record('always', entry('log-always', 500, {
    requestBody: Buffer.from(nul),
    stationIds: ['BER\u0000LA', 'A,"B}'],
    errorDetails: { 'key\u0000': ['v\u0000', '\udc00x'], nested: { deep: null } },
    requestId: 'nul',
  }));
  await p.parts.callLog.record('always', entry('log-always', 204, { requestBody: undefined, requestId: 'empty' }));
  await until('three rows', () => (worker.stats.rows === 3 ? true : undefined)).catch((err) => {
    throw new Error(`${err.message}: ${JSON.stringify(p.logs.lines.filter((l) => (l.level as number) >= 40).slice(0, 3))}`);
  });

  const [capped, cleaned, empty] = await rows(p, 'log-always');
  const kept = MAX_STORED_BODY_BYTES - 1;
  const marker = `\n[truncated: ${big.length} bytes received, the first ${kept} stored]`;
  t.equal(capped!.request_body, `[${'é'.repeat((kept - 1) / 2)}${marker}`, 'cut at a character boundary below the cap, with the marker');
  t.notOk(capped!.request_body.includes('\uFFFD'), 'no character cut in half');
  t.ok(capped!.response_body!.endsWith(marker), 'the response body is capped the same way');

  t.equal(cleaned!.request_body, '{"note":"a\uFFFDb","lone":"\uFFFD"}', 'U+0000 and a lone surrogate become U+FFFD');
  t.same(cleaned!.station_ids, ['BER\uFFFDLA', 'A,"B}'], 'station ids kept as given, whatever they hold');
  t.same(cleaned!.error_details, { 'key\uFFFD': ['v\uFFFD', '\uFFFDx'], nested: { deep: null } });
  t.equal(empty!.request_body, '', 'no body: empty');
});

t.test('capBody', async (t) => {
  t.equal(capBody(undefined), '');
  t.equal(capBody('short'), 'short');
  t.equal(capBody(Buffer.from('short')), 'short');
  // 'ü' is two bytes: a cap of 5 bytes falls inside the third one and backs off to 4.
  t.equal(capBody('üüüü', 5), 'üü\n[truncated: 8 bytes received, the first 4 stored]');
  t.equal(capBody('abcdef', 6), 'abcdef', 'exactly at the cap: whole');
});

t.test('a failed enqueue is logged and never fails the request', async (t) => {
  const logs = logCapture();
  const log = createLogger('info', logs.stream);
  const queue = { add: () => Promise.reject(new Error('Redis is gone')), close: () => Promise.resolve() } as unknown as Queue;
  const recorder = new CallLogRecorder(queue, log);
  await t.resolves(recorder.record('always', entry('log-always', 204)));
  await t.resolves(recorder.record('disabled', entry('log-always', 500)), 'skipped entries never reach the queue');
  t.match(logs.lines, [{ level: 40, msg: 'call log entry could not be enqueued', originator: 'log-always', err: { message: 'Redis is gone' } }]);

  // An entry no row could hold is dropped with an error, not thrown at the handler.
  await t.resolves(recorder.record('always', entry('log-always', 99)));
  t.match(logs.lines[1], { level: 50, msg: 'call log entry dropped', request_id: 'req-log-always-99' });

  await recorder.close();
  await t.resolves(recorder.record('always', entry('log-always', 204)));
  t.match(logs.lines[2], { level: 40, msg: 'call log entry dropped: the recorder is closed' });
});

t.test('entries are written in batches: many rows per INSERT', async (t) => {
  const { p, queue, startWorker } = await setup(t);
  const worker = startWorker();
  const started = Date.now();
  const total = 500;
  await Promise.all(
    Array.from({ length: total }, (_, i) =>
      p.parts.callLog.record('errors', entry('log-errors', 400 + (i % 100), { requestId: `batch-${i}`, requestTime: new Date(started + i) })),
    ),
  );
  await until(`${total} rows`, () => (worker.stats.rows === total ? true : undefined));
  await drained(queue);

  const stored = await rows(p, 'log-errors');
  t.equal(stored.length, total, 'every entry landed once');
  t.same(new Set(stored.map((r) => r.request_id)).size, total, 'no entry twice');
  t.ok(worker.stats.flushes < total, `fewer INSERTs than entries (${worker.stats.flushes} for ${total})`);
  t.ok(worker.stats.flushes >= Math.ceil(total / 200), 'at most 200 entries per INSERT');
  t.ok(worker.stats.flushes <= 50, `a handful of INSERTs, not one per entry or two (${worker.stats.flushes})`);
  t.equal(worker.stats.failedFlushes, 0);
  t.equal(await queue.getCompletedCount(), 0, 'completed jobs do not stay in Redis');
});

t.test('a lone entry is written within the wait, not held back for a full batch', async (t) => {
  const { p, startWorker } = await setup(t, { maxWaitMs: 200 });
  const worker = startWorker();
  await until('the worker to be ready', () => (worker.worker.isRunning() ? true : undefined));
  const before = Date.now();
  await p.parts.callLog.record('errors', entry('log-errors', 500));
  await until('the row', () => (worker.stats.rows === 1 ? true : undefined));
  t.ok(Date.now() - before < 5000, 'written promptly');
  t.equal(worker.stats.flushes, 1);
});

t.test('a failed INSERT fails the jobs of its batch and BullMQ retries them', async (t) => {
  const { p, queue, startWorker } = await setup(t);
  await p.sql`ALTER TABLE call_logs RENAME TO call_logs_away`;
  const renamed = { back: false };
  t.teardown(async () => {
    if (!renamed.back) await p.sql`ALTER TABLE call_logs_away RENAME TO call_logs`;
  });
  for (let i = 0; i < 3; i++) await p.parts.callLog.record('always', entry('log-always', 204, { requestId: `retry-${i}` }));
  const worker = startWorker();

  await until('the failed INSERT', () => (worker.stats.failedFlushes > 0 ? true : undefined));
  await until('the jobs scheduled for a retry', async () => ((await queue.getDelayedCount()) === 3 ? true : undefined));
  const delayed = await queue.getDelayed();
  t.same(delayed.map((j) => j.attemptsMade), [1, 1, 1], 'each tried once');
  t.match(delayed[0]!.failedReason, /^writing call log entries failed: /);
  t.equal(worker.stats.rows, 0);
  t.equal(
    p.logs.lines.filter((l) => l.msg === 'writing call log entries failed; the jobs will be retried').length,
    worker.stats.failedFlushes,
    'one warning per failed INSERT, not one per job',
  );

  await p.sql`ALTER TABLE call_logs_away RENAME TO call_logs`;
  renamed.back = true;
  await until('the retried rows', () => (worker.stats.rows === 3 ? true : undefined), 30_000);
  t.same((await rows(p, 'log-always')).map((r) => r.request_id), ['retry-0', 'retry-1', 'retry-2'], 'stored once each');
});

t.test('entries of an originator removed meanwhile are skipped without failing their batch', async (t) => {
  const { p, queue, startWorker } = await setup(t);
  await p.parts.callLog.record('always', entry('log-always', 204, { requestId: 'kept' }));
  await p.parts.callLog.record('always', entry('ghost', 204, { requestId: 'gone' }));
  const worker = startWorker();
  await until('the batch', () => (worker.stats.rows + worker.stats.skipped === 2 ? true : undefined));
  await drained(queue);
  t.match(worker.stats, { rows: 1, skipped: 1, failedFlushes: 0 });
  t.same((await rows(p)).map((r) => r.request_id), ['kept']);
});

t.test('each entry keeps the client address: behind a trusted proxy the one it forwarded, read in time at any log level', async (t) => {
  const p = await startTestPlatform(t, { fixture: baseFixture(), env: { TRUST_PROXY: '127.0.0.1', LOG_LEVEL: 'warn' } });
  await p.load({ originators: [{ id: 'mon-1', name: 'Monitoring One', call_log_mode: 'always' }] });
  const { redis, config, log } = p.parts;
  const queue = openQueue(QUEUES.callLog, redis, config.redisPrefix);
  t.teardown(async () => {
    await queue.obliterate({ force: true });
    await queue.close();
  });
  const worker = startCallLogWorker({ redis, redisPrefix: config.redisPrefix, sql: p.sql, log });
  t.teardown(() => worker.close());
  const post = async (xff: string | undefined, body: string) => {
    const res = await fetch(`${p.url}/import/v2/signal/availability/`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${TOKENS.import_v2}`, 'Content-Type': 'application/json', ...(xff ? { 'X-Forwarded-For': xff } : {}) },
      body,
    });
    await res.arrayBuffer();
    return res.status;
  };
  t.equal(await post('203.0.113.5', '[{"hrs":"NOPE"}]'), 400);
  t.equal(await post('6.6.6.6, 203.0.113.6', '[]'), 400);
  t.equal(await post(undefined, '[]'), 400);
  await until('three rows', () => (worker.stats.rows === 3 ? true : undefined)).catch((err) => {
    throw new Error(`${err.message}: ${JSON.stringify(p.logs.lines.filter((l) => (l.level as number) >= 40).slice(0, 3))}`);
  });
  const stored = await p.sql<{ status: number; client_address: string | null }[]>`
    SELECT status, client_address FROM call_logs WHERE originator_id = 'mon-1' ORDER BY id`;
  t.same(stored, [
    { status: 400, client_address: '203.0.113.5' },
    { status: 400, client_address: '203.0.113.6' },
    { status: 400, client_address: '127.0.0.1' },
  ]);
});

t.test('GET /admin/v1/call-logs', async (t) => {
  const { p } = await setup(t);
  const row = (originator: string, request_time: string, request_id: string, status = 400): CallLogRow => ({
    originator,
    request_time,
    endpoint: 'POST /import/v2/signal/availability/',
    station_ids: ['BERLA'],
    status,
    request_body: '[]',
    response_body: status >= 400 ? '{"detail":"no"}' : null,
    error_details: status >= 400 ? { code: 'x' } : null,
    request_id,
    client_address: '198.51.100.4',
  });
  // Inserted out of time order; two share a request time (the later id comes first).
  await insertCallLogs(p.sql, [
    row('log-errors', '2026-05-01T10:00:00Z', 'b'),
    row('log-errors', '2026-05-01T08:00:00Z', 'a'),
    row('log-errors', '2026-05-01T11:30:00+02:00', 'c1'),
    row('log-errors', '2026-05-01T10:00:00Z', 'b2', 204),
    row('log-always', '2026-05-01T11:00:00Z', 'other'),
  ]);
  const list = async (query: string, token: string | null = ADMIN_TOKEN) => {
    const res = await get(`${p.url}/admin/v1/call-logs${query}`, token ?? undefined);
    return { status: res.status, body: await res.json() };
  };

  await t.test('newest first, every field', async (t) => {
    const { status, body } = await list('?originator=log-errors');
    t.equal(status, 200);
    t.same(body.call_logs.map((l: { request_id: string }) => l.request_id), ['b2', 'b', 'c1', 'a']);
    t.same(Object.keys(body.call_logs[0]).sort(), [
      'client_address', 'endpoint', 'error_details', 'id', 'originator', 'request_body', 'request_id', 'request_time', 'response_body', 'station_ids', 'status',
    ]);
    t.match(body.call_logs[1], {
      id: /^\d+$/,
      originator: 'log-errors',
      request_time: '2026-05-01T10:00:00.000Z',
      endpoint: 'POST /import/v2/signal/availability/',
      station_ids: ['BERLA'],
      status: 400,
      request_body: '[]',
      response_body: '{"detail":"no"}',
      error_details: { code: 'x' },
      request_id: 'b',
    });
    t.match(body.call_logs[0], { status: 204, response_body: null, error_details: null });
    t.same((await list('?originator=nobody')).body, { call_logs: [] }, 'an unknown originator has no entries');
  });

  await t.test('since keeps entries at or after it', async (t) => {
    const ids = async (q: string) => (await list(q)).body.call_logs.map((l: { request_id: string }) => l.request_id);
    t.same(await ids('?originator=log-errors&since=2026-05-01T10:00:00Z'), ['b2', 'b'], 'inclusive');
    t.same(await ids('?originator=log-errors&since=2026-05-01T11:00:00%2B01:00'), ['b2', 'b'], 'any offset');
    t.same(await ids('?originator=log-errors&since=2026-05-01T11:00:00+01:00'), ['b2', 'b'], 'an unencoded + (a space) is read as +');
    t.same(await ids('?originator=log-errors&since=2026-05-01T10:00:00.001Z'), [], 'after every entry');
  });

  await t.test('limit: default 100, at most 1000', async (t) => {
    await insertCallLogs(p.sql, Array.from({ length: 1050 }, (_, i) => row('log-always', new Date(Date.UTC(2026, 0, 1) + i * 1000).toISOString(), `n${i}`)));
    const ids = async (q: string) => (await list(q)).body.call_logs.map((l: { request_id: string }) => l.request_id);
    const byDefault = await ids('?originator=log-always');
    t.equal(byDefault.length, 100);
    t.same(byDefault.slice(0, 3), ['other', 'n1049', 'n1048']);
    t.same(await ids('?originator=log-always&limit=2'), ['other', 'n1049']);
    t.equal((await ids('?originator=log-always&limit=1000')).length, 1000);
    t.same(await ids('?originator=log-always&limit=1'), ['other']);
  });

  await t.test('bad queries get 400 with a detail', async (t) => {
    for (const [query, detail] of [
      ['', /originator: required/],
      ['?originator=', /originator: required/],
      ['?originator=log-errors&limit=0', /limit: must be from 1 to 1000/],
      ['?originator=log-errors&limit=1001', /limit: must be from 1 to 1000/],
      ['?originator=log-errors&limit=ten', /limit: must be a whole number from 1 to 1000/],
      ['?originator=log-errors&limit=-5', /limit/],
      ['?originator=log-errors&since=2026-05-01T10:00:00', /since: must be an ISO 8601 date-time with an offset/],
      ['?originator=log-errors&since=yesterday', /since: must be an ISO 8601/],
      ['?originator=log-errors&before=2026-05-01T10:00:00Z', /unknown parameter\(s\): before/],
    ] as const) {
      const { status, body } = await list(query);
      t.equal(status, 400, query || '(no query)');
      t.match(body, { detail: detail }, query || '(no query)');
      t.same(Object.keys(body), ['detail']);
    }
  });

  await t.test('only with ADMIN_TOKEN', async (t) => {
    t.equal((await list('?originator=log-errors', null)).status, 401, 'no token');
    t.equal((await list('?originator=log-errors', 'not-the-admin-token-at-all')).status, 401, 'another token');
    t.match((await list('?originator=log-errors', null)).body, { detail: String });
  });
});
