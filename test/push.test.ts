import t from 'tap';
import { baseFixture, TOKENS } from './helpers/fixtures.js';
import { ADMIN_TOKEN, get, startTestPlatform, type TestPlatform } from './helpers/platform.js';
import { until } from './helpers/wait.js';
import { WsClient } from './helpers/ws.js';

/** BERLA live for all four types with mon-1; HAMBG live for usage; a second user with five tokens. */
function fixture() {
  const f = baseFixture();
  f.assignments = [
    { originator: 'mon-1', hrs_id: 'BERLA', signal_type: 'availability', state: 'live' },
    { originator: 'mon-1', hrs_id: 'BERLA', signal_type: 'usage', state: 'live' },
    { originator: 'mon-1', hrs_id: 'BERLA', signal_type: 'hydrogen-storage', state: 'live' },
    { originator: 'mon-1', hrs_id: 'BERLA', signal_type: 'pricing', state: 'testing' },
    { originator: 'mon-1', hrs_id: 'HAMBG', signal_type: 'usage', state: 'live' },
  ];
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

async function post(p: TestPlatform, category: string, body: unknown): Promise<number> {
  const res = await fetch(`${p.url}/import/v2/signal/${category}/`, {
    method: 'POST',
    body: JSON.stringify(body),
    headers: { Authorization: `Bearer ${TOKENS.import_v2}`, 'Content-Type': 'application/json' },
  });
  if (res.status !== 204) throw new Error(`POST ${category} answered ${res.status}: ${await res.text()}`);
  return Date.now();
}

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

t.test('status stream: auth by first message; auth timeout; bad tokens close with 4401', async (t) => {
  const p = await startTestPlatform(t, { fixture: fixture(), env: { ...POLLING, PUSH_AUTH_TIMEOUT: '1' } });

  const browser = await WsClient.connect(streamUrl(p));
  t.teardown(() => browser.close());
  browser.send({ type: 'subscribe', hrs_ids: ['BERLA'] });
  t.match(await browser.next(), { type: 'error', code: 'not_authenticated' }, 'subscribing first is answered, not fatal');
  browser.send({ type: 'auth', token: TOKENS.export_v2, id: 7 });
  t.same(await browser.next(), { type: 'authenticated', user: 'alice' });
  browser.send({ type: 'auth', token: TOKENS.export_v2 });
  t.match(await browser.next(), { type: 'error', code: 'already_authenticated' });
  browser.send({ type: 'subscribe', hrs_ids: '*' });
  t.match(await browser.next(), { type: 'subscribed', hrs_ids: '*', subscriptions: '*' });
  t.match(await browser.next(), { type: 'snapshot' });
  await new Promise((resolve) => setTimeout(resolve, 1500));
  t.equal(browser.closed, undefined, 'an authenticated connection outlives the auth timeout');

  const silent = await WsClient.connect(streamUrl(p));
  const started = Date.now();
  t.match(await silent.next(), { type: 'error', code: 'not_authenticated' });
  t.same(await silent.closedWith(), { code: 4408, reason: 'no auth message in time' });
  t.ok(Date.now() - started >= 900, 'closed after the timeout, not before');

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
  t.equal(inUrl.status, 401, 'a token in the URL is not a credential');
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
