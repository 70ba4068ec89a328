/**
 * A webhook receiver down for two minutes (connections refused) while more than a hundred changes are
 * made and the workers restart, then answering 503, then back: every change delivered once, in order;
 * a resent message keeps its webhook-id and body. In the system tier: it takes over two minutes, mostly
 * waiting (test/platform/webhooks-delivery.test.ts covers a short outage in the default run).
 */
import t from 'tap';
import { DELIVERIES_HELD } from '../../db/queries/webhook-delivery.js';
import { until } from '../helpers/wait.js';
import { deliveredChanges, workersOf } from '../helpers/webhooks.js';
import { checkResends, events, loggedSeqs, subscribedPlatform, withEvents } from '../helpers/webhook-outage.js';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
/** How long the receiver stays down (refusing connections) before it answers 503, then 200. */
const OUTAGE_MS = 120_000;

t.test('receiver down for two minutes, then 503, then back, workers restarted meanwhile: every change once, in order', async (t) => {
  const { p, start, r, sub } = await subscribedPlatform(t);
  let workers = workersOf(t, p);
  await r.down();
  const downAt = Date.now();

  await p.load(withEvents(events(10, 120)));
  await until('failed attempts while the receiver is down', async () => {
    const [row] = await p.sql<{ n: number }[]>`SELECT count(*)::int AS n FROM webhook_deliveries WHERE subscription_id = ${sub.id} AND error IS NOT NULL`;
    return row!.n >= 3 ? true : undefined;
  });
  const [failing] = await p.sql<{ failing_since: Date | null; pending_message_id: string | null }[]>`
    SELECT failing_since, pending_message_id FROM webhook_subscriptions WHERE id = ${sub.id}`;
  t.ok(failing!.failing_since, 'failing since the first failure');
  t.ok(failing!.pending_message_id, 'the message pending');

  // The workers stop mid-outage and start again; changes go on.
  await workers.close();
  await p.load(withEvents(events(10, 120, ' (moved)'), 'Berlin Airport T1'));
  workers = workersOf(t, p);
  // Down for two minutes in all, retried all along (the test's backoff is short).
  await sleep(Math.max(1500, OUTAGE_MS - (Date.now() - downAt)));
  const attempts = await p.sql<{ n: number }[]>`SELECT count(*)::int AS n FROM webhook_deliveries WHERE subscription_id = ${sub.id} AND error IS NOT NULL`;
  t.ok(attempts[0]!.n >= 10, `retried while down for ${Math.round((Date.now() - downAt) / 1000)} s (${attempts[0]!.n} failed attempts kept)`);
  await r.up();
  r.state.answer = () => 503;
  await until('503 answers', () => (r.received.filter((x) => x.status === 503).length >= 3 ? true : undefined));
  await p.load(withEvents(events(10, 60, ' (moved)'), 'Berlin Airport T2'));
  r.state.answer = () => 200;

  const expected = await loggedSeqs(p, start);
  t.ok(expected.length > 250, `many changes (${expected.length})`);
  await until('every change delivered', () => (deliveredChanges(r).length >= expected.length ? true : undefined), 60_000);
  await sleep(1500);
  const got = deliveredChanges(r).map((c) => ({ seq: c.seq, hrs_id: c.hrs_id, type: c.type }));
  t.same(got, expected, 'every change once, in seq order');
  checkResends(t, r.received);
  const resent = r.received.filter((x) => x.status === 503).map((x) => x.headers['webhook-id']);
  t.ok(resent.length > 0 && resent.every((id) => r.delivered().some((d) => d.headers['webhook-id'] === id)), 'each message refused with 503 was delivered later under its id');
  const [row] = await p.sql<{ failing_since: Date | null; state: string; cursor_seq: string; n: number }[]>`
    SELECT failing_since, state, cursor_seq::text, (SELECT count(*)::int FROM webhook_deliveries WHERE subscription_id = ${sub.id}) AS n
    FROM webhook_subscriptions WHERE id = ${sub.id}`;
  t.same({ failing: row!.failing_since, state: row!.state, cursor: row!.cursor_seq }, { failing: null, state: 'active', cursor: expected[expected.length - 1]!.seq }, 'failures forgotten, cursor at the end');
  // The newest 100 are listed; delivered attempts trim the table every tenth record (up to 109 held).
  t.ok(row!.n <= DELIVERIES_HELD, `at most ${DELIVERIES_HELD} attempts held (${row!.n})`);
});

