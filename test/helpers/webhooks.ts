import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { randomBytes } from 'node:crypto';
import type { Test } from 'tap';
import { Webhook } from 'standardwebhooks';
import type { Sql } from '../../db/connect.js';
import { createLogger } from '../../src/config/log.js';
import { newWebhookSecret, sealSecret } from '../../src/domain/webhooks/secrets.js';
import { startWorkers, type Workers } from '../../workers/index.js';
import type { WebhookTiming } from '../../workers/webhooks/processor.js';
import type { TestPlatform } from './platform.js';
import type { StationLookup } from '../../src/domain/stations.js';

/** A WEBHOOK_SECRET_KEY for a test (32 random bytes, hex). */
export function webhookKey(): string {
  return randomBytes(32).toString('hex');
}

/** A request the receiver got, and what it answered. */
export interface Received {
  headers: IncomingHttpHeaders;
  body: string;
  status: number;
  /** The body parsed, when it verified with the receiver's secrets (else undefined). */
  verified: { type: string; timestamp: string; data: { subscription_id: string; changes?: Record<string, unknown>[] } } | undefined;
  /** Which of `secrets` verified it alone. */
  verifiedBy: string[];
}

/**
 * A webhook receiver: a node:http server on a free loopback port verifying every request with
 * standardwebhooks against `secrets`. `answer` decides the status (200 unless changed); `down()`
 * closes the port (connections refused) and `up()` opens it again on the same port.
 */
export async function receiver(t: Test, secrets: string[]) {
  const received: Received[] = [];
  let connections = 0;
  const state = { answer: (_r: Received) => 200 as number, secrets };
  const sockets = new Set<Socket>();
  const handler = (req: import('node:http').IncomingMessage, res: import('node:http').ServerResponse) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      const headers = req.headers;
      const plain = { 'webhook-id': String(headers['webhook-id']), 'webhook-timestamp': String(headers['webhook-timestamp']), 'webhook-signature': String(headers['webhook-signature']) };
      let verified: Received['verified'];
      const verifiedBy: string[] = [];
      for (const secret of state.secrets) {
        try {
          verified = new Webhook(secret).verify(body, plain) as Received['verified'];
          verifiedBy.push(secret);
        } catch {
          // Not signed with this one.
        }
      }
      const r: Received = { headers, body, status: 0, verified, verifiedBy };
      r.status = state.answer(r);
      received.push(r);
      res.writeHead(r.status, { 'content-type': 'text/plain' }).end('ok');
    });
  };
  let server: Server = createServer(handler);
  const track = (s: Server) =>
    s.on('connection', (socket) => {
      connections++;
      sockets.add(socket);
      socket.on('close', () => sockets.delete(socket));
    });
  track(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  const close = () =>
    new Promise<void>((resolve) => {
      for (const s of sockets) s.destroy();
      if (!server.listening) return resolve();
      server.close(() => resolve());
    });
  t.teardown(close);
  return {
    port,
    url: `http://127.0.0.1:${port}/hook`,
    received,
    connections: () => connections,
    state,
    /** Requests answered 2xx that verified, in the order they came. */
    delivered: () => received.filter((r) => r.status >= 200 && r.status < 300 && r.verified),
    down: close,
    async up() {
      server = createServer(handler);
      track(server);
      await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
    },
  };
}

/** A subscription row as the portal makes one (its secret sealed), starting at the log's head. */
export async function subscribe(
  sql: Sql,
  key: Buffer,
  input: { url: string; kinds: string[]; hrsIds?: string[] | null; bbox?: number[] | null; userId?: string; previous?: { secret: string; until: Date } },
): Promise<{ id: string; secret: string }> {
  const id = `wh_${randomBytes(10).toString('hex')}`;
  const secret = newWebhookSecret();
  const previous = input.previous ? sealSecret(key, input.previous.secret, id) : null;
  await sql`
    INSERT INTO webhook_subscriptions (id, user_id, url, kinds, hrs_ids, bbox, cursor_seq, secret_sealed, previous_secret_sealed, previous_secret_until)
    VALUES (${id}, ${input.userId ?? 'alice'}, ${input.url}, ${input.kinds}, ${input.hrsIds ?? null}, ${input.bbox ?? null},
            (SELECT COALESCE(max(seq), 0) FROM change_log), ${sealSecret(key, secret, id)}, ${previous}, ${input.previous?.until ?? null})`;
  return { id, secret };
}

/** Short retries for tests: 100 ms doubling up to 1 s, the worker polling every 500 ms. */
export const TEST_TIMING: Partial<WebhookTiming> = { backoff: { baseMs: 100, capMs: 1000 }, pollEveryMs: 500 };

/** The platform's workers (the webhook worker among them), closed when the test ends unless closed before. */
export function workersOf(t: Test, p: TestPlatform, timing: Partial<WebhookTiming> = TEST_TIMING, stations: () => StationLookup = () => p.parts.registry): Workers {
  const workers = startWorkers(p.parts.config, p.parts.redis, p.sql, createLogger(process.env.WEBHOOK_TEST_LOG ?? 'silent'), { stations, webhookTiming: timing });
  let closed = false;
  t.teardown(() => (closed ? undefined : workers.close()));
  return {
    names: workers.names,
    close: async () => {
      closed = true;
      await workers.close();
    },
  };
}

/** The changes of the messages delivered (2xx, verified), in the order they came. */
export function deliveredChanges(r: { delivered(): Received[] }): Record<string, unknown>[] {
  return r.delivered().flatMap((m) => m.verified?.data.changes ?? []);
}
