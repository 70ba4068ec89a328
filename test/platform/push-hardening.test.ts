import t from 'tap';
import { baseFixture, TOKENS } from '../helpers/fixtures.js';
import { ADMIN_TOKEN, startTestPlatform, type TestPlatform } from '../helpers/platform.js';
import { WsClient } from '../helpers/ws.js';

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
