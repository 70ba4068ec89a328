/**
 * Status streams, their hardening and the bus.
 *
 * One file, one process: its parts share the loaded platform code. Each part is a subtest named after
 * what it covers.
 */
import t, { type Test } from 'tap';
import { createLogger } from '../../src/config/log.js';
import { fromAnnouncement, receiptsFromAnnouncement } from '../../src/infra/announce.js';
import { Bus, type BusMessageOf, registryMessage } from '../../src/infra/bus.js';
import { closeRedis, openRedis } from '../../src/infra/redis.js';
import { importV2Fixture, stationIds } from '../bench/lib/fixtures.js';
import { baseFixture, berlaAssignments, TOKENS } from '../helpers/fixtures.js';
import { ADMIN_TOKEN, get, logCapture, postSignals as post, startTestPlatform, type TestPlatform, uniqueName } from '../helpers/platform.js';
import { TEST_REDIS_URL } from '../helpers/services.js';
import { until } from '../helpers/wait.js';
import { WsClient } from '../helpers/ws.js';

t.test('push', async (t) => {
  /** BERLA live for all four types with mon-1; HAMBG live for usage; a second user with five tokens. */
  function fixture() {
    const f = baseFixture();
    f.assignments = berlaAssignments('testing');
    f.users.push({ id: 'bob', email: 'bob@example.org' });
    for (let i = 1; i <= 5; i++) {
      f.tokens.push({ generation: 'export_v2', user: 'bob', name: `device ${i}`, value: bobToken(i), expires_at: '2099-06-01T00:00:00Z' });
    }
    return f;
  }

  const bobToken = (i: number) => `test-export-v2-bob-device-${i}`;
  const AUTH = { Authorization: `Bearer ${TOKENS.export_v2}` };
  const ago = (seconds: number) => new Date(Date.now() - seconds * 1000).toISOString();

  const streamUrl = (p: TestPlatform) => `${p.url.replace('http:', 'ws:')}/v2/hrs/status/stream`;
  const adminUrl = (p: TestPlatform) => `${p.url.replace('http:', 'ws:')}/admin/v1/live`;


  const availability = (hrs: string, datetime: string, n1 = true) => ({
    hrs,
    datetime,
    nozzles: [
      { id: 'N1', available: n1 },
      { id: 'N2', available: false },
    ],
    station: { maintenance: false, limitedly_available: !n1 },
  });

  async function statusOf(p: TestPlatform, hrsId: string): Promise<unknown> {
    const res = await get(`${p.url}/v2/hrs/${hrsId}/status`, TOKENS.export_v2);
    return res.json();
  }

  /** An authenticated stream (header), its `authenticated` message read. */
  async function stream(p: TestPlatform, headers: Record<string, string> = AUTH): Promise<WsClient> {
    const ws = await WsClient.connect(streamUrl(p), headers);
    const hello = await ws.next();
    if (hello.type !== 'authenticated') throw new Error(`expected "authenticated", got ${JSON.stringify(hello)}`);
    return ws;
  }

  const POLLING = { EXPORT_V2_RATE_LIMIT_MINUTE: '1000000' };

  t.test('status stream: header auth, subscribe to one station, snapshot, then a status message per change', async (t) => {
    const p = await startTestPlatform(t, { fixture: fixture(), env: POLLING });
    await post(p, 'availability', [availability('BERLA', ago(10))]);
    const ws = await stream(p);
    t.teardown(() => ws.close());
    t.same(ws.messages[0], { type: 'authenticated', user: 'alice' });

    ws.send({ type: 'subscribe', hrs_ids: ['BERLA'], id: 'c1' });
    t.same(await ws.next(), { type: 'subscribed', id: 'c1', hrs_ids: ['BERLA'], subscriptions: ['BERLA'] }, 'the ack echoes the id');
    const snapshot = await ws.next();
    t.equal(snapshot.type, 'snapshot');
    t.same(snapshot.stations, [await statusOf(p, 'BERLA')], 'the snapshot is the station status object of GET /v2/hrs/{id}/status');

    const first = ago(5);
    await post(p, 'availability', [availability('BERLA', first, false)]);
    const change = await ws.next();
    t.equal(change.type, 'status');
    t.equal(change.station.availability.datetime.slice(0, 19), first.slice(0, 19));
    t.same(change.station, await statusOf(p, 'BERLA'), 'the full station status object, as polled');

    const second = ago(1);
    await post(p, 'availability', [availability('BERLA', second)]);
    const next = await ws.next();
    t.equal(next.station.availability.datetime.slice(0, 19), second.slice(0, 19), 'changes arrive in order');

  });

  t.test('freshness (an extension): each section says fresh, then stale at its deadline, polled and streamed', async (t) => {
    const p = await startTestPlatform(t, { fixture: fixture(), env: { ...POLLING, STATUS_STALE_AFTER: '3', STATUS_UNKNOWN_AFTER: '6' } });
    const datetime = ago(1);
    await post(p, 'availability', [availability('BERLA', datetime)]);
    await post(p, 'hydrogen-storage', [{ hrs: 'BERLA', datetime, storages: [{ id: 'S1', low_h2_storage: false }] }]);
    const ws = await stream(p);
    t.teardown(() => ws.close());
    ws.send({ type: 'subscribe', hrs_ids: ['BERLA'] });
    await ws.next();
    const snapshot = await ws.next();
    t.equal(snapshot.stations[0].availability.freshness, 'fresh', 'fresh in the snapshot');
    t.equal(((await statusOf(p, 'BERLA')) as any).availability.freshness, 'fresh', 'and polled');
    const stale: any = await until('availability turning stale on the stream', async () => {
      const message = await ws.next();
      return message.type === 'status' && message.station.availability?.freshness === 'stale' ? message : undefined;
    });
    t.equal(stale.station.hydrogen_storage.freshness, 'stale', 'hydrogen storage turns stale at the same deadline');
    t.equal(((await statusOf(p, 'BERLA')) as any).availability.freshness, 'stale', 'polled: stale');
    const unknown: any = await until('availability unknown', async () => {
      const message = await ws.next();
      return message.type === 'status' && message.station.availability === null ? message : undefined;
    });
    t.equal(unknown.station.hydrogen_storage.freshness, 'stale', 'hydrogen storage stays published, stale');
  });

  t.test('status stream: auth by first message; auth timeout; bad tokens close with 4401', async (t) => {
    const p = await startTestPlatform(t, { fixture: fixture(), env: { ...POLLING, PUSH_AUTH_TIMEOUT: '1' } });

    const browser = await WsClient.connect(streamUrl(p));
    t.teardown(() => browser.close());
    // Opened after the browser's: its timeout ends after the browser's would have.
    const silent = await WsClient.connect(streamUrl(p));
    const started = Date.now();
    browser.send({ type: 'subscribe', hrs_ids: ['BERLA'] });
    t.match(await browser.next(), { type: 'error', code: 'not_authenticated' }, 'subscribing first is answered, not fatal');
    browser.send({ type: 'auth', token: TOKENS.export_v2, id: 7 });
    t.same(await browser.next(), { type: 'authenticated', user: 'alice' });
    browser.send({ type: 'auth', token: TOKENS.export_v2 });
    t.match(await browser.next(), { type: 'error', code: 'already_authenticated' });
    browser.send({ type: 'subscribe', hrs_ids: '*' });
    t.match(await browser.next(), { type: 'subscribed', hrs_ids: '*', subscriptions: '*' });
    t.match(await browser.next(), { type: 'snapshot' });
    t.match(await silent.next(), { type: 'error', code: 'not_authenticated' });
    t.same(await silent.closedWith(), { code: 4408, reason: 'no auth message in time' });
    t.ok(Date.now() - started >= 900, 'closed after the timeout, not before');
    t.equal(browser.closed, undefined, 'an authenticated connection outlives the auth timeout');

    const wrong = await WsClient.connect(streamUrl(p));
    wrong.send({ type: 'auth', token: 'no-such-token-at-all-0000' });
    t.match(await wrong.next(), { type: 'error', code: 'authentication_failed', detail: 'Invalid token.' });
    t.same(await wrong.closedWith(), { code: 4401, reason: 'not authenticated' });

    const importToken = await WsClient.connect(streamUrl(p));
    importToken.send({ type: 'auth', token: TOKENS.import_v2 });
    t.match(await importToken.next(), { type: 'error', code: 'authentication_failed', detail: /export v2 accepts a personal export v2 token only/ });
    t.equal((await importToken.closedWith()).code, 4401);

    const refused = await WsClient.connect(streamUrl(p), { Authorization: 'Bearer no-such-token-at-all-0000' }).catch((err: unknown) => err);
    t.match(refused, { status: 401 }, 'a bad header token is refused before upgrading');
    t.match(JSON.parse((refused as { body: string }).body), { status: 401, detail: 'Invalid token.' }, 'with a problem body');

    const plain = await get(`${p.url}/v2/hrs/status/stream`, TOKENS.export_v2);
    t.equal(plain.status, 426, 'a plain GET is told to upgrade');
    t.match(await plain.json(), { status: 426, code: 'upgrade_required' });

    const inUrl = await get(`${p.url}/v2/hrs/status/stream?token=${TOKENS.export_v2}`);
    t.equal(inUrl.status, 400, 'a token in the URL is not a credential: an unknown parameter');
    t.match(await inUrl.json(), { status: 400, code: 'invalid_parameter', detail: /unknown parameter\(s\): token/ });
  });

  t.test('status stream: subscribe to "*", unsubscribe, bad messages answered and survived', async (t) => {
    const p = await startTestPlatform(t, { fixture: fixture(), env: POLLING });
    const ws = await stream(p);
    t.teardown(() => ws.close());

    for (const [bad, code, detail] of [
      ['not json', 'invalid_message', /JSON parse error/],
      [{ hrs_ids: ['BERLA'] }, 'invalid_message', /"type" must be one of "auth", "subscribe", "unsubscribe"/],
      [{ type: 'subscribe' }, 'invalid_message', /hrs_ids/],
      [{ type: 'subscribe', hrs_ids: [] }, 'invalid_message', /at least one station id/],
      [{ type: 'subscribe', hrs_ids: 'BERLA' }, 'invalid_message', /hrs_ids/],
      [{ type: 'subscribe', hrs_ids: ['BERLA'], extra: 1 }, 'invalid_message', /extra/],
      [{ type: 'dance', id: 'x' }, 'invalid_message', /got "dance"/],
    ] as const) {
      ws.send(bad);
      t.match(await ws.next(), { type: 'error', code, detail }, `answered: ${JSON.stringify(bad)}`);
    }
    ws.socket.send(Buffer.from([1, 2, 3]), { binary: true });
    t.match(await ws.next(), { type: 'error', code: 'invalid_message', detail: /binary/ });

    ws.send({ type: 'subscribe', hrs_ids: ['BERLA', 'NOSUCH', 'ZZZZZ'] });
    t.match(await ws.next(), { type: 'error', code: 'unknown_station', hrs_ids: ['NOSUCH', 'ZZZZZ'] });

    ws.send({ type: 'subscribe', hrs_ids: '*' });
    t.match(await ws.next(), { type: 'subscribed', hrs_ids: '*' });
    const all = await ws.next();
    t.same(all.stations.map((s: { hrs_id: string }) => s.hrs_id), ['BERLA', 'HAMBG'], 'the snapshot of "*" lists every station');
    t.same(all, { type: 'snapshot', ...((await (await get(`${p.url}/v2/hrs/status`, TOKENS.export_v2)).json()) as object) });

    await post(p, 'availability', [availability('BERLA', ago(3))]);
    t.match(await ws.next(), { type: 'status', station: { hrs_id: 'BERLA' } }, 'every station reaches "*"');

    ws.send({ type: 'unsubscribe', hrs_ids: ['BERLA'] });
    t.match(await ws.next(), { type: 'error', code: 'not_subscribed' }, 'one station cannot be dropped from "*"');
    ws.send({ type: 'unsubscribe', hrs_ids: '*' });
    t.same(await ws.next(), { type: 'unsubscribed', hrs_ids: '*', subscriptions: [] });
    await post(p, 'availability', [availability('BERLA', ago(1))]);
    await new Promise((resolve) => setTimeout(resolve, 300));
    t.same(ws.unread, [], 'nothing after unsubscribing');

    ws.send({ type: 'subscribe', hrs_ids: ['HAMBG', 'BERLA', 'BERLA'] });
    t.same(await ws.next(), { type: 'subscribed', hrs_ids: ['BERLA', 'HAMBG'], subscriptions: ['BERLA', 'HAMBG'] });
    t.same((await ws.next()).stations.length, 2);
    ws.send({ type: 'unsubscribe', hrs_ids: ['BERLA'] });
    t.same(await ws.next(), { type: 'unsubscribed', hrs_ids: ['BERLA'], subscriptions: ['HAMBG'] });
    await post(p, 'availability', [availability('BERLA', ago(0))]);
    await new Promise((resolve) => setTimeout(resolve, 300));
    t.same(ws.unread, [], 'an unsubscribed station sends nothing');
    t.equal(ws.closed, undefined, 'the connection survived every bad message');
  });

  t.test('status stream: at most 5 per user across instances, the sixth refused; opening counts once against the rate limit', async (t) => {
    const p = await startTestPlatform(t, { fixture: fixture(), env: { EXPORT_V2_RATE_LIMIT_MINUTE: '50' } });
    const q = await startTestPlatform(t, { sameStoreAs: p });
    const remaining = async (token: string) => Number((await get(`${p.url}/v2/hrs/status`, token)).headers.get('ratelimit-remaining'));

    const before = await remaining(bobToken(1));
    const first = await stream(p, { Authorization: `Bearer ${bobToken(1)}` });
    first.send({ type: 'subscribe', hrs_ids: '*' });
    await first.nextOf('snapshot');
    first.send({ type: 'subscribe', hrs_ids: ['BERLA'] });
    await first.nextOf('snapshot');
    t.equal(await remaining(bobToken(2)), before - 2, 'the stream counted once (messages do not count); the GET once');

    const open = [first];
    for (const [platform, i] of [[p, 2], [p, 3], [q, 4], [q, 5]] as const) open.push(await stream(platform, { Authorization: `Bearer ${bobToken(i)}` }));
    t.teardown(() => open.forEach((ws) => ws.close()));

    const refused = await WsClient.connect(streamUrl(p), { Authorization: `Bearer ${bobToken(1)}` }).catch((err: unknown) => err);
    t.match(refused, { status: 429 }, 'the sixth stream (by header) is refused before upgrading');
    t.match(JSON.parse((refused as { body: string }).body), {
      status: 429,
      code: 'too_many_streams',
      detail: 'At most 5 open status streams per user; close one before opening another.',
    });

    const byMessage = await WsClient.connect(streamUrl(q));
    byMessage.send({ type: 'auth', token: bobToken(2) });
    t.match(await byMessage.next(), { type: 'error', code: 'too_many_streams' }, 'the sixth (by message, other instance) too');
    t.same(await byMessage.closedWith(), { code: 4429, reason: 'too many streams or requests' });

    const alice = await WsClient.connect(streamUrl(q), AUTH);
    t.teardown(() => alice.close());
    t.same(await alice.next(), { type: 'authenticated', user: 'alice' }, 'another user is not affected');

    open.pop()!.close();
    const again = await until('a slot freed by a closed stream', async () =>
      WsClient.connect(streamUrl(p), { Authorization: `Bearer ${bobToken(5)}` }).catch(() => undefined),
    );
    t.teardown(() => again.close());
    t.equal((await again.next()).type, 'authenticated', 'a closed stream gives its slot back');
  });

  t.test('status stream: the unknown fallback and station removals are pushed; revoked tokens are cut off', async (t) => {
    const p = await startTestPlatform(t, { fixture: fixture(), env: { STATUS_STALE_AFTER: '1', STATUS_UNKNOWN_AFTER: '2', ...POLLING } });
    const ws = await stream(p);
    const all = await stream(p);
    t.teardown(() => [ws, all].forEach((c) => c.close()));
    ws.send({ type: 'subscribe', hrs_ids: ['BERLA'] });
    await ws.nextOf('snapshot');
    all.send({ type: 'subscribe', hrs_ids: '*' });
    await all.nextOf('snapshot');

    const posted = await post(p, 'availability', [availability('BERLA', new Date().toISOString())]);
    const fresh = await ws.next();
    t.not(fresh.station.availability, null, 'the reading is published');
    const stale = await ws.next(5000);
    t.equal(stale.station.availability.freshness, 'stale', 'turning stale is pushed too (the section says so)');
    const fallback = await ws.next(5000);
    t.equal(fallback.type, 'status');
    t.equal(fallback.station.availability, null, 'availability turns null at the fallback, pushed');
    const waited = Date.now() - posted;
    t.ok(waited >= 1500 && waited < 4500, `pushed at the unknown deadline (${waited} ms after posting)`);
    t.same(fallback.station, await statusOf(p, 'BERLA'), 'as polled');
    t.same(ws.unread, [], 'the stale step changes no published section: nothing sent for it');

    const without = fixture();
    without.stations = without.stations.filter((s) => s.hrs_id !== 'HAMBG');
    without.assignments = without.assignments.filter((a) => a.hrs_id !== 'HAMBG');
    await p.load(without);
    t.same(await all.nextOf('removed'), { type: 'removed', hrs_id: 'HAMBG' }, 'a removed station is announced');

    const [token] = await p.sql<{ id: string }[]>`SELECT id::text FROM tokens WHERE user_id = 'alice' AND generation = 'export_v2'`;
    const res = await get(`${p.url}/admin/v1/tokens/${token!.id}/revoke`, ADMIN_TOKEN, { method: 'POST' });
    t.equal(res.status, 200);
    t.match(await ws.nextOf('error'), { code: 'authentication_failed', detail: 'Token has been revoked.' });
    t.same(await ws.closedWith(), { code: 4401, reason: 'not authenticated' }, 'a revoked token closes its streams');
    t.equal((await all.closedWith()).code, 4401);
  });

  t.test('status stream and admin feed across instances; shutdown closes with 1001', async (t) => {
    const a = await startTestPlatform(t, { fixture: fixture(), env: POLLING });
    const b = await startTestPlatform(t, { sameStoreAs: a });
    const ws = await stream(b);
    ws.send({ type: 'subscribe', hrs_ids: ['BERLA'] });
    await ws.nextOf('snapshot');
    const admin = await WsClient.connect(adminUrl(b), { Authorization: `Bearer ${ADMIN_TOKEN}` });
    t.same(await admin.next(), { type: 'authenticated' });
    await admin.nextOf('snapshot');

    const datetime = ago(2);
    await post(a, 'availability', [availability('BERLA', datetime)]);
    const change = await ws.next();
    t.equal(change.station.availability.datetime.slice(0, 19), datetime.slice(0, 19), 'a change accepted by A reaches a stream on B');
    t.match(await admin.nextOf('change'), { hrs_id: 'BERLA', category: 'availability', cause: 'signal', freshness: 'fresh' });

    await post(a, 'pricing', [{ hrs: 'BERLA', datetime, products: [{ id: 'P700', gross_price: '13.85', currency: 'EUR' }] }]);
    t.match(await admin.nextOf('receipt'), { hrs_id: 'BERLA', category: 'pricing', assignment: 'testing', originator_id: 'mon-1' }, "A's receipts on B's feed");

    await b.stop('test restart');
    t.same(await ws.closedWith(), { code: 1001, reason: 'server shutting down' });
    t.same(await admin.closedWith(), { code: 1001, reason: 'server shutting down' });
  });

  t.test('admin feed: auth, snapshot, every change with freshness transitions, receipts without values', async (t) => {
    // BERLA's usage unassigned: its transmissions are stored, never published, and show as receipts.
    const f = fixture();
    f.assignments = f.assignments.filter((a) => !(a.hrs_id === 'BERLA' && a.signal_type === 'usage'));
    const p = await startTestPlatform(t, { fixture: f, env: { STATUS_STALE_AFTER: '1', STATUS_UNKNOWN_AFTER: '2', PUSH_AUTH_TIMEOUT: '1', ...POLLING } });

    const refused = await WsClient.connect(adminUrl(p), { Authorization: `Bearer ${TOKENS.export_v2}` }).catch((err: unknown) => err);
    t.match(refused, { status: 401 }, 'an export token is not the admin token');
    const wrong = await WsClient.connect(adminUrl(p));
    wrong.send({ type: 'auth', token: 'not-the-admin-token-000' });
    t.match(await wrong.next(), { type: 'error', code: 'authentication_failed' });
    t.equal((await wrong.closedWith()).code, 4401);
    const silent = await WsClient.connect(adminUrl(p));
    t.equal((await silent.closedWith()).code, 4408, 'no auth message in time');

    await post(p, 'hydrogen-storage', [{ hrs: 'BERLA', datetime: ago(0), storages: [{ id: 'S1', remaining_kg: '42.50' }] }]);
    const admin = await WsClient.connect(adminUrl(p));
    t.teardown(() => admin.close());
    admin.send({ type: 'subscribe', hrs_ids: '*' });
    t.match(await admin.next(), { type: 'error', code: 'invalid_message', detail: /"type" must be one of "auth"/ });
    admin.send({ type: 'auth', token: ADMIN_TOKEN });
    t.same(await admin.next(), { type: 'authenticated' });
    const snapshot = await admin.next();
    t.equal(snapshot.type, 'snapshot');
    t.same(snapshot.stations.map((s: { hrs_id: string }) => s.hrs_id), ['BERLA', 'HAMBG']);
    const berla = snapshot.stations[0];
    t.equal(berla.name, 'Berlin Airport');
    t.match(berla.sections, { availability: null, usage: null, pricing: null, hydrogen_storage: { freshness: 'fresh', originator_id: 'mon-1' } });
    t.same(berla.sections.hydrogen_storage.section.storages, [{ id: 'S1', low_h2_storage: true }], 'no remaining_kg');

    await post(p, 'availability', [availability('BERLA', new Date().toISOString())]);
    const events: Record<string, any>[] = [];
    for (;;) {
      const event = await admin.next(6000);
      if (event.type !== 'change' || event.category !== 'availability') continue;
      events.push(event);
      if (event.freshness === 'unknown') break;
    }
    t.same(
      events.map((e) => [e.cause, e.previous, e.freshness]),
      [
        ['signal', null, 'fresh'],
        ['freshness', 'fresh', 'stale'],
        ['freshness', 'stale', 'unknown'],
      ],
      'the reading, then every freshness transition',
    );
    t.match(events[0], { hrs_id: 'BERLA', originator_id: 'mon-1', section: { station: { limitedly_available: false } } });
    t.equal(events[2]!.section, null, 'unknown: nothing published');

    await post(p, 'usage', [{ hrs: 'BERLA', datetime: ago(1), nozzles: [{ id: 'N1', usage_status: 'in-use' }] }]);
    await post(p, 'pricing', [{ hrs: 'BERLA', datetime: ago(1), products: [{ id: 'P700', gross_price: '13.85', currency: 'EUR' }] }]);
    const unassigned = await admin.nextOf('receipt');
    t.same(Object.keys(unassigned).sort(), ['assignment', 'at', 'category', 'datetime', 'hrs_id', 'originator_id', 'received_datetime', 'type'], 'no values in a receipt');
    t.match(unassigned, { hrs_id: 'BERLA', category: 'usage', assignment: 'unassigned', originator_id: 'mon-1' });
    t.match(await admin.nextOf('receipt'), { hrs_id: 'BERLA', category: 'pricing', assignment: 'testing' });
    t.equal(await statusOf(p, 'BERLA').then((s) => (s as { usage: unknown }).usage), null, 'receipts are never published');
  });

  t.test('a subscriber that falls too far behind is closed with 4000; one that keeps up loses nothing', async (t) => {
    const ids = stationIds(200);
    const p = await startTestPlatform(t, {
      fixture: importV2Fixture(ids.length),
      env: { PUSH_MAX_BACKLOG: '16384', IMPORT_V2_RATE_LIMIT: '100000', ...POLLING },
    });
    const slow = await stream(p);
    const fast = await stream(p);
    t.teardown(() => [slow, fast].forEach((c) => c.close()));
    for (const ws of [slow, fast]) {
      ws.send({ type: 'subscribe', hrs_ids: '*' });
      await ws.nextOf('snapshot');
    }
    // The slow one stops reading: what is sent to it piles up in the kernel's buffers, then in uWS's.
    (slow.socket as unknown as { _socket: { pause(): void; resume(): void } })._socket.pause();

    const start = Date.now() - 280_000;
    const tooSlow = () => p.logs.lines.some((l) => l.msg === 'closing a subscriber that fell too far behind');
    let rounds = 0;
    while (!tooSlow() && rounds < 200) {
      const datetime = new Date(start + rounds * 1000).toISOString();
      await post(p, 'availability', ids.map((hrs, i) => availability(hrs, datetime, (i + rounds) % 2 === 0)));
      rounds++;
    }
    t.ok(tooSlow(), `closed after ${rounds} rounds of ${ids.length} status messages`);
    t.match(p.logs.lines.find((l) => l.msg === 'closing a subscriber that fell too far behind'), { limit: 16384, kind: 'stream' });

    (slow.socket as unknown as { _socket: { resume(): void } })._socket.resume();
    t.same(await slow.closedWith(20_000), { code: 4000, reason: 'subscriber too slow: backlog limit exceeded' }, 'the documented code, after what was queued');

    await until('every status message at the subscriber that kept up', () =>
      fast.messages.filter((m) => m.type === 'status').length >= rounds * ids.length ? true : undefined,
    );
    const received = fast.messages.filter((m) => m.type === 'status');
    t.equal(received.length, rounds * ids.length, 'one message per station and round: none lost, none doubled');
    t.equal(fast.closed, undefined, 'and it stays connected');
  });

  t.test('idle connections are pinged: a client that answers stays, one that does not is closed', async (t) => {
    const p = await startTestPlatform(t, { fixture: fixture(), env: { PUSH_IDLE_TIMEOUT: '8', ...POLLING } });
    const answering = await stream(p);
    let pings = 0;
    answering.socket.on('ping', () => pings++);
    const mute = await WsClient.connect(streamUrl(p), { ...AUTH }, { autoPong: false });
    t.teardown(() => [answering, mute].forEach((c) => c.close()));
    const closed = await mute.closedWith(20_000);
    t.not(closed.code, 1000, `a client that never answers a ping is dropped (${closed.code})`);
    t.ok(pings >= 1, `the server pinged (${pings})`);
    t.equal(answering.closed, undefined, 'a client that answers pings stays connected');
    answering.send({ type: 'subscribe', hrs_ids: ['BERLA'] });
    t.match(await answering.next(), { type: 'subscribed' });
  });
});

