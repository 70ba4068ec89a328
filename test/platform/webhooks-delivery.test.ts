/**
 * Webhook delivery: order, retries, outages, a queue without Redis and its round trips.
 *
 * One file, one process: its parts share the loaded platform code. Each part is a subtest named after
 * what it covers.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Webhook } from 'standardwebhooks';
import t, { type Test } from 'tap';
import { connect } from '../../db/connect.js';
import { queuePing } from '../../db/queries/webhooks.js';
import { createLogger } from '../../src/config/log.js';
import { newWebhookSecret } from '../../src/domain/webhooks/secrets.js';
import { boundedResolver } from '../../src/infra/name-resolver.js';
import { closeRedis, openRedis } from '../../src/infra/redis.js';
import { startWebhookWorker } from '../../workers/webhooks/processor.js';
import { baseFixture } from '../helpers/fixtures.js';
import { startTestPlatform, type TestPlatform } from '../helpers/platform.js';
import { ACCOUNTS, portalFixture, signedIn } from '../helpers/portal.js';
import { privateRedis } from '../helpers/private-services.js';
import { smtpSink } from '../helpers/smtp.js';
import { until } from '../helpers/wait.js';
import { checkResends, events, head, loggedSeqs, subscribedPlatform, withEvents } from '../helpers/webhook-outage.js';
import { deliveredChanges, receiver, subscribe, TEST_TIMING, webhookKey, workersOf } from '../helpers/webhooks.js';

/**
 * Once the webhook worker has gone through the subscription's changes up to `seq` (its cursor there, no
 * message pending): what its receiver got by then is all it gets of them.
 */
const caughtUp = (p: TestPlatform, id: string, seq: string) =>
  until(`subscription ${id} through seq ${seq}`, async () => {
    const [row] = await p.sql<{ cursor_seq: string; pending_message_id: string | null }[]>`
    SELECT cursor_seq::text, pending_message_id FROM webhook_subscriptions WHERE id = ${id}`;
    return BigInt(row!.cursor_seq) >= BigInt(seq) && row!.pending_message_id === null ? true : undefined;
  });

/**
 * What must not be delivered would be by now: the worker claims a due subscription on the change's
 * notification, else at its next poll (every TEST_TIMING.pollEveryMs); two polls pass without it.
 */
const quiet = () => new Promise((resolve) => setTimeout(resolve, 2 * TEST_TIMING.pollEveryMs!));

/**
 * A webhook worker of its own whose statements recording delivered attempts (recordDelivered) are
 * first shown to `refuse` with their number of records: true fails one as a lost connection would.
 */
async function workerRefusingRecords(t: Test, p: TestPlatform, refuse: (records: number) => boolean) {
  const pool = connect(p.parts.config.databaseUrl);
  const sql = new Proxy(pool, {
    apply(target, self, args: unknown[]) {
      const strings = args[0];
      if (Array.isArray(strings) && strings.join('').includes('moved AS (') && refuse((args[1] as unknown[]).length)) {
        return Promise.reject(new Error('connection terminated (the test)'));
      }
      return Reflect.apply(target, self, args);
    },
  });
  const config = p.parts.config;
  const worker = await startWebhookWorker({
    redis: p.parts.redis,
    redisPrefix: config.redisPrefix,
    sql,
    log: createLogger('silent'),
    secretKey: config.webhookSecretKey!,
    baseUrl: config.baseUrl,
    timeoutMs: 5000,
    allowLoopback: true,
    resolver: boundedResolver({ timeoutMs: 2000 }),
    giveUpAfterMs: 3600_000,
    stations: () => p.parts.registry,
    timing: TEST_TIMING,
  });
  t.teardown(async () => {
    await worker.close();
    await pool.end({ timeout: 1 });
  });
  return worker;
}

