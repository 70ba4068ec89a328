/**
 * A webhook receiver (node:http) for the `webhooks` scenario, in a process of its own: answers every
 * POST with 204 and records, per signal (its station and `datetime`, which its `status.changed` and
 * `fuelling_option.changed` changes carry) and per subscription, when the first change of it arrived
 * (`performance.timeOrigin + performance.now()`, read before the body is parsed). Each subscription's
 * first message is verified with `standardwebhooks` against its secret; a message failing it counts
 * as bad and records nothing.
 *
 * Messages from the parent: `subscriptions` {list: [{id, secret}]}; `reset` (forget everything heard);
 * `settle` {quietMs, maxMs} (answered once nothing arrived for quietMs, or after maxMs); `analyse`
 * {signals: [[hrs_id, datetime ms, 204 at]]} → the latency of every (signal, subscription) delivery.
 */
import http from 'node:http';
import { Webhook } from 'standardwebhooks';
import { onStop, ready, send } from './ipc.js';

const clock = () => performance.timeOrigin + performance.now();

interface Subscription {
  index: number;
  secret: string;
  verified: boolean;
}

interface Change {
  type: string;
  hrs_id: string;
  status?: { datetime?: string } | string | null;
  datetime?: string | null;
}

const subscriptions = new Map<string, Subscription>();
/** `hrs_id|datetime ms` → per subscription (by index) the first arrival; NaN: none yet. */
let arrivals = new Map<string, Float64Array>();
let counts = { messages: 0, changes: 0, bad: 0, unknown: 0, verified: 0, lastAt: 0 };

function signalKey(change: Change): string | undefined {
  const datetime = change.type === 'status.changed' && change.status && typeof change.status === 'object' ? change.status.datetime : change.type === 'fuelling_option.changed' ? change.datetime : undefined;
  return typeof datetime === 'string' ? `${change.hrs_id}|${Date.parse(datetime)}` : undefined;
}

function received(at: number, body: Buffer, headers: http.IncomingHttpHeaders): void {
  counts.messages++;
  counts.lastAt = at;
  const message = JSON.parse(body.toString('utf8')) as { type: string; data: { subscription_id: string; changes?: Change[] } };
  const subscription = subscriptions.get(message.data.subscription_id);
  if (!subscription) {
    counts.unknown++;
    return;
  }
  if (!subscription.verified) {
    try {
      new Webhook(subscription.secret).verify(body, headers as Record<string, string>);
      subscription.verified = true;
      counts.verified++;
    } catch {
      counts.bad++;
      return;
    }
  }
  for (const change of message.data.changes ?? []) {
    counts.changes++;
    const key = signalKey(change);
    if (key === undefined) continue;
    let firsts = arrivals.get(key);
    if (!firsts) arrivals.set(key, (firsts = new Float64Array(subscriptions.size).fill(Number.NaN)));
    if (Number.isNaN(firsts[subscription.index]!)) firsts[subscription.index] = at;
  }
}

const server = http.createServer((req, res) => {
  const at = clock();
  const chunks: Buffer[] = [];
  req.on('data', (chunk: Buffer) => chunks.push(chunk));
  req.on('end', () => {
    try {
      received(at, Buffer.concat(chunks), req.headers);
    } catch {
      counts.bad++;
    }
    res.writeHead(204).end();
  });
});
server.keepAliveTimeout = 60_000;
await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
onStop(() => new Promise<void>((resolve) => server.close(() => resolve())));

function percentile(sorted: Float64Array, p: number): number {
  return sorted.length === 0 ? Number.NaN : sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;
}

process.on('message', (message: { type: string; [key: string]: unknown }) => {
  if (message?.type === 'subscriptions') {
    for (const [index, s] of (message.list as { id: string; secret: string }[]).entries()) subscriptions.set(s.id, { index, secret: s.secret, verified: false });
    send({ type: 'configured', count: subscriptions.size });
  } else if (message?.type === 'reset') {
    arrivals = new Map();
    counts = { ...counts, messages: 0, changes: 0, bad: 0, unknown: 0, lastAt: 0 };
    send({ type: 'reset' });
  } else if (message?.type === 'settle') {
    const started = clock();
    const { quietMs, maxMs } = message as unknown as { quietMs: number; maxMs: number };
    const check = () => {
      const now = clock();
      if (now - Math.max(counts.lastAt, started) >= quietMs || now - started >= maxMs) send({ type: 'settled', ...counts, quiet: now - started < maxMs });
      else setTimeout(check, 100);
    };
    check();
  } else if (message?.type === 'analyse') {
    const signals = message.signals as [string, number, number][];
    const latencies: number[] = [];
    let lost = 0;
    for (const [hrsId, datetime, ackAt] of signals) {
      const firsts = arrivals.get(`${hrsId}|${datetime}`);
      for (let i = 0; i < subscriptions.size; i++) {
        const at = firsts?.[i] ?? Number.NaN;
        if (Number.isNaN(at)) lost++;
        else latencies.push(at - ackAt);
      }
    }
    const sorted = Float64Array.from(latencies).sort();
    send({ type: 'analysis', delivered: sorted.length, lost, p50: percentile(sorted, 50), p99: percentile(sorted, 99), max: sorted.at(-1) ?? Number.NaN, counts });
  }
});

ready({ port: (server.address() as { port: number }).port });