t.test('push-hardening', async (t) => {
  /** Alice (TOKENS.export_v2) and bob with five tokens. */
  function fixture() {
    const f = baseFixture();
    f.users.push({ id: 'bob', email: 'bob@example.org' });
    for (let i = 1; i <= 5; i++) {
      f.tokens.push({ generation: 'export_v2', user: 'bob', name: `device ${i}`, value: bobToken(i), expires_at: '2099-06-01T00:00:00Z' });
    }
    return f;
  }

  const bobToken = (i: number) => `test-export-v2-bob-device-${i}`;
  const streamUrl = (p: TestPlatform) => `${p.url.replace('http:', 'ws:')}/v2/hrs/status/stream`;
  const adminUrl = (p: TestPlatform) => `${p.url.replace('http:', 'ws:')}/admin/v1/live`;
  const ENV = { EXPORT_V2_RATE_LIMIT_MINUTE: '1000000' };

  t.test('messages sent right after auth wait for it and are handled in order', async (t) => {
    const p = await startTestPlatform(t, { fixture: fixture(), env: ENV });
    const ws = await WsClient.connect(streamUrl(p));
    t.teardown(() => ws.close());
    ws.send({ type: 'auth', token: TOKENS.export_v2, id: 'a' });
    ws.send({ type: 'subscribe', hrs_ids: ['BERLA'], id: 's1' });
    ws.send({ type: 'subscribe', hrs_ids: ['NOPE1'], id: 's2' });
    ws.send({ type: 'unsubscribe', hrs_ids: ['BERLA'], id: 'u1' });
    t.same(await ws.next(), { type: 'authenticated', user: 'alice' });
    t.same(await ws.next(), { type: 'subscribed', id: 's1', hrs_ids: ['BERLA'], subscriptions: ['BERLA'] });
    t.equal((await ws.next()).type, 'snapshot');
    t.match(await ws.next(), { type: 'error', code: 'unknown_station', id: 's2' });
    t.same(await ws.next(), { type: 'unsubscribed', id: 'u1', hrs_ids: ['BERLA'], subscriptions: [] });

    const refused = await WsClient.connect(streamUrl(p));
    refused.send({ type: 'auth', token: 'no-such-token-at-all' });
    refused.send({ type: 'subscribe', hrs_ids: ['BERLA'] });
    t.match(await refused.next(), { type: 'error', code: 'authentication_failed' });
    t.equal((await refused.closedWith()).code, 4401, 'a refused auth drops what waited for it');
    t.same(refused.messages.length, 1);
  });

  t.test('a message over 64 KiB is closed with 1009 (a close frame, not a cut connection)', async (t) => {
    const p = await startTestPlatform(t, { fixture: fixture(), env: ENV });
    for (const url of [streamUrl(p), adminUrl(p)]) {
      const ws = await WsClient.connect(url);
      ws.send({ type: 'auth', token: 'x'.repeat(64 * 1024) });
      t.same(await ws.closedWith(), { code: 1009, reason: 'message over 64 KiB' }, url);
    }
    const ws = await WsClient.connect(streamUrl(p), { Authorization: `Bearer ${TOKENS.export_v2}` });
    t.equal((await ws.next()).type, 'authenticated');
    const subscribe = '{"type":"subscribe","hrs_ids":["BERLA"]}';
    ws.send(subscribe + ' '.repeat(64 * 1024 - subscribe.length));
    t.equal((await ws.next()).type, 'subscribed', 'a message of exactly 64 KiB is taken');
    ws.send(' '.repeat(64 * 1024 + 1));
    t.same(await ws.closedWith(), { code: 1009, reason: 'message over 64 KiB' }, 'one byte more closes it');
    const admin = await WsClient.connect(adminUrl(p), { Authorization: `Bearer ${ADMIN_TOKEN}` });
    t.teardown(() => admin.close());
    t.equal((await admin.next()).type, 'authenticated', 'the server goes on');
  });

  t.test('the sixth stream is refused with Retry-After (upgrade) and retry_after (message)', async (t) => {
    const p = await startTestPlatform(t, { fixture: fixture(), env: ENV });
    const open: WsClient[] = [];
    t.teardown(() => open.forEach((ws) => ws.close()));
    for (let i = 1; i <= 5; i++) {
      const ws = await WsClient.connect(streamUrl(p), { Authorization: `Bearer ${bobToken(i)}` });
      open.push(ws);
      t.equal((await ws.next()).type, 'authenticated');
    }
    t.same(open.map((ws) => ws.closed), [undefined, undefined, undefined, undefined, undefined], 'the five streams are still open');
    const refused = await WsClient.connect(streamUrl(p), { Authorization: `Bearer ${bobToken(1)}` }).catch((err: unknown) => err);
    t.match(refused, { status: 429 });
    t.equal((refused as { headers: Record<string, string> }).headers['retry-after'], '60');
    t.match(JSON.parse((refused as { body: string }).body), { code: 'too_many_streams' });

    const byMessage = await WsClient.connect(streamUrl(p));
    byMessage.send({ type: 'auth', token: bobToken(2), id: 7 });
    t.match(await byMessage.next(), { type: 'error', code: 'too_many_streams', id: 7, retry_after: 60 });
    t.equal((await byMessage.closedWith()).code, 4429);
  });
});

