/**
 * What the webhook outage tests share: registry files that change BERLA's events (each load one
 * transaction of the registry writer), the change log's rows since a point, and the check that a
 * resent message keeps its id and body.
 */
import type { Test } from 'tap';
import { baseFixture } from './fixtures.js';
import { startTestPlatform, type TestPlatform } from './platform.js';
import { receiver, subscribe, webhookKey, type Received } from './webhooks.js';

type Fixture = ReturnType<typeof baseFixture>;
interface Event {
  id: string;
  kind: string;
  starts_at: string;
  ends_at: string | null;
  description: string;
}

/** `n` events for BERLA (ids ev-<from>…), as a registry file lists them. */
export function events(from: number, n: number, note = ''): Event[] {
  return Array.from({ length: n }, (_, i) => ({
    id: `ev-${from + i}`,
    kind: 'maintenance',
    starts_at: '2027-01-01T08:00:00Z',
    ends_at: '2027-01-01T12:00:00Z',
    description: `Service ${from + i}${note}`,
  }));
}

/** The base registry with BERLA's events replaced (each load is one transaction of the registry writer). */
export function withEvents(list: Event[], name = 'Berlin Airport'): Fixture {
  const f = baseFixture();
  (f.stations[0] as Record<string, unknown>).events = list;
  (f.stations[0] as Record<string, unknown>).name = name;
  return f;
}

export async function loggedSeqs(p: TestPlatform, after: string): Promise<{ seq: string; hrs_id: string; type: string }[]> {
  const rows = await p.sql<{ seq: string; hrs_id: string; topic: string; change: string }[]>`
    SELECT seq::text, hrs_id, topic, change FROM change_log WHERE seq > ${after}::bigint AND topic IN ('station', 'event') ORDER BY change_log.seq`;
  return rows.map((r) => ({ seq: r.seq, hrs_id: r.hrs_id, type: `${r.topic}.${r.change}` }));
}

export const head = async (p: TestPlatform) => (await p.sql<{ h: string }[]>`SELECT COALESCE(max(seq), 0)::text AS h FROM change_log`)[0]!.h;

/**
 * A platform delivering webhooks (loopback allowed), a receiver, and one subscription to it of `kinds`:
 * with the log's head before any change, and WEBHOOK_SECRET_KEY.
 */
export async function subscribedPlatform(t: Test, kinds = ['station_records', 'events']) {
  const p = await startTestPlatform(t, { fixture: baseFixture(), env: { WEBHOOK_SECRET_KEY: webhookKey(), WEBHOOK_ALLOW_LOOPBACK: 'true' } });
  const key = p.parts.config.webhookSecretKey!;
  const start = await head(p);
  const r = await receiver(t, []);
  const sub = await subscribe(p.sql, key, { url: r.url, kinds });
  r.state.secrets.push(sub.secret);
  return { p, key, start, r, sub };
}

/** Every request's webhook-id has one body, and no change travelled under two ids. */
export function checkResends(t: Test, received: Received[]) {
  const bodies = new Map<string, Set<string>>();
  const idOfSeq = new Map<string, string>();
  let clash = 0;
  for (const r of received) {
    const id = String(r.headers['webhook-id']);
    bodies.set(id, (bodies.get(id) ?? new Set()).add(r.body));
    for (const c of r.verified?.data.changes ?? []) {
      const seen = idOfSeq.get(String(c.seq));
      if (seen !== undefined && seen !== id) clash++;
      idOfSeq.set(String(c.seq), id);
    }
  }
  t.ok([...bodies.values()].every((b) => b.size === 1), `a resent message keeps its body (${bodies.size} ids, ${received.length} requests)`);
  t.equal(clash, 0, 'no change was sent under two webhook-ids');
  t.ok(received.every((r) => r.verified !== undefined), 'every request verifies');
  t.ok(received.every((r) => (r.verified?.data.changes?.length ?? 0) <= 100), 'at most 100 changes a message');
}

