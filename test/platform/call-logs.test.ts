/**
 * Call logs, their statistics, the metrics and the admins' feed.
 *
 * One file, one process: its parts share the loaded platform code. Each part is a subtest named after
 * what it covers.
 */
import type { Queue } from 'bullmq';
import t from 'tap';
import { connect } from '../../db/connect.js';
import { type CallLogRow, insertCallLogs } from '../../db/queries/call-logs.js';
import { METRICS_MESSAGES } from '../../src/api/metrics/family.js';
import { createLogger } from '../../src/config/log.js';
import { VERSION } from '../../src/config/version.js';
import { firstError } from '../../src/domain/rejections.js';
import type { CallLogMode } from '../../src/domain/vocabulary.js';
import { type CallLogEntry, capBody, MAX_STORED_BODY_BYTES } from '../../workers/call-log/job.js';
import { type CallLogWorker, startCallLogWorker } from '../../workers/call-log/processor.js';
import { CallLogRecorder } from '../../workers/call-log/producer.js';
import { openQueue, QUEUES } from '../../workers/queues.js';
import { baseFixture, berlaAssignments, TOKENS } from '../helpers/fixtures.js';
import { ADMIN_TOKEN, get, logCapture, postSignals as post, startTestPlatform, type TestPlatform } from '../helpers/platform.js';
import { until } from '../helpers/wait.js';
import { WsClient } from '../helpers/ws.js';

t.test('call-log', async (t) => {
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
        'client_address', 'endpoint', 'error', 'error_details', 'id', 'originator', 'request_body', 'request_id', 'request_time', 'response_body', 'station_ids', 'status',
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
        error: { path: '', message: 'no' },
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
});