t.test('bus', async (t) => {
  /**
   * The bus between instances on a real Redis: messages are validated on receipt, so a malformed one is
   * logged and dropped and never reaches a handler; a handler that throws does not stop the others.
   */
  const REDIS_URL = TEST_REDIS_URL;
  /** The platform id the buses here stand for: every message on a bus carries its platform's. */
  const PLATFORM = 'bus-test-platform';

  async function bus(t: Test) {
    const prefix = uniqueName('bus');
    const redis = await openRedis(REDIS_URL, 'bus-test');
    const logs = logCapture();
    const receiver = new Bus(redis, prefix, PLATFORM, createLogger('info', logs.stream));
    t.teardown(async () => {
      await receiver.close();
      await closeRedis(redis);
    });
    return { redis, receiver, logs, channel: (type: 'registry' | 'signals' | 'receipts') => receiver.channel(type) };
  }

  const SIGNAL = {
    hrs_id: 'BERLA',
    category: 'availability',
    originator_id: 'mon-1',
    measured_at: '2026-11-23T10:00:00.000Z',
    received_at: '2026-11-23T10:00:01.000Z',
    payload: { station: { maintenance: false } },
  };

  t.test('malformed messages are logged and dropped; valid ones reach every handler', async (t) => {
    const { redis, receiver, logs, channel } = await bus(t);
    const heard: BusMessageOf<'signals'>[] = [];
    await receiver.on('signals', (message) => heard.push(message));
    const malformed = [
      'not json at all',
      JSON.stringify({ type: 'signals', from: 'x', platform: PLATFORM }),
      JSON.stringify({ type: 'signals', from: 'x', platform: PLATFORM, signals: [{ ...SIGNAL, payload: 'not an object' }] }),
      JSON.stringify({ type: 'signals', from: 'x', platform: PLATFORM, signals: [{ ...SIGNAL, hrs_id: 42 }] }),
      JSON.stringify({ type: 'registry', platform: PLATFORM, hrs_ids: [], tokens: true }),
      JSON.stringify({ type: 'nonsense', platform: PLATFORM }),
      'null',
    ];
    for (const raw of malformed) await redis.publish(channel('signals'), raw);
    const valid = { type: 'signals', from: 'x', signals: [SIGNAL] } as const;
    await redis.publish(channel('signals'), JSON.stringify({ ...valid, platform: PLATFORM }));
    await until('the valid message', () => (heard.length > 0 ? true : undefined), 5000);
    t.same(heard, [valid], 'only the valid message reached the handler');
    const warnings = logs.lines.filter((l) => l.msg === 'malformed bus message ignored' || l.msg === 'unreadable bus message ignored');
    t.equal(warnings.length, malformed.length, 'each malformed message is logged once');
    t.ok(warnings.every((w) => w.level === 40 && w.type === 'signals'), 'as warnings naming the channel');
    t.match(warnings.find((w) => w.msg === 'malformed bus message ignored'), { issues: Array });
  });

  t.test('a throwing handler is logged and the next one still runs', async (t) => {
    const { redis, receiver, logs, channel } = await bus(t);
    const heard: string[][] = [];
    await receiver.on('registry', () => {
      throw new Error('handler bug');
    });
    await receiver.on('registry', (message) => heard.push(message.hrs_ids));
    await redis.publish(channel('registry'), JSON.stringify({ ...registryMessage({ hrsIds: ['BERLA'], tokens: false }), platform: PLATFORM }));
    await until('the second handler', () => (heard.length > 0 ? true : undefined), 5000);
    t.same(heard, [['BERLA']]);
    t.ok(logs.lines.some((l) => l.msg === 'bus handler failed' && (l.err as { message: string }).message === 'handler bug'));
  });

  t.test('the registry message is built in one place', async (t) => {
    t.same(registryMessage({ hrsIds: ['BERLA'], tokens: true }), { type: 'registry', hrs_ids: ['BERLA'], tokens: true, registry: true });
    t.same(registryMessage({ tokens: true, registry: false }), { type: 'registry', hrs_ids: [], tokens: true, registry: false });
  });

  t.test('entries a later version sends are skipped, not the whole message', async (t) => {
    const signals = fromAnnouncement([SIGNAL, { ...SIGNAL, category: 'temperature' }, { ...SIGNAL, measured_at: 'yesterday' }]);
    t.same(signals, [
      { hrsId: 'BERLA', category: 'availability', originatorId: 'mon-1', datetime: Date.parse(SIGNAL.measured_at), receivedAt: Date.parse(SIGNAL.received_at), payload: SIGNAL.payload },
    ]);
    const receipt = { originator_id: 'mon-2', hrs_id: 'BERLA', assignment: 'testing' as const, datetime: SIGNAL.measured_at, received_datetime: SIGNAL.received_at };
    t.same(receiptsFromAnnouncement([{ ...receipt, category: 'usage' }, { ...receipt, category: 'temperature' }]), [{ ...receipt, category: 'usage' }]);
  });

  t.test('fromOthers: the messages of other instances reach the handler, this instance\'s own are dropped unread', async (t) => {
    const { redis, receiver, logs, channel } = await bus(t);
    const heard: BusMessageOf<'signals'>[] = [];
    await receiver.fromOthers('signals', (message) => heard.push(message));
    const sender = new Bus(redis, channel('signals').replace(/:bus:signals$/, ''), PLATFORM);
    t.teardown(() => sender.close());
    // Its own, as publish sends it (type and from first), whatever the object's key order.
    await receiver.publish({ signals: [SIGNAL], from: receiver.instanceId, type: 'signals' } as BusMessageOf<'signals'>);
    // Its own id in a message whose first bytes differ (another sender's layout): read, then left out by `from`.
    await redis.publish(channel('signals'), JSON.stringify({ signals: [SIGNAL], type: 'signals', platform: PLATFORM, from: receiver.instanceId }));
    // Its own prefix on a malformed message: dropped unread, so not even logged.
    await redis.publish(channel('signals'), `{"type":"signals","from":${JSON.stringify(receiver.instanceId)},"platform":${JSON.stringify(PLATFORM)},"signals":"broken`);
    await sender.publish({ type: 'signals', from: sender.instanceId, signals: [SIGNAL] });
    await until('the other instance\'s message', () => (heard.length > 0 ? true : undefined), 5000);
    await new Promise((resolve) => setTimeout(resolve, 100));
    t.same(heard, [{ type: 'signals', from: sender.instanceId, signals: [SIGNAL] }], 'only the other instance\'s message reached the handler');
    t.equal(logs.lines.filter((l) => /bus message ignored/.test(String(l.msg))).length, 0, 'this instance\'s own message was not even parsed');

    // With a handler of every message beside it, this instance's own messages are read again.
    const all: BusMessageOf<'signals'>[] = [];
    await receiver.on('signals', (message) => all.push(message));
    await receiver.publish({ type: 'signals', from: receiver.instanceId, signals: [SIGNAL] });
    await until('its own message, for the handler of every message', () => (all.length > 0 ? true : undefined), 5000);
    t.equal(heard.length, 1, 'the others-only handler still left it out');
  });
});
