/**
 * Webhooks do not wait on Redis: their queue is PostgreSQL. With Redis down, a ping and a re-enable
 * answer at once (202, 200), and the webhook worker delivers both the ping and the message the
 * subscription had pending when it was disabled.
 */
import t from 'tap';
import { startTestPlatform } from '../helpers/platform.js';
import { ACCOUNTS, portalFixture, signedIn } from '../helpers/portal.js';
import { privateRedis } from '../helpers/private-services.js';
import { until } from '../helpers/wait.js';
import { receiver, webhookKey, workersOf } from '../helpers/webhooks.js';

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
  workersOf(t, p);

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