t.test('call-stats', async (t) => {
  /**
   * Every import call counted per originator and hour, whatever its call-log mode keeps, exactly, across
   * two instances and through the shutdown; refused calls on every instance's admins' feed with their
   * first error; the admin API's originators with their figures.
   */

  const ago = (seconds: number) => new Date(Date.now() - seconds * 1000).toISOString();
  const availability = (nozzle = 'N1') => [{ hrs: 'BERLA', datetime: ago(2), nozzles: [{ id: nozzle, available: true }], station: { maintenance: false, limitedly_available: false } }];

  function post(p: TestPlatform, body: unknown): Promise<number> {
    return fetch(`${p.url}/import/v2/signal/availability/`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${TOKENS.import_v2}`, 'Content-Type': 'application/json' },
      body: JSON.stringify(body),
    }).then(async (res) => {
      await res.arrayBuffer();
      return res.status;
    });
  }

  t.test('the first error of an import answer, and where it points', async (t) => {
    t.same(firstError('[{}, {"datetime": ["Too old."], "nozzles": [{"id": ["Unknown."]}]}]'), { path: '[1].datetime', message: 'Too old.' });
    t.same(firstError({ non_field_errors: ['Expected a list of items but got type "dict".'] }), { path: '', message: 'Expected a list of items but got type "dict".' });
    t.same(firstError(Buffer.from('{"detail":"Invalid token."}')), { path: '', message: 'Invalid token.' });
    t.same(firstError([{ nozzles: [{}, { id: ['Unknown nozzle identifier: N9'] }] }]), { path: '[0].nozzles[1].id', message: 'Unknown nozzle identifier: N9' });
    t.same(firstError([{}, {}]), null, 'nothing to say');
    t.same(firstError('not json'), null);
    t.equal(firstError({ detail: 'x'.repeat(1000) })!.message.length, 300, 'a long message is cut');
  });

  t.test('two instances count every call exactly, refused ones apart; the counts survive the shutdown', async (t) => {
    const fixture = { ...baseFixture(), assignments: berlaAssignments() };
    const a = await startTestPlatform(t, { fixture, env: { IMPORT_V2_RATE_LIMIT: '100000' } });
    const b = await startTestPlatform(t, { sameStoreAs: a });
    const admin = await WsClient.connect(`${b.url.replace('http:', 'ws:')}/admin/v1/live`, { Authorization: `Bearer ${ADMIN_TOKEN}` });
    t.teardown(() => admin.close());
    await admin.nextOf('snapshot');

    const statuses = await Promise.all([
      ...Array.from({ length: 30 }, (_, i) => post(i % 2 ? a : b, availability())),
      ...Array.from({ length: 7 }, (_, i) => post(i % 2 ? a : b, availability('N9'))),
    ]);
    t.same([statuses.filter((s) => s === 204).length, statuses.filter((s) => s === 400).length], [30, 7]);

    const refused = await admin.nextOf('rejection');
    t.match(refused, { originator_id: 'mon-1', endpoint: 'POST /import/v2/signal/availability/', status: 400, hrs_ids: ['BERLA'], error: { path: '[0].nozzles[0].id', message: /N9/ } }, 'a refusal on the other instance\'s admins\' feed, with its first error');

    await a.stop('test over');
    await b.stop('test over');
    const sql = connect(a.parts.config.databaseUrl, { max: 1 });
    t.teardown(() => sql.end({ timeout: 1 }));
    const [row] = await sql<{ calls: number; rejected: number; last: Date }[]>`
    SELECT sum(calls)::int AS calls, sum(rejected)::int AS rejected, max(last_call_at) AS last FROM originator_call_stats WHERE originator_id = 'mon-1'`;
    t.same([row!.calls, row!.rejected], [37, 7], 'every call counted once, whichever instance took it, added at the shutdown');
    t.ok(Date.now() - row!.last.getTime() < 60_000, 'last seen just now');
  });

  t.test('GET /admin/v1/originators: last seen, calls, refusals and the error rate of the last 24 hours', async (t) => {
    const p = await startTestPlatform(t, { fixture: { ...baseFixture(), assignments: berlaAssignments() } });
    for (let i = 0; i < 3; i++) t.equal(await post(p, availability()), 204);
    t.equal(await post(p, availability('N9')), 400);
    const answer = await until('the counts added (every 5 s)', async () => {
      const res = await fetch(`${p.url}/admin/v1/originators`, { headers: { Authorization: `Bearer ${ADMIN_TOKEN}` } });
      const body = (await res.json()) as { originators: { id: string; calls_24h: number }[] };
      return body.originators.find((o) => o.id === 'mon-1')!.calls_24h === 4 ? body : undefined;
    }, 15_000, 250);
    t.match(answer.originators.find((o) => o.id === 'mon-1'), {
      id: 'mon-1',
      name: 'Monitoring One',
      call_log_mode: 'errors',
      calls_24h: 4,
      rejected_24h: 1,
      error_rate_24h: 0.25,
      last_seen: String,
      last_rejected: String,
      last_transmission: String,
      call_logs: `${p.url}/admin/v1/call-logs?originator=mon-1`,
    });
    t.notOk(answer.originators.some((o) => o.id === 'sandbox-simulator'), 'the sandbox\'s simulator is not listed');
    t.equal((await fetch(`${p.url}/admin/v1/originators`)).status, 401, 'admins only');
  });
});

t.test('metrics', async (t) => {
  /**
   * `GET /metrics`: the Prometheus text after real requests, imports, a stream and a rate-limit refusal,
   * parsed and checked counter by counter; and the tokens it takes (ADMIN_TOKEN always, METRICS_TOKEN
   * when set, neither: refused saying so).
   */
  const METRICS_TOKEN = 'test-metrics-token-0123456789';

  interface Sample {
    name: string;
    labels: Record<string, string>;
    value: number;
  }

  /** The samples of a Prometheus text exposition (comments skipped). */
  function parse(text: string): Sample[] {
    const samples: Sample[] = [];
    for (const line of text.split('\n')) {
      if (line === '' || line.startsWith('#')) continue;
      const match = /^([a-zA-Z_:][\w:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
      if (!match) throw new Error(`not a sample line: ${line}`);
      const labels: Record<string, string> = {};
      for (const [, key, value] of (match[2] ?? '').matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)) labels[key!] = value!;
      samples.push({ name: match[1]!, labels, value: Number(match[3]) });
    }
    return samples;
  }

  /** The sum of the samples of `name` whose labels include `labels`; undefined when there is none. */
  function value(samples: Sample[], name: string, labels: Record<string, string> = {}): number | undefined {
    const found = samples.filter((s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v));
    return found.length === 0 ? undefined : found.reduce((sum, s) => sum + s.value, 0);
  }

  async function scrape(p: TestPlatform, token = METRICS_TOKEN): Promise<Sample[]> {
    const res = await get(`${p.url}/metrics`, token);
    if (res.status !== 200) throw new Error(`/metrics answered ${res.status}: ${await res.text()}`);
    t.match(res.headers.get('content-type'), /^text\/plain; version=0\.0\.4/);
    return parse(await res.text());
  }

  const ago = (seconds: number) => new Date(Date.now() - seconds * 1000).toISOString();
  const availability = (extra: Record<string, unknown> = {}) => ({
    hrs: 'BERLA',
    datetime: ago(5),
    nozzles: [{ id: 'N1', available: true }, { id: 'N2', available: false }],
    station: { maintenance: false, limitedly_available: true },
    ...extra,
  });

  function postImport(p: TestPlatform, category: string, body: unknown): Promise<Response> {
    return fetch(`${p.url}/import/v2/signal/${category}/`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${TOKENS.import_v2}`, 'Content-Type': 'application/json' },
      body: JSON.stringify(body),
    });
  }

  t.test('after real requests the counters moved, with the right labels', async (t) => {
    const p = await startTestPlatform(t, {
      fixture: { ...baseFixture(), assignments: berlaAssignments() },
      env: { METRICS_TOKEN, IMPORT_V2_RATE_LIMIT: '6' },
    });
    t.equal((await get(`${p.url}/v2/hrs/BERLA`, TOKENS.export_v2)).status, 200);
    t.equal((await get(`${p.url}/v2/hrs/NOPE1`, TOKENS.export_v2)).status, 404);
    t.equal((await get(`${p.url}/no/such/page`)).status, 404);
    t.equal((await postImport(p, 'availability', [availability(), availability({ nozzles: [{ id: 'N9', available: true }] })])).status, 400, 'one bad transmission rejects both');
    t.equal((await postImport(p, 'availability', [availability()])).status, 204);
    t.equal((await postImport(p, 'availability', [availability({ dry_run: true })])).status, 204);
    t.equal((await postImport(p, 'usage', [{ hrs: 'BERLA', datetime: ago(5), nozzles: [{ dispenser_id: 'D1', usage_status: 'in-use' }] }])).status, 204);
    let throttled = 0;
    for (let i = 0; i < 6 && throttled === 0; i++) if ((await postImport(p, 'availability', 'not a list')).status === 429) throttled++;
    t.equal(throttled, 1, 'the import budget ran out');
    // The stream's life is not this test's subject: a socket dropped at once by the uWS build is connected again (WsClient.connectGreeted).
    const { client: stream, dropped } = await WsClient.connectGreeted(`${p.url.replace('http', 'ws')}/v2/hrs/status/stream`, { Authorization: `Bearer ${TOKENS.export_v2}` }, 'authenticated');
    t.teardown(() => stream.close());
    if (dropped > 0) t.comment(`the stream was dropped at once ${dropped} time(s) and connected again`);

    const samples = await scrape(p);
    const requests = (labels: Record<string, string>) => value(samples, 'hrs_http_requests_total', labels);
    t.equal(requests({ family: 'export_v2', route: '/v2/hrs/:hrs_id', method: 'GET', status: '200' }), 1);
    t.equal(requests({ family: 'export_v2', route: '/v2/hrs/:hrs_id', method: 'GET', status: '404' }), 1);
    t.equal(requests({ family: 'root', route: 'unmatched', method: 'GET', status: '404' }), 1, 'unknown paths are one series, not one per path');
    t.equal(requests({ family: 'import_v2', route: '/import/v2/signal/availability/', status: '204' }), 2);
    t.equal(requests({ family: 'import_v2', route: '/import/v2/signal/availability/', status: '429' }), 1);
    t.equal(value(samples, 'hrs_http_request_duration_seconds_count', { family: 'import_v2', route: '/import/v2/signal/usage/', method: 'POST' }), 1);
    t.ok(value(samples, 'hrs_http_request_duration_seconds_sum', { family: 'export_v2' })! > 0, 'latency is measured');

    const transmissions = (category: string, outcome: string) => value(samples, 'hrs_import_v2_transmissions_total', { category, outcome });
    t.equal(transmissions('availability', 'rejected'), 2, 'both transmissions of the refused request');
    t.equal(transmissions('availability', 'accepted'), 1);
    t.equal(transmissions('availability', 'dry_run'), 1);
    t.equal(transmissions('usage', 'accepted'), 1);
    t.equal(value(samples, 'hrs_signal_commit_rows_count'), 2, 'two commits');
    t.equal(value(samples, 'hrs_signal_commit_rows_sum'), 2, 'of one row each');
    t.equal(value(samples, 'hrs_signal_commit_duration_seconds_count'), 2);

    t.equal(value(samples, 'hrs_rate_limit_refusals_total', { family: 'import_v2' }), 1);
    t.equal(value(samples, 'hrs_status_actors', { freshness: 'fresh' }), 2, 'BERLA availability and usage');
    t.equal(value(samples, 'hrs_status_actors', { freshness: 'stale' }), 0);
    t.equal(value(samples, 'hrs_push_sockets', { kind: 'stream' }), 1);
    t.equal(value(samples, 'hrs_push_sockets', { kind: 'admin' }), 0);
    t.equal(value(samples, 'hrs_push_closed_slow_total'), 0);
    t.equal(value(samples, 'hrs_queue_jobs', { queue: 'call-log', state: 'failed' }), 0);
    t.ok(value(samples, 'hrs_queue_jobs', { queue: 'call-log', state: 'waiting' })! >= 1, 'the refused import waits for the call-log worker (none runs here)');
    t.equal(value(samples, 'hrs_queue_jobs', { queue: 'mail', state: 'waiting' }), 0);
    t.equal(value(samples, 'hrs_build_info', { version: VERSION }), 1);
    t.ok(value(samples, 'process_resident_memory_bytes')! > 0, 'process metrics too');

    stream.close();
    const later = await until('the stream counted as closed', async () => {
      const s = await scrape(p, ADMIN_TOKEN);
      return value(s, 'hrs_push_sockets', { kind: 'stream' }) === 0 ? s : undefined;
    });
    t.equal(value(later, 'hrs_http_requests_total', { family: 'metrics', route: '/metrics', status: '200' }), 1, 'the first scrape is counted by the next');
  });

  t.test('/metrics takes ADMIN_TOKEN and METRICS_TOKEN, and nothing else', async (t) => {
    const p = await startTestPlatform(t, { env: { METRICS_TOKEN } });
    t.equal((await get(`${p.url}/metrics`, METRICS_TOKEN)).status, 200, 'the metrics token');
    t.equal((await get(`${p.url}/metrics`, ADMIN_TOKEN)).status, 200, 'the admin token');
    const missing = await get(`${p.url}/metrics`);
    t.equal(missing.status, 401);
    t.equal(missing.headers.get('www-authenticate'), 'Bearer');
    t.match(missing.headers.get('content-type'), /application\/problem\+json/);
    const wrong = await get(`${p.url}/metrics`, 'not-the-metrics-token-000');
    t.equal(wrong.status, 401);
    t.equal((await wrong.json()).detail, METRICS_MESSAGES.unknown);
    t.equal((await get(`${p.url}/metrics`, TOKENS.export_v2)).status, 401, 'an API token is no metrics token');
  });

  t.test('with only ADMIN_TOKEN set, it alone opens /metrics', async (t) => {
    const p = await startTestPlatform(t);
    t.equal((await get(`${p.url}/metrics`, ADMIN_TOKEN)).status, 200);
    t.equal((await get(`${p.url}/metrics`, METRICS_TOKEN)).status, 401);
  });

  t.test('with neither token set, /metrics is refused saying why', async (t) => {
    const p = await startTestPlatform(t, { env: { ADMIN_TOKEN: '' } });
    const res = await get(`${p.url}/metrics`, METRICS_TOKEN);
    t.equal(res.status, 401);
    t.equal((await res.json()).detail, METRICS_MESSAGES.disabled);
  });

  t.test('two platforms in one process count apart', async (t) => {
    const a = await startTestPlatform(t, { env: { METRICS_TOKEN } });
    const b = await startTestPlatform(t, { env: { METRICS_TOKEN } });
    await get(`${a.url}/healthz`);
    await get(`${a.url}/healthz`);
    t.equal(value(await scrape(a), 'hrs_http_requests_total', { route: '/healthz' }), 2);
    t.equal(value(await scrape(b), 'hrs_http_requests_total', { route: '/healthz' }), undefined);
  });
});

