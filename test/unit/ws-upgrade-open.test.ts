/**
 * A WebSocket whose upgrade waited (for Redis, say) stays open after its `open` handler ran.
 *
 * With the uWebSockets.js build in use, an upgrade made after an await goes through
 * `res.cork(() => res.upgrade(...))`. uWS's HttpResponse::cork, once its callback returns, checks
 * whether the socket was upgraded by comparing pointers; the upgrade's realloc of the socket
 * shrinks it in place, so the check misses it and cork goes on reading the HTTP response's `state`
 * from memory the realloc just freed. When the `open` handler (run inside that callback) allocated
 * memory that lands there with the 0x10 bit (HTTP_CONNECTION_CLOSE) set and 0x08
 * (HTTP_RESPONSE_PENDING) clear, cork shuts the new WebSocket down at once: the client sees 1006
 * within a millisecond of opening (upstream uWebSockets pull request 1929, fixed after this build).
 * Native allocations in `open` (ws.subscribe, a send that spills, a timer) made it happen now and
 * then; here `open` allocates native buffers of every small size filled with 0x10, which makes it
 * happen every time unless the route's `open` runs after the upgrade has returned
 * (src/http/sockets.ts, socketBehavior). Thirty servers in one process, three sockets each, as the
 * flaky tests had them; the upgrade decided at once (inside uWS's handler) is checked alongside.
 */
import t from 'tap';
import { HttpServer } from '../../src/http/server.js';
import type { Family } from '../../src/http/family.js';
import { PROBLEM_ERRORS } from '../../src/http/errors.js';
import { createLogger } from '../../src/config/log.js';
import { WsClient } from '../helpers/ws.js';

const PROBE: Family = { name: 'probe', prefix: '/probe/', errors: PROBLEM_ERRORS };
const ROOT: Family = { name: 'root', prefix: '/', errors: PROBLEM_ERRORS };
const SERVERS = 30;
const SOCKETS = 3;

/** Native (off-heap) buffers of 72 to 512 bytes, every byte 0x10, as a native allocation in `open` might leave them. */
function nativeAllocations(): Buffer[] {
  const buffers: Buffer[] = [];
  for (let size = 72; size <= 512; size += 8) buffers.push(Buffer.allocUnsafeSlow(size).fill(0x10));
  return buffers;
}

async function server(t: { teardown(fn: () => unknown): void }): Promise<{ port: number; opened: () => number }> {
  const server = new HttpServer({ log: createLogger('silent'), maxBodyBytes: 1024, fallback: ROOT });
  let opened = 0;
  const held = new Map<object, Buffer[]>();
  for (const [path, admit] of [
    ['/probe/later', async () => { await new Promise((resolve) => setTimeout(resolve, 1)); return {}; }],
    ['/probe/at-once', () => ({})],
  ] as const) {
    server.socket<object>({
      family: PROBE,
      path,
      public: true,
      messageAuth: false,
      admit,
      behavior: {
        idleTimeout: 60,
        open: (ws) => {
          opened++;
          held.set(ws, nativeAllocations());
          ws.send(JSON.stringify({ type: 'hello' }), false, false);
        },
        close: (ws) => void held.delete(ws),
      },
    });
  }
  const port = await server.listen('127.0.0.1', 0);
  t.teardown(() => server.closeConnections());
  return { port, opened: () => opened };
}

for (const path of ['/probe/later', '/probe/at-once']) {
  t.test(`${path}: ${SERVERS} servers in one process, ${SOCKETS} sockets each, all stay open`, async (t) => {
    const dropped: string[] = [];
    for (let round = 0; round < SERVERS; round++) {
      const { port, opened } = await server(t);
      const clients: WsClient[] = [];
      for (let i = 0; i < SOCKETS; i++) {
        const client = await WsClient.connect(`ws://127.0.0.1:${port}${path}`);
        clients.push(client);
        await client.next().catch(() => undefined);
      }
      await new Promise((resolve) => setTimeout(resolve, 30));
      clients.forEach((client, i) => {
        if (client.closed) dropped.push(`server ${round}, socket ${i}: ${client.closed.code}`);
      });
      t.equal(opened(), SOCKETS, `server ${round}: every socket's open ran`);
      for (const client of clients) client.close();
    }
    t.same(dropped, [], 'no socket closed right after opening');
  });
}