t.test('webhooks-delivery', async (t) => {
  /**
   * Webhook delivery end to end: subscriptions made as rows (their secrets sealed), changes made through
   * the registry file loader (the registry's real writer) and the change log's triggers, the webhook
   * worker started by startWorkers, and real receivers (node:http) verifying every message with
   * standardwebhooks: in seq order, filtered by kinds, stations and box, record URLs and events as
   * specified; a ping; a 410 unsubscribing; addresses refused before any connection; both signatures
   * during a rotation's overlap.
   */
  type Fixture = ReturnType<typeof baseFixture>;
  type Station = Record<string, unknown>;
  interface Event {
    id: string;
    kind: string;
    starts_at: string;
    ends_at: string | null;
    description: string;
  }
  const eventsOf = (f: Fixture, i: number) => (f.stations[i] as Station).events as Event[];

  /** A whole day `days` from today, as the registry writes instants (UTC midnight, milliseconds). */
  const dayFromNow = (days: number) => new Date(Math.floor(Date.now() / 86_400_000 + days) * 86_400_000).toISOString();

  /**
   * The base registry with coordinates: BERLA in Berlin, HAMBG in Hamburg. BERLA's event is moved to the
   * weeks ahead: an event that ended within the change log's retention gets an `ended` row from the sweep
   * the worker runs, which would count as a change these tests did not make.
   */
  function placed(): Fixture {
    const f = baseFixture();
    Object.assign(eventsOf(f, 0)[0]!, { starts_at: dayFromNow(30), ends_at: dayFromNow(31) });
    (f.stations[0] as Station).details = { city: 'Berlin', vehicle_types: ['M1'], lat: 52.364, lon: 13.509 };
    (f.stations[1] as Station).details = { city: 'Hamburg', lat: 53.541, lon: 9.984 };
    return f;
  }

  async function platform(t: Parameters<typeof startTestPlatform>[0], env: Record<string, string> = {}) {
    const p = await startTestPlatform(t, { fixture: placed(), env: { WEBHOOK_SECRET_KEY: webhookKey(), WEBHOOK_ALLOW_LOOPBACK: 'true', ...env } });
    return { p, key: p.parts.config.webhookSecretKey! };
  }

  /** The log rows after `after` of these topics, as (seq, type, hrs_id). */
  async function logged(p: TestPlatform, after: string, topics: string[]) {
    const rows = await p.sql<{ seq: string; topic: string; change: string; hrs_id: string }[]>`
    SELECT seq::text, topic, change, hrs_id FROM change_log WHERE seq > ${after}::bigint AND topic = ANY(${topics}) ORDER BY change_log.seq`;
    return rows.map((r) => ({ seq: r.seq, type: `${r.topic}.${r.change}`, hrs_id: r.hrs_id }));
  }

  const head = async (p: TestPlatform) => (await p.sql<{ h: string }[]>`SELECT COALESCE(max(seq), 0)::text AS h FROM change_log`)[0]!.h;

  t.test('station and event changes made by the registry writer arrive in order, signed, filtered', async (t) => {
    const { p, key } = await platform(t);
    const start = await head(p);
    const all = await receiver(t, []);
    const hamburg = await receiver(t, []);
    const berlinBox = await receiver(t, []);
    const subAll = await subscribe(p.sql, key, { url: all.url, kinds: ['station_records', 'events'] });
    const subHam = await subscribe(p.sql, key, { url: hamburg.url, kinds: ['station_records', 'events'], hrsIds: ['HAMBG'] });
    const subBox = await subscribe(p.sql, key, { url: berlinBox.url, kinds: ['station_records', 'events'], bbox: [13, 52, 14, 53] });
    all.state.secrets.push(subAll.secret);
    hamburg.state.secrets.push(subHam.secret);
    berlinBox.state.secrets.push(subBox.secret);
    const workers = workersOf(t, p);
    t.ok(workers.names.includes('webhooks'), 'startWorkers starts the webhook worker when WEBHOOK_SECRET_KEY is set');

    // 1: BERLA renamed and a new event; 2: HAMBG renamed, BERLA's event changed; 3: MUNCH added, HAMBG removed.
    const f1 = placed();
    (f1.stations[0] as Station).name = 'Berlin Airport T2';
    eventsOf(f1, 0).push({ id: 'ev-2', kind: 'closure', starts_at: dayFromNow(20), ends_at: dayFromNow(22), description: 'Holidays' });
    await p.load(f1);
    const f2 = structuredClone(f1);
    (f2.stations[1] as Station).name = 'Hamburg Port Süd';
    eventsOf(f2, 0)[0]!.description = 'Compressor service (extended)';
    await p.load(f2);
    const f3 = structuredClone(f2);
    f3.stations.splice(1, 1);
    f3.assignments = f3.assignments.filter((a) => a.hrs_id !== 'HAMBG');
    f3.stations.push({ hrs_id: 'MUNCH', operator: 'h2-demo', name: 'München Nord', heavy_duty: false, details: { city: 'München', lat: 48.2, lon: 11.6 } } as never);
    await p.load(f3);

    const expected = await logged(p, start, ['station', 'event']);
    t.ok(expected.length >= 6, `the loads were logged (${expected.length} changes)`);
    await until('every change at the receiver', () => (deliveredChanges(all).length >= expected.length ? true : undefined));
    const got = deliveredChanges(all);
    t.same(
      got.map((c) => ({ seq: c.seq, type: c.type, hrs_id: c.hrs_id })),
      expected,
      'every change once, in seq order',
    );
    t.ok(all.received.every((r) => r.verified !== undefined), 'every message verifies with the subscription secret');
    for (const r of all.delivered()) {
      const changes = r.verified!.data.changes!;
      t.equal(r.headers['webhook-id'], `msg_${subAll.id}_${changes[0]!.seq}_${changes[changes.length - 1]!.seq}`, 'webhook-id names the seq range');
      t.match(r.headers['user-agent'], /^hrs-signal-platform-webhooks\/\d+\.\d+/, 'User-Agent');
      t.match(r.headers['content-type'], /^application\/json/);
      t.equal(r.verified!.type, 'hrs.changes');
      t.equal(r.verified!.data.subscription_id, subAll.id);
    }
    const berlaChanged = got.find((c) => c.type === 'station.changed' && c.hrs_id === 'BERLA')!;
    t.equal(berlaChanged.record_url, `${p.parts.config.baseUrl}/v2/hrs/BERLA`, 'a station change links its record');
    t.match(berlaChanged.at, /^\d{4}-\d\d-\d\dT/, 'at is RFC 3339');
    const created = got.find((c) => c.type === 'event.created')!;
    t.same(created.event, { id: 'ev-2', kind: 'closure', starts_at: dayFromNow(20), ends_at: dayFromNow(22), description: 'Holidays' }, 'an event change carries the event');
    t.same(got.find((c) => c.type === 'station.deleted'), { seq: got.find((c) => c.type === 'station.deleted')!.seq, type: 'station.deleted', hrs_id: 'HAMBG', at: got.find((c) => c.type === 'station.deleted')!.at }, 'a removal says nothing more');

    await until('the filtered receivers', () => (deliveredChanges(hamburg).length >= 2 && deliveredChanges(berlinBox).length >= 1 ? true : undefined));
    // HAMBG's subscription through its last change; the box's through the last (the rest skipped as outside).
    await caughtUp(p, subHam.id, expected.filter((c) => c.hrs_id === 'HAMBG').at(-1)!.seq);
    await caughtUp(p, subBox.id, expected.at(-1)!.seq);
    t.same(
      deliveredChanges(hamburg).map((c) => `${c.type} ${c.hrs_id}`),
      expected.filter((c) => c.hrs_id === 'HAMBG').map((c) => `${c.type} ${c.hrs_id}`),
      'hrs_ids: only HAMBG',
    );
    t.same(
      deliveredChanges(berlinBox).map((c) => `${c.type} ${c.hrs_id}`),
      expected.filter((c) => c.hrs_id === 'BERLA' || c.type === 'station.deleted').map((c) => `${c.type} ${c.hrs_id}`),
      'bbox: Berlin only (and the removal, whose place is gone)',
    );
    // The receiver has the last message before the worker records its answer (with the cursor, in one
    // statement): wait for that record rather than read it at once.
    await caughtUp(p, subAll.id, expected.at(-1)!.seq);
    const [cursor] = await p.sql<{ cursor_seq: string; last_delivery_at: Date | null; failing_since: Date | null }[]>`
    SELECT cursor_seq::text, last_delivery_at, failing_since FROM webhook_subscriptions WHERE id = ${subAll.id}`;
    t.equal(cursor!.cursor_seq, expected[expected.length - 1]!.seq, 'the cursor is at the last change');
    t.ok(cursor!.last_delivery_at, 'last_delivery_at set');
    const deliveries = await p.sql<{ kind: string; status_code: number; attempt: number; error: string | null; changes: number }[]>`
    SELECT kind, status_code, attempt, error, changes FROM webhook_deliveries WHERE subscription_id = ${subAll.id} ORDER BY id`;
    t.equal(deliveries.length, all.received.length, 'every attempt recorded');
    t.ok(deliveries.every((d) => d.kind === 'changes' && d.status_code === 200 && d.attempt === 1 && d.error === null), 'as delivered at the first attempt');
    t.equal(deliveries.reduce((n, d) => n + d.changes, 0), expected.length, 'with their change counts');
  });

  t.test('a ping is delivered outside the change sequence and recorded', async (t) => {
    const { p, key } = await platform(t);
    const r = await receiver(t, []);
    const sub = await subscribe(p.sql, key, { url: r.url, kinds: ['events'] });
    r.state.secrets.push(sub.secret);
    workersOf(t, p);
    t.equal(await queuePing(p.sql, 'alice', sub.id), `msg_${sub.id}_ping_1`, 'the first ping of the subscription');
    await until('the ping', () => (r.received.length > 0 ? true : undefined));
    const ping = r.received[0]!;
    t.equal(ping.headers['webhook-id'], `msg_${sub.id}_ping_1`, 'the id queued');
    t.same(ping.verified && { type: ping.verified.type, data: ping.verified.data }, { type: 'webhook.ping', data: { subscription_id: sub.id } }, 'a signed webhook.ping');
    await until('the recorded ping', async () => {
      const rows = await p.sql<{ kind: string; status_code: number; message_id: string }[]>`SELECT kind, status_code, message_id FROM webhook_deliveries WHERE subscription_id = ${sub.id}`;
      return rows.length > 0 ? rows : undefined;
    }).then((rows) => t.same(rows, [{ kind: 'ping', status_code: 200, message_id: `msg_${sub.id}_ping_1` }]));
    const [row] = await p.sql<{ cursor_seq: string }[]>`SELECT cursor_seq::text FROM webhook_subscriptions WHERE id = ${sub.id}`;
    t.equal(row!.cursor_seq, await head(p), 'the cursor did not move');
  });

  t.test('connections to a receiver are kept and reused; one it closed meanwhile is replaced, nothing lost', async (t) => {
    const { p, key } = await platform(t);
    // A receiver that answers every request with 200, and on its second connection drops the second
    // request unanswered (as a server whose idle timeout crossed a send): counted per connection.
    const perConnection: number[] = [];
    const ids: string[] = [];
    const server = createServer((req, res) => {
      const at = (req.socket as unknown as { index: number }).index;
      perConnection[at] = (perConnection[at] ?? 0) + 1;
      req.resume();
      req.on('end', () => {
        if (at === 1 && perConnection[at] === 2) return req.socket.destroy();
        ids.push(String(req.headers['webhook-id']));
        res.writeHead(200, { 'content-type': 'text/plain' }).end('ok');
      });
    });
    server.on('connection', (socket) => Object.assign(socket, { index: perConnection.push(0) - 1 }));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    t.teardown(() => new Promise<void>((resolve) => (server.closeAllConnections(), server.close(() => resolve()))));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`;
    const sub = await subscribe(p.sql, key, { url, kinds: ['events'] });
    workersOf(t, p);
    for (let n = 1; n <= 3; n++) {
      await queuePing(p.sql, 'alice', sub.id);
      await until(`ping ${n}`, () => (ids.length === n ? true : undefined));
    }
    t.same(perConnection, [3], 'three messages, one connection');
    t.same(ids, [1, 2, 3].map((n) => `msg_${sub.id}_ping_${n}`));
    // The kept connection goes; the next one drops its second request.
    server.closeAllConnections();
    for (let n = 4; n <= 6; n++) {
      await queuePing(p.sql, 'alice', sub.id);
      await until(`ping ${n}`, () => (ids.length === n ? true : undefined));
    }
    t.same(ids.slice(3), [4, 5, 6].map((n) => `msg_${sub.id}_ping_${n}`), 'every message delivered, in order');
    t.same(perConnection, [3, 2, 1, 1], 'the dropped request sent again at once on a connection of its own; the next message opens a new kept one');
    // The receiver has the sixth before the worker records it: wait for the record.
    const attempts = await until('the six attempts recorded', async () => {
      const rows = await p.sql<{ status_code: number | null }[]>`SELECT status_code FROM webhook_deliveries WHERE subscription_id = ${sub.id} ORDER BY id`;
      return rows.length >= 6 ? rows : undefined;
    });
    t.same(attempts.map((a) => a.status_code), [200, 200, 200, 200, 200, 200], 'one successful attempt per message: the dropped send was not a failed attempt');
  });

  t.test('a 410 answer unsubscribes: nothing more is sent', async (t) => {
    const { p, key } = await platform(t);
    const r = await receiver(t, []);
    const sub = await subscribe(p.sql, key, { url: r.url, kinds: ['station_records'] });
    r.state.secrets.push(sub.secret);
    r.state.answer = () => 410;
    workersOf(t, p);
    const f = placed();
    (f.stations[0] as Station).name = 'Berlin Airport (renamed)';
    await p.load(f);
    await until('the subscription to end', async () => {
      const [row] = await p.sql<{ state: string; disabled_reason: string | null }[]>`SELECT state, disabled_reason FROM webhook_subscriptions WHERE id = ${sub.id}`;
      return row!.state === 'unsubscribed' ? row : undefined;
    }).then((row) => t.match(row.disabled_reason, /410/, 'the reason says 410'));
    t.equal(r.received.length, 1, 'one attempt');
    (f.stations[0] as Station).name = 'Berlin Airport (renamed again)';
    await p.load(f);
    await quiet();
    t.equal(r.received.length, 1, 'nothing after the 410');
  });

  t.test('addresses the rules refuse are never connected to; the refusal is a recorded failure', async (t) => {
    const { p, key } = await platform(t, { WEBHOOK_ALLOW_LOOPBACK: 'false' });
    const r = await receiver(t, []);
    const subs = [
      await subscribe(p.sql, key, { url: `http://localhost:${r.port}/hook`, kinds: ['station_records'] }),
      await subscribe(p.sql, key, { url: `http://127.0.0.1:${r.port}/hook`, kinds: ['station_records'] }),
      await subscribe(p.sql, key, { url: 'http://10.1.2.3/hook', kinds: ['station_records'] }),
      await subscribe(p.sql, key, { url: 'http://169.254.169.254/latest/meta-data', kinds: ['station_records'] }),
      await subscribe(p.sql, key, { url: 'http://[fe80::1]/hook', kinds: ['station_records'] }),
    ];
    workersOf(t, p);
    const f = placed();
    (f.stations[0] as Station).name = 'Berlin Airport (renamed)';
    await p.load(f);
    const failures = await until('a refusal for each', async () => {
      const rows = await p.sql<{ subscription_id: string; status_code: number | null; error: string; latency_ms: number | null }[]>`
      SELECT DISTINCT ON (subscription_id) subscription_id, status_code, error, latency_ms FROM webhook_deliveries ORDER BY subscription_id, id`;
      return rows.length === subs.length ? rows : undefined;
    });
    const byId = new Map(failures.map((f) => [f.subscription_id, f]));
    t.match(byId.get(subs[0]!.id)!.error, /^refused: localhost: 127\.0\.0\.1 is a loopback address/, 'a name resolving to loopback');
    t.match(byId.get(subs[1]!.id)!.error, /^refused: 127\.0\.0\.1 is a loopback address/, 'a loopback literal');
    t.match(byId.get(subs[2]!.id)!.error, /^refused: 10\.1\.2\.3 is a private address/, 'a private address');
    t.match(byId.get(subs[3]!.id)!.error, /^refused: 169\.254\.169\.254 is a link-local address/, 'the metadata address');
    t.match(byId.get(subs[4]!.id)!.error, /^refused: fe80::1 is a link-local address/, 'IPv6 link-local');
    t.ok(failures.every((f) => f.status_code === null && f.latency_ms === null), 'no status, no latency: nothing was sent');
    // Retried (after TEST_TIMING's backoff) and refused again, each: still no connection.
    await until('a retry refused for each', async () => {
      const rows = await p.sql<{ n: number }[]>`SELECT count(*)::int AS n FROM webhook_deliveries GROUP BY subscription_id`;
      return rows.length === subs.length && rows.every((row) => row.n >= 2) ? true : undefined;
    });
    t.equal(r.connections(), 0, 'the receiver on loopback was never connected to');
    const states = await p.sql<{ state: string; failing_since: Date | null }[]>`SELECT state, failing_since FROM webhook_subscriptions`;
    t.ok(states.every((s) => s.state === 'active' && s.failing_since !== null), 'failing (retried until the give-up time), still active');
  });

  t.test('during a rotation both secrets sign; after the overlap only the new one', async (t) => {
    const { p, key } = await platform(t);
    const old = newWebhookSecret();
    const r = await receiver(t, []);
    const sub = await subscribe(p.sql, key, { url: r.url, kinds: ['station_records'], previous: { secret: old, until: new Date(Date.now() + 3600_000) } });
    workersOf(t, p);
    const f = placed();
    (f.stations[0] as Station).name = 'Berlin Airport (1)';
    await p.load(f);
    await until('the message', () => (r.received.length >= 1 ? true : undefined));
    const first = r.received[0]!;
    const plain = (h: typeof first.headers) => ({ 'webhook-id': String(h['webhook-id']), 'webhook-timestamp': String(h['webhook-timestamp']), 'webhook-signature': String(h['webhook-signature']) });
    t.equal(String(first.headers['webhook-signature']).split(' ').length, 2, 'two signatures');
    t.ok(new Webhook(sub.secret).verify(first.body, plain(first.headers)), 'the new secret verifies');
    t.ok(new Webhook(old).verify(first.body, plain(first.headers)), 'the previous secret verifies');
    const newOnly = String(first.headers['webhook-signature']).split(' ')[0]!;
    t.ok(new Webhook(sub.secret).verify(first.body, { ...plain(first.headers), 'webhook-signature': newOnly }), 'the new one first');

    await p.sql`UPDATE webhook_subscriptions SET previous_secret_until = clock_timestamp() - interval '1 second' WHERE id = ${sub.id}`;
    (f.stations[0] as Station).name = 'Berlin Airport (2)';
    await p.load(f);
    await until('the second message', () => (r.received.length >= 2 ? true : undefined));
    const second = r.received[1]!;
    t.equal(String(second.headers['webhook-signature']).split(' ').length, 1, 'one signature after the overlap');
    t.ok(new Webhook(sub.secret).verify(second.body, plain(second.headers)), 'the new secret verifies');
    t.throws(() => new Webhook(old).verify(second.body, plain(second.headers)), 'the previous one no longer does');
  });

  t.test('status and fuelling option changes carry their payload; kinds choose the topics', async (t) => {
    const { p, key } = await platform(t);
    const r = await receiver(t, []);
    const other = await receiver(t, []);
    const sub = await subscribe(p.sql, key, { url: r.url, kinds: ['station_status', 'fuelling_options'] });
    const eventsOnly = await subscribe(p.sql, key, { url: other.url, kinds: ['events'] });
    r.state.secrets.push(sub.secret);
    other.state.secrets.push(eventsOnly.secret);
    workersOf(t, p);
    const status = { category: 'availability', freshness: 'fresh', status: { state: 'open', updated_at: '2026-11-27T10:00:00Z' } };
    const option = { fuelling_option: '700ld', status: 'available', reason: null, datetime: '2026-11-27T10:00:00Z' };
    // As the servers record them: seq from hrs_change_seq(), one row per change_key, a notification at commit.
    await p.sql.begin(async (tx) => {
      await tx`INSERT INTO change_log (seq, topic, hrs_id, entity, change, at, change_key, payload)
             VALUES (hrs_change_seq(), 'status', 'BERLA', 'BERLA/availability', 'changed', clock_timestamp(), 'status:BERLA:availability:1', ${tx.json(status)})`;
      await tx`INSERT INTO change_log (seq, topic, hrs_id, entity, change, at, change_key, payload)
             VALUES (hrs_change_seq(), 'option', 'BERLA', 'BERLA/700ld', 'changed', clock_timestamp(), 'option:BERLA:700ld:1', ${tx.json(option)})`;
      await tx`SELECT pg_notify('hrs_change_log', '')`;
    });
    await until('both changes', () => (deliveredChanges(r).length >= 2 ? true : undefined));
    const [s, o] = deliveredChanges(r);
    t.match(s, { type: 'status.changed', hrs_id: 'BERLA', ...status }, 'status.changed spreads category, freshness, status');
    t.match(o, { type: 'fuelling_option.changed', hrs_id: 'BERLA', ...option }, 'fuelling_option.changed spreads the option summary');
    t.same(Object.keys(s!), ['seq', 'type', 'hrs_id', 'at', 'category', 'freshness', 'status'], 'common fields first');
    await quiet();
    t.equal(other.received.length, 0, 'a subscription to events receives none of them');
  });

  t.test('only the newest 100 attempts of a subscription are kept', async (t) => {
    const { p, key } = await platform(t);
    const sub = await subscribe(p.sql, key, { url: 'http://127.0.0.1:9/hook', kinds: ['events'] });
    const { recordAttempt } = await import('../../db/queries/webhook-delivery.js');
    for (let i = 1; i <= 105; i++) {
      await recordAttempt(p.sql, { subscriptionId: sub.id, messageId: `msg_${sub.id}_1_1`, kind: 'changes', changes: 1, attempt: i, statusCode: 503, error: 'answered 503', latencyMs: 3 });
    }
    const rows = await p.sql<{ attempt: number }[]>`SELECT attempt FROM webhook_deliveries WHERE subscription_id = ${sub.id} ORDER BY id`;
    t.equal(rows.length, 100, '100 kept');
    t.same([rows[0]!.attempt, rows[99]!.attempt], [6, 105], 'the newest');
  });

  t.test('delivered attempts trim to the newest 100 every tenth record: never more than 109 held, the newest 100 listed', async (t) => {
    const { p, key } = await platform(t);
    const sub = await subscribe(p.sql, key, { url: 'http://127.0.0.1:9/hook', kinds: ['events'] });
    const other = await subscribe(p.sql, key, { url: 'http://127.0.0.1:9/other', kinds: ['events'] });
    const { recordDelivered, DELIVERIES_HELD, DELIVERIES_KEPT } = await import('../../db/queries/webhook-delivery.js');
    const { webhookDeliveries } = await import('../../db/queries/webhooks.js');
    const count = async (id: string) => (await p.sql<{ n: number }[]>`SELECT count(*)::int AS n FROM webhook_deliveries WHERE subscription_id = ${id}`)[0]!.n;
    const attempt = (id: string, i: number) => ({ subscriptionId: id, messageId: `msg_${id}_${i}_${i}`, kind: 'changes' as const, changes: 1, attempt: 1, statusCode: 204, error: null, latencyMs: 2 });
    // Each record leaves the cursor where it is (the message's last seq is the cursor itself).
    const cursors = new Map((await p.sql<{ id: string; cursor_seq: string }[]>`SELECT id, cursor_seq::text FROM webhook_subscriptions`).map((r) => [r.id, r.cursor_seq]));
    const fresh = (id: string) => ({ body: '{}', firstSeq: cursors.get(id)!, lastSeq: cursors.get(id)!, cursor: cursors.get(id)! });
    const held: number[] = [];
    for (let i = 1; i <= 125; i++) {
      // The other subscription's records share the statements, one in three.
      const list = [{ attempt: attempt(sub.id, i), fresh: fresh(sub.id) }];
      if (i % 3 === 0) list.push({ attempt: attempt(other.id, i), fresh: fresh(other.id) });
      await recordDelivered(p.sql, list);
      held.push(await count(sub.id));
    }
    t.equal(Math.max(...held), DELIVERIES_HELD, `at most ${DELIVERIES_HELD} held`);
    t.same(held.slice(0, 100), Array.from({ length: 100 }, (_, i) => i + 1), 'none trimmed before there were 100');
    t.same(held.slice(100), [101, 102, 103, 104, 105, 106, 107, 108, 109, 100, 101, 102, 103, 104, 105, 106, 107, 108, 109, 100, 101, 102, 103, 104, 105], 'trimmed to 100 at every tenth record');
    t.equal(await count(other.id), 41, "the other subscription's 41, none trimmed");
    const listed = await webhookDeliveries(p.sql, sub.id, DELIVERIES_KEPT);
    t.same([listed.length, listed[0]!.message_id, listed[99]!.message_id], [100, `msg_${sub.id}_125_125`, `msg_${sub.id}_26_26`], 'the newest 100 listed, newest first');
    const [row] = await p.sql<{ attempts_recorded: string }[]>`SELECT attempts_recorded::text FROM webhook_subscriptions WHERE id = ${sub.id}`;
    t.equal(row!.attempts_recorded, '125', 'each record counted');
  });

  t.test('the retry schedule: exponential from 5 s, at most 10 minutes, full jitter', async (t) => {
    const { retryDelayMs, DEFAULT_BACKOFF } = await import('../../src/domain/webhooks/messages.js');
    const top = () => 0.999999;
    t.same([1, 2, 3, 4].map((a) => Math.round(retryDelayMs(a, DEFAULT_BACKOFF, top) / 1000)), [5, 10, 20, 40], 'doubling from 5 s');
    t.equal(Math.round(retryDelayMs(30, DEFAULT_BACKOFF, top) / 1000), 600, 'capped at 10 minutes');
    t.equal(retryDelayMs(3, DEFAULT_BACKOFF, () => 0), 0, 'jitter down to nothing');
    const samples = Array.from({ length: 200 }, () => retryDelayMs(3, DEFAULT_BACKOFF));
    t.ok(samples.every((d) => d >= 0 && d < 20_000) && new Set(samples).size > 100, 'uniform within the ceiling');
  });

  t.test('a station the registry at hand does not know yet is placed from its row for a bbox', async (t) => {
    const { p, key } = await platform(t);
    const r = await receiver(t, []);
    const sub = await subscribe(p.sql, key, { url: r.url, kinds: ['station_records'], bbox: [11, 48, 12, 49] });
    r.state.secrets.push(sub.secret);
    // A registry that has not caught up: it knows no station.
    workersOf(t, p, undefined, () => ({ station: () => undefined }));
    const f = placed();
    f.stations.push({ hrs_id: 'MUNCH', operator: 'h2-demo', name: 'München Nord', heavy_duty: false, details: { city: 'München', lat: 48.2, lon: 11.6 } } as never);
    (f.stations[0] as Station).name = 'Berlin Airport (outside the box)';
    await p.load(f);
    await until('the creation', () => (deliveredChanges(r).length >= 1 ? true : undefined));
    const [last] = await p.sql<{ seq: string }[]>`SELECT max(seq)::text AS seq FROM change_log WHERE topic = 'station'`;
    await caughtUp(p, sub.id, last!.seq);
    t.same(deliveredChanges(r).map((c) => `${c.type} ${c.hrs_id}`), ['station.created MUNCH'], 'MUNCH in the box, BERLA not');
  });

  t.test('an endpoint that does not answer in WEBHOOK_TIMEOUT is a failed attempt', async (t) => {
    const { blackhole } = await import('../helpers/private-services.js');
    const { p, key } = await platform(t, { WEBHOOK_TIMEOUT: '1' });
    const hole = await blackhole(t);
    const sub = await subscribe(p.sql, key, { url: `http://127.0.0.1:${hole.port}/hook`, kinds: ['station_records'] });
    workersOf(t, p);
    const f = placed();
    (f.stations[0] as Station).name = 'Berlin Airport (renamed)';
    const started = Date.now();
    await p.load(f);
    const row = await until('the failed attempt', async () => {
      const [d] = await p.sql<{ error: string | null; status_code: number | null }[]>`SELECT error, status_code FROM webhook_deliveries WHERE subscription_id = ${sub.id} ORDER BY id LIMIT 1`;
      return d;
    });
    t.same(row, { error: 'no answer within 1000 ms', status_code: null }, 'the deadline is the reason');
    t.ok(Date.now() - started >= 1000, 'after the deadline');
  });
});