t.test('admin-feed-values', async (t) => {
  /**
   * The admins' live feed says what changed, not only that something did: a `change` carries the
   * section the feed last carried (`previous_section`) and whether the reading repeats the published
   * value (`repeat`); repeats stay out of the tail an admin gets on connecting. Station rows say whether
   * they are the sandbox's. `GET /admin/v1/originators` says how each originator fares (`health`).
   */

  const ago = (seconds: number) => new Date(Date.now() - seconds * 1000).toISOString();
  const adminUrl = (p: TestPlatform) => `${p.url.replace('http:', 'ws:')}/admin/v1/live`;
  const availability = (hrs: string, datetime: string, n1: boolean, maintenance = false) => ({
    hrs,
    datetime,
    nozzles: [
      { id: 'N1', available: n1 },
      { id: 'N2', available: true },
    ],
    station: { maintenance, limitedly_available: false },
  });

  async function admin(t: { teardown(fn: () => unknown): void }, p: TestPlatform): Promise<{ ws: WsClient; snapshot: Record<string, any>; tail: Record<string, any> }> {
    const ws = await WsClient.connect(adminUrl(p));
    t.teardown(() => ws.close());
    ws.send({ type: 'auth', token: ADMIN_TOKEN });
    await ws.nextOf('authenticated');
    const snapshot = await ws.nextOf('snapshot');
    const tail = await ws.nextOf('tail');
    return { ws, snapshot, tail };
  }

  t.test('a change carries the section before it, and a repeat is marked and left out of the tail', async (t) => {
    const f = baseFixture();
    f.assignments = berlaAssignments('testing');
    const p = await startTestPlatform(t, { fixture: f, env: { SANDBOX: 'on', EXPORT_V2_RATE_LIMIT_MINUTE: '1000000' } });
    // A reading published before any admin connects: the snapshot is what the first change is measured against.
    await post(p, 'availability', [availability('BERLA', ago(30), true)]);

    const { ws, snapshot } = await admin(t, p);
    const berla = snapshot.stations.find((s: { hrs_id: string }) => s.hrs_id === 'BERLA');
    t.equal(berla.sandbox, false, 'a production station says so');
    const sandbox = snapshot.stations.filter((s: { sandbox: boolean }) => s.sandbox).map((s: { hrs_id: string }) => s.hrs_id);
    t.ok(sandbox.length >= 8 && sandbox.every((id: string) => id.startsWith('SBX')), `the sandbox's stations are flagged (${sandbox.length})`);

    const changes = () => ws.messages.filter((m) => m.type === 'change' && m.hrs_id === 'BERLA' && m.category === 'availability');
    await post(p, 'availability', [availability('BERLA', ago(20), true)]);
    await until('the repeat', () => changes()[0]);
    const [repeat] = changes();
    t.equal(repeat!.repeat, true, 'the same value again is a repeat');
    t.same(repeat!.previous_section.nozzles, repeat!.section.nozzles, 'its previous section is the snapshot\'s');
    t.not(repeat!.previous_section.datetime, repeat!.section.datetime, 'though its times differ');

    await post(p, 'availability', [availability('BERLA', ago(10), false, true)]);
    await until('the value change', () => changes()[1]);
    const change = changes()[1]!;
    t.equal(change.repeat, false, 'a new value is no repeat');
    t.match(change.previous_section, { station: { maintenance: false }, nozzles: [{ id: 'N1', available: true }] }, 'the value before');
    t.match(change.section, { station: { maintenance: true }, nozzles: [{ id: 'N1', available: false }] }, 'and after');
    t.match(change, { cause: 'signal', previous: 'fresh', freshness: 'fresh' }, 'a signal that kept the reading fresh');

    const { tail } = await admin(t, p);
    const kept = tail.events.filter((m: Record<string, any>) => m.type === 'change' && m.hrs_id === 'BERLA');
    t.same(kept.map((m: Record<string, any>) => m.repeat), [false], 'the tail keeps the value change, not the repeat');
    t.same(kept[0].previous_section, change.previous_section, 'with its previous section');
  });

  t.test('originators: health says which are failing (last call refused, or silent)', async (t) => {
    const f = baseFixture();
    f.originators.push({ id: 'aaa-ok', name: 'A fine one', call_log_mode: 'errors' }, { id: 'zzz-old', name: 'Gone quiet', call_log_mode: 'errors' }, { id: 'new-1', name: 'Not yet', call_log_mode: 'errors' });
    f.tokens.push({ generation: 'import_v2', originator: 'aaa-ok', value: 'test-import-v2-token-aaa-ok' });
    f.assignments.push({ originator: 'aaa-ok', hrs_id: 'BERLA', signal_type: 'usage', state: 'live' });
    const p = await startTestPlatform(t, { fixture: f, env: { STATUS_STALE_AFTER: '60', STATUS_UNKNOWN_AFTER: '120' } });
    await p.sql`INSERT INTO originator_call_stats (originator_id, hour, calls, rejected, last_call_at, last_rejected_at)
    VALUES ('zzz-old', date_trunc('hour', now() - interval '2 hours'), 3, 0, now() - interval '2 hours', NULL)`;
    const ok = await fetch(`${p.url}/import/v2/signal/usage/`, {
      method: 'POST',
      headers: { Authorization: 'Bearer test-import-v2-token-aaa-ok', 'Content-Type': 'application/json' },
      body: JSON.stringify([{ hrs: 'BERLA', datetime: ago(1), nozzles: [{ id: 'N1', usage_status: 'free' }] }]),
    });
    t.ok(ok.status < 300, `aaa-ok's call is accepted (${ok.status})`);
    const refused = await fetch(`${p.url}/import/v2/signal/availability/`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${TOKENS.import_v2}`, 'Content-Type': 'application/json' },
      body: JSON.stringify([{ ...availability('BERLA', ago(1), true), nozzles: [{ id: 'N9', available: true }] }]),
    });
    t.equal(refused.status, 400, "mon-1's call is refused");

    const body = await until('the calls counted', async () => {
      const res = (await (await get(`${p.url}/admin/v1/originators`, ADMIN_TOKEN)).json()) as { silent_after: number; originators: Record<string, any>[] };
      const counted = res.originators.filter((o) => o.calls_24h > 0).length;
      return counted >= 3 ? res : undefined;
    }, 20_000, 250);
    t.equal(body.silent_after, 60, 'silent after STATUS_STALE_AFTER');
    const health = Object.fromEntries(body.originators.map((o) => [o.id, o.health]));
    t.same(health, { 'aaa-ok': 'ok', 'mon-1': 'refused', 'new-1': 'never_seen', 'zzz-old': 'silent' }, 'each originator\'s health');
    t.same(body.originators.map((o) => o.id), ['aaa-ok', 'mon-1', 'new-1', 'zzz-old'], 'listed by id, as before');
  });
});