t.test('webhooks-outage', async (t) => {
  /**
   * Webhook delivery through failures: a receiver that never recovers (the subscription disabled at the
   * give-up time and its owner e-mailed through the outbox); a Redis restart while a retry waits (webhook
   * delivery's state and queue are PostgreSQL's: nothing lost). A receiver down for two minutes, then back:
   * receiver-down-webhooks.test.ts.
   */
  t.test('giving up disables the subscription and e-mails its owner once', async (t) => {
    const smtp = await smtpSink(t);
    const p = await startTestPlatform(t, {
      fixture: baseFixture(),
      env: { WEBHOOK_SECRET_KEY: webhookKey(), WEBHOOK_ALLOW_LOOPBACK: 'true', SMTP_URL: `smtp://127.0.0.1:${smtp.port}`, MAIL_FROM: 'HRS <no-reply@hrs.example>' },
    });
    const key = p.parts.config.webhookSecretKey!;
    const r = await receiver(t, []);
    const sub = await subscribe(p.sql, key, { url: r.url, kinds: ['station_records'] });
    r.state.secrets.push(sub.secret);
    r.state.answer = () => 503;
    await p.sql`UPDATE webhook_subscriptions SET description = 'ERP sync' WHERE id = ${sub.id}`;
    workersOf(t, p, { ...TEST_TIMING, giveUpAfterMs: 2500 });
    await p.load(withEvents([], 'Berlin Airport (renamed)'));
    const disabled = await until('the subscription disabled', async () => {
      const [row] = await p.sql<{ state: string; disabled_at: Date | null; disabled_reason: string | null; failing_since: Date | null }[]>`
      SELECT state, disabled_at, disabled_reason, failing_since FROM webhook_subscriptions WHERE id = ${sub.id}`;
      return row!.state === 'disabled' ? row! : undefined;
    }, 30_000);
    t.match(disabled.disabled_reason, /no delivery succeeded for 3 s|no delivery succeeded for 2\.5 s|503/, 'the reason names the last failure');
    const failedFor = disabled.disabled_at!.getTime() - disabled.failing_since!.getTime();
    t.ok(failedFor >= 2500 && failedFor < 6000, `disabled at the give-up time (${failedFor} ms after the first failure)`);
    const attempts = r.received.length;
    t.ok(attempts >= 3, `retried meanwhile (${attempts} attempts)`);

    const mail = await until('the e-mail', () => smtp.received[0], 20_000);
    t.same(mail.to, ['alice@example.org'], 'to the owner');
    t.match(mail.mail.subject, /webhook "ERP sync" was disabled/);
    t.match(mail.mail.text, new RegExp(r.url.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')), 'names the endpoint');
    t.match(mail.mail.text, /503/, 'and the last error');
    t.match(String(mail.mail.html), /ERP sync/, 'an HTML part like the other e-mails');
    await until('the outbox row sent', async () => {
      const [row] = await p.sql<{ state: string }[]>`SELECT state FROM mail_outbox WHERE subscription_id = ${sub.id}`;
      return row?.state === 'sent' ? true : undefined;
    });
    await p.load(withEvents([], 'Berlin Airport (renamed again)'));
    await quiet();
    t.equal(r.received.length, attempts, 'nothing sent to a disabled subscription');
    t.equal(smtp.received.length, 1, 'one e-mail');

    // Enabled again as the portal does it (state active, failures forgotten): delivery resumes with the
    // message it stopped at, under the same id, then the change made while it was disabled.
    const stoppedAt = String(r.received[r.received.length - 1]!.headers['webhook-id']);
    r.state.answer = () => 200;
    await p.sql`UPDATE webhook_subscriptions SET state = 'active', disabled_at = NULL, disabled_reason = NULL, failing_since = NULL WHERE id = ${sub.id}`;
    await until('both changes after enabling', () => (deliveredChanges(r).length >= 2 ? true : undefined));
    const [first, second] = r.delivered();
    t.equal(first!.headers['webhook-id'], stoppedAt, 'the pending message first, under its id');
    t.same(deliveredChanges(r).map((c) => c.type), ['station.changed', 'station.changed'], 'then the change made meanwhile');
    t.not(second!.headers['webhook-id'], stoppedAt, 'in a message of its own');
    checkResends(t, r.received);
    // The receiver has the request before the worker records its answer.
    const recorded = await until('the attempts recorded', async () => {
      const rows = await p.sql<{ attempt: number; status_code: number | null; message_id: string }[]>`
      SELECT attempt, status_code, message_id FROM webhook_deliveries WHERE subscription_id = ${sub.id} ORDER BY id`;
      return rows.length >= attempts + 2 ? rows : undefined;
    });
    t.same(recorded.slice(0, attempts).map((d) => d.attempt), Array.from({ length: attempts }, (_, i) => i + 1), 'the failed attempts counted 1, 2, 3 …');
    t.same(recorded.slice(attempts).map((d) => [d.attempt, d.status_code]), [[1, 200], [1, 200]], 'enabled again: a new series, delivered at its first attempt');
  });

  t.test('a Redis restart while a retry waits loses nothing', async (t) => {
    const redis = await privateRedis(t);
    const p = await startTestPlatform(t, { fixture: baseFixture(), env: { REDIS_URL: redis.url, WEBHOOK_SECRET_KEY: webhookKey(), WEBHOOK_ALLOW_LOOPBACK: 'true' } });
    const key = p.parts.config.webhookSecretKey!;
    const start = await head(p);
    const r = await receiver(t, []);
    const sub = await subscribe(p.sql, key, { url: r.url, kinds: ['station_records', 'events'] });
    r.state.secrets.push(sub.secret);
    // Slow retries: a retry is waiting when Redis goes.
    workersOf(t, p, { ...TEST_TIMING, backoff: { baseMs: 3000, capMs: 3000 } });
    r.state.answer = () => 503;
    await p.load(withEvents(events(10, 5)));
    await until('a failed attempt', () => (r.received.length >= 1 ? true : undefined));
    await redis.stop();
    await p.load(withEvents(events(10, 8), 'Berlin Airport T3'));
    await until('the client has seen Redis go', () => (p.parts.redis.isReady ? undefined : true));
    await redis.start();
    r.state.answer = () => 200;
    const expected = await loggedSeqs(p, start);
    await until('every change delivered after the restart', () => (deliveredChanges(r).length >= expected.length ? true : undefined), 40_000);
    await caughtUp(p, sub.id, expected.at(-1)!.seq);
    t.same(deliveredChanges(r).map((c) => ({ seq: c.seq, hrs_id: c.hrs_id, type: c.type })), expected, 'every change once, in order');
    checkResends(t, r.received);
  });
});

t.test('webhooks-queue-outage', async (t) => {
  /**
   * Webhooks do not wait on Redis: their queue is PostgreSQL. With Redis down, a ping and a re-enable
   * answer at once (202, 200), and the webhook worker delivers both the ping and the message the
   * subscription had pending when it was disabled.
   */
  const redis = await privateRedis(t);
  const p = await startTestPlatform(t, { fixture: portalFixture(), env: { REDIS_URL: redis.url, WEBHOOK_SECRET_KEY: webhookKey(), WEBHOOK_ALLOW_LOOPBACK: 'true' } });
  const alice = await signedIn(p, ACCOUNTS.none);

  t.test('Redis down: ping and re-enable answer at once, and both are delivered', async (t) => {
    const r = await receiver(t, []);
    const made = (await alice.call('POST', '/portal/v1/webhooks', { url: r.url, kinds: ['events'] })).body;
    r.state.secrets.push(made.secret);
    const path = `/portal/v1/webhooks/${made.id}`;
    // Disabled with a message pending, as giving up leaves it.
    const messageId = `msg_${made.id}_1_1`;
    const body = JSON.stringify({ type: 'hrs.changes', timestamp: new Date().toISOString(), data: { subscription_id: made.id, changes: [] } });
    await p.sql`
    UPDATE webhook_subscriptions SET state = 'disabled', disabled_at = now(), disabled_reason = 'failing', failing_since = now() - interval '1 day',
      pending_message_id = ${messageId}, pending_body = ${body}, pending_first_seq = cursor_seq + 1, pending_last_seq = cursor_seq + 1, pending_changes = 0
    WHERE id = ${made.id}`;
    // The webhook worker alone: what is tested is that webhooks need no Redis. (The BullMQ workers'
    // own behaviour through a Redis outage is tested in test/platform/outages.test.ts.)
    const config = p.parts.config;
    const worker = await startWebhookWorker({
      redis: p.parts.redis,
      redisPrefix: config.redisPrefix,
      sql: p.sql,
      log: createLogger('silent'),
      secretKey: config.webhookSecretKey!,
      baseUrl: config.baseUrl,
      timeoutMs: config.webhookTimeoutMs,
      allowLoopback: true,
      resolver: boundedResolver({ timeoutMs: config.webhookResolveTimeoutMs }),
      giveUpAfterMs: config.webhookGiveUpAfterMs,
      stations: () => p.parts.registry,
      timing: TEST_TIMING,
    });
    t.teardown(() => worker.close());

    await redis.stop();
    await until('the client has seen Redis go', () => (p.parts.redis.isReady ? undefined : true));
    const ping = await alice.call('POST', `${path}/ping`);
    t.equal(ping.status, 202, 'ping: 202');
    const enable = await alice.call('PATCH', path, { state: 'active' });
    t.equal(enable.status, 200, 're-enable: 200');
    t.match(enable.body, { state: 'active', disabled_at: null });

    await until('the ping and the pending message', () => (r.received.length >= 2 ? true : undefined));
    t.same(r.received.map((m) => String(m.headers['webhook-id'])).sort(), [messageId, ping.body.message_id].sort(), 'both sent, Redis still down');
    t.ok(r.received.every((m) => m.verified), 'signed');
    t.notOk(p.parts.redis.isReady, 'Redis was down all along');
    // The receiver has the request before the worker records its answer.
    const row = await until('the delivery recorded', async () => {
      const [row] = await p.sql<{ pending_message_id: string | null; state: string }[]>`SELECT pending_message_id, state FROM webhook_subscriptions WHERE id = ${made.id}`;
      return row!.pending_message_id === null ? row : undefined;
    });
    t.same(row, { pending_message_id: null, state: 'active' }, 'the pending message delivered');
    await redis.start();
  });
});

t.test('webhooks-turn-cut-short', async (t) => {
  /**
   * A message is not stored before its first attempt (workers/webhooks/deliver.ts formNext): a turn
   * whose outcome cannot be recorded (PostgreSQL gone between the send and the record, the worker
   * killed there) leaves the subscription as the claim read it, and once the claim lapses the message
   * is formed again from the same rows: the receiver gets it again under the same webhook-id with the
   * same body, byte for byte, and the cursor moves past it once.
   */
  t.test('the outcome not recorded: the same id and body again once the claim lapses', async (t) => {
    const { p, start, r, sub } = await subscribedPlatform(t);
    // The first record of a delivered attempt fails, as it would with the connection gone.
    let records = 0;
    const worker = await workerRefusingRecords(t, p, () => records++ === 0);
    await p.load(withEvents(events(10, 3)));
    const expected = await loggedSeqs(p, start);
    await until('the first attempt', () => (r.received.length >= 1 ? true : undefined));
    await until('its record refused', () => (records >= 1 ? true : undefined));
    const [held] = await p.sql<{ cursor_seq: string; pending_message_id: string | null; leased: boolean }[]>`
      SELECT cursor_seq::text, pending_message_id, next_attempt_at > now() AS leased FROM webhook_subscriptions WHERE id = ${sub.id}`;
    t.same(held, { cursor_seq: start, pending_message_id: null, leased: true }, 'nothing recorded: the cursor where it was, nothing pending, the claim held');
    t.equal(r.received.length, 1, 'nothing sent while the claim is held');

    // The claim lapses (WEBHOOK_TIMEOUT + 30 s later; here at once).
    await p.sql`UPDATE webhook_subscriptions SET next_attempt_at = now() WHERE id = ${sub.id}`;
    await worker.wake();
    await until('the message again', () => (r.received.length >= 2 ? true : undefined));
    const [first, second] = r.received;
    t.equal(second!.headers['webhook-id'], first!.headers['webhook-id'], 'the same webhook-id');
    t.equal(second!.body, first!.body, 'the same body, byte for byte');
    t.ok(second!.verified, 'signed');
    await caughtUp(p, sub.id, expected.at(-1)!.seq);
    t.same(
      deliveredChanges(r).slice(first!.verified!.data.changes!.length).map((c) => c.seq),
      expected.map((c) => c.seq),
      'then recorded: every change after it once, in order',
    );
    checkResends(t, r.received);
  });
});

t.test('webhooks-delivered-together', async (t) => {
  /**
   * Delivered attempts are group-committed (workers/webhooks/delivered.ts): turns whose 2xx came while
   * a record ran are recorded in one statement, each subscription's cursor moved past its own message;
   * when such a shared statement fails, each is recorded alone and none is lost.
   */
  t.test('twenty subscriptions delivered at once: records shared, a failed shared one recorded alone', async (t) => {
    const { p, key, start, r, sub: first } = await subscribedPlatform(t);
    const subs = [first];
    for (let i = 1; i < 20; i++) subs.push(await subscribe(p.sql, key, { url: r.url, kinds: ['station_records', 'events'] }));
    r.state.secrets.push(...subs.slice(1).map((s) => s.secret));
    /** Records per recordDelivered statement; the first shared one fails. */
    const sizes: number[] = [];
    let failedShared = false;
    await workerRefusingRecords(t, p, (records) => {
      sizes.push(records);
      return records > 1 && !failedShared && (failedShared = true);
    });

    for (let round = 0; round < 3; round++) {
      await p.load(withEvents(events(10, 2 + round)));
      const expected = await loggedSeqs(p, start);
      for (const sub of subs) await caughtUp(p, sub.id, expected.at(-1)!.seq);
    }
    const expected = await loggedSeqs(p, start);
    for (const sub of subs) {
      const got = r.delivered().filter((m) => m.verified?.data.subscription_id === sub.id).flatMap((m) => m.verified!.data.changes!.map((c) => c.seq));
      t.same(got, expected.map((c) => c.seq), `${sub.id}: every change once, in order`);
    }
    t.ok(sizes.some((n) => n > 1), `records shared a statement (${sizes.join(' ')})`);
    t.ok(failedShared, 'a shared one failed, and its records were made alone');
    const recorded = await p.sql<{ n: number }[]>`
      SELECT count(*)::int AS n FROM webhook_deliveries WHERE subscription_id = ANY(${subs.map((s) => s.id)}) AND status_code = 200`;
    t.equal(recorded[0]!.n, r.delivered().length, 'every delivered message recorded once');
  });
});

t.test('webhooks-round-trips', async (t) => {
  /**
   * What a delivered webhook message costs in round trips: every statement the webhook worker sends to
   * PostgreSQL (counted by the client's debug hook on a pool of its own) and every command it sends to
   * Redis on the webhook queue's keys (MONITOR on a private Redis; a script's own commands aside), over
   * ten messages, each one change delivered alone. The safety-net poll is set far out so only the
   * LISTEN wakes and the deliveries count. A message costs a claim (the seqs of its changes come
   * with it), the read of those rows (once a claim, for every subscription it claimed), and one
   * statement recording the answer and moving the cursor (a message is stored as pending only when an
   * attempt fails, in that statement); the claim that finds nothing more ends the worker's wake. Before
   * PostgreSQL was delivery's one queue (migration 0017) it was 11 statements and 8 Redis commands;
   * with each message stored as pending before its first attempt, 5.
   */
  const MESSAGES = 10;

  t.test('round trips per delivered message', async (t) => {
    const redis = await privateRedis(t);
    const p = await startTestPlatform(t, { fixture: baseFixture(), env: { REDIS_URL: redis.url, WEBHOOK_SECRET_KEY: webhookKey(), WEBHOOK_ALLOW_LOOPBACK: 'true' } });
    const key = p.parts.config.webhookSecretKey!;
    const r = await receiver(t, []);
    const sub = await subscribe(p.sql, key, { url: r.url, kinds: ['station_records'] });
    r.state.secrets.push(sub.secret);

    let statements = 0;
    const sql = connect(p.parts.config.databaseUrl, { debug: () => void statements++ });
    const workerRedis = await openRedis(redis.url, 'webhooks-round-trips');
    const monitor = await openRedis(redis.url, 'webhooks-round-trips-monitor');
    // Commands a client sent (not those a script ran: MONITOR tags them `lua`) on the webhook queue's keys.
    const queueKeys = `${p.parts.config.redisPrefix}:bull:webhooks:`;
    let commands = 0;
    await monitor.monitor((line: string) => {
      if (!line.includes(' lua]') && line.includes(`"${queueKeys}`)) commands++;
    });
    const worker = await startWebhookWorker({
      redis: workerRedis,
      redisPrefix: p.parts.config.redisPrefix,
      sql,
      log: createLogger('silent'),
      secretKey: key,
      baseUrl: p.parts.config.baseUrl,
      timeoutMs: 5000,
      allowLoopback: true,
      resolver: boundedResolver({ timeoutMs: 2000 }),
      giveUpAfterMs: 3600_000,
      stations: () => p.parts.registry,
      timing: { pollEveryMs: 3600_000 },
    });
    t.teardown(async () => {
      await worker.close();
      await sql.end({ timeout: 1 });
      await closeRedis(monitor);
      await closeRedis(workerRedis);
    });
    // Settled: the start's sweep is over and nothing is due (no statement for 300 ms).
    await until('the worker idle', async () => {
      const seen = statements;
      await new Promise((resolve) => setTimeout(resolve, 300));
      return statements === seen ? true : undefined;
    });
    const [sqlBefore, redisBefore] = [statements, commands];
    for (let i = 1; i <= MESSAGES; i++) {
      await p.load(withEvents([], `Berlin Airport ${i}`));
      await until(`message ${i}`, () => (deliveredChanges(r).length >= i ? true : undefined));
      // The worker finishes its turn (records the answer, finds nothing more) before the next change.
      await until('the worker idle', async () => {
        const seen = statements;
        await new Promise((resolve) => setTimeout(resolve, 300));
        return statements === seen ? true : undefined;
      });
    }
    const perMessage = { sql: (statements - sqlBefore) / MESSAGES, redis: (commands - redisBefore) / MESSAGES };
    t.comment(`per delivered message: ${perMessage.sql} SQL statements, ${perMessage.redis} Redis commands`);
    t.equal(r.delivered().length, MESSAGES, 'one message per change');
    // 4 measured: claim, read the rows, record and advance, the claim that finds nothing more (a
    // notification arriving during a claim may add one).
    t.ok(perMessage.sql <= 5, `at most 5 statements a message (${perMessage.sql})`);
    t.equal(perMessage.redis, 0, 'no Redis command');
  });
});
