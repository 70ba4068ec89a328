import type { Logger } from 'pino';
import type { WebSocket } from 'uWebSockets.js';
import type { RouteDoc } from '../../http/contract.js';
import { HttpError } from '../../http/errors.js';
import type { Family } from '../../http/family.js';
import type { HttpServer, SocketData } from '../../http/server.js';
import { STREAM_RETRY_AFTER_SECONDS, type Slot, type StreamSlots } from '../../infra/stream-slots.js';
import type { FeedChange, MapFeed } from './feed.js';

/**
 * The public map's stream, `GET /map/v1/stream` (WebSocket): no credential, at most
 * MAP_STREAMS_PER_ADDRESS open per client address across every instance (Redis leases, as the status
 * stream's per-user slots: src/infra/stream-slots.ts; when Redis cannot answer, a stream is let through),
 * and one uWS topic every stream subscribes to, so a change is serialised once and sent to all.
 *
 * Server → client, JSON text frames: `hello` with the feed's ETag on open; `station` once per station
 * whose five-state values (or open_now) changed, a settling of the feed after the change
 * (../map/feed.ts: well within a second); `changed` with the new ETag when the station set or a
 * station's static fields changed; `heartbeat` every HEARTBEAT_MS. The client sends nothing: a text
 * frame is ignored, a binary frame closes the stream with 1003, one over MAX_CLIENT_BYTES with 1009.
 * A subscriber that lets more than MAX_BACKPRESSURE_BYTES wait is closed (uWS's backpressure limit):
 * it reconnects and reads the feed again.
 */

export const MAP_STREAM_PATH = '/map/v1/stream';
const TOPIC = 'map:stations';
export const HEARTBEAT_MS = 25_000;
/** A text frame the client sends is ignored up to this size; a larger one closes the stream (1009). */
export const MAX_CLIENT_BYTES = 4096;
const MAX_BACKPRESSURE_BYTES = 1024 * 1024;

export const MAP_CLOSE = {
  shuttingDown: { code: 1001, reason: 'server shutting down' },
  binary: { code: 1003, reason: 'binary frames are not accepted' },
  tooBig: { code: 1009, reason: `message over ${MAX_CLIENT_BYTES} bytes` },
} as const;

interface StreamState {
  slot: Slot | undefined;
}

type Socket = WebSocket<SocketData<StreamState>>;

export interface MapStreamDeps {
  server: HttpServer;
  family: Family;
  feed: MapFeed;
  slots: StreamSlots;
  /** MAP_STREAMS_PER_ADDRESS. */
  perAddress: number;
  /**
   * PUSH_IDLE_TIMEOUT: uWS pings a socket that has sent nothing for this long less a margin (4, 8 or
   * 16 s), and closes it without a pong by the end. The pings, not the heartbeats, are what keep a
   * stream open through a proxy's idle timeout (uWS's idle clock runs on what the client sends).
   */
  idleTimeoutSeconds: number;
  log: Logger;
  doc?: RouteDoc;
}

/** Registers the socket route; returns what closes it (every stream told 1001) at shutdown. */
export function mapStream(deps: MapStreamDeps): { close(): void; readonly open: number } {
  const { server, feed, slots, log } = deps;
  const sockets = new Set<Socket>();
  let closing = false;
  const broadcast = (message: unknown) => void server.app.publish(TOPIC, JSON.stringify(message), false, false);
  const off = feed.onChanges((changes: readonly FeedChange[]) => {
    if (sockets.size === 0) return;
    for (const change of changes) broadcast(change);
  });
  const heartbeat = setInterval(() => {
    if (sockets.size > 0) broadcast({ type: 'heartbeat', at: new Date().toISOString() });
  }, HEARTBEAT_MS).unref();
  slots.start();
  server.socket<StreamState>({
    family: deps.family,
    path: MAP_STREAM_PATH,
    messageAuth: false,
    public: true,
    ...(deps.doc ? { doc: deps.doc } : {}),
    admit: async (req) => {
      if (closing) throw new HttpError(503, 'unavailable', 'The server is shutting down.', { headers: { 'Retry-After': '1' }, asConfigured: true });
      const slot = await slots.take(req.clientAddress);
      if (slot === false) {
        throw new HttpError(429, 'throttled', `At most ${deps.perAddress} open streams per client address: close one, or retry later.`, {
          headers: { 'Retry-After': String(STREAM_RETRY_AFTER_SECONDS) },
        });
      }
      return { slot };
    },
    release: (state) => slots.release(state.slot),
    behavior: {
      maxPayloadLength: 64 * 1024,
      idleTimeout: deps.idleTimeoutSeconds,
      sendPingsAutomatically: true,
      maxBackpressure: MAX_BACKPRESSURE_BYTES,
      closeOnBackpressureLimit: 1,
      open: (ws: Socket) => {
        sockets.add(ws);
        if (closing) {
          ws.end(MAP_CLOSE.shuttingDown.code, MAP_CLOSE.shuttingDown.reason);
          return;
        }
        // The ETag first: reading it settles the feed, and what that settling tells the others is in
        // this ETag already; subscribed after it, the stream's first message is always the hello.
        const hello = () => {
          const etag = feed.etag ?? null;
          ws.subscribe(TOPIC);
          ws.send(JSON.stringify({ type: 'hello', etag }), false, false);
        };
        // Right after the start, the stations' static fields may still be on their way: the hello waits
        // for them (its ETag is null while a large registry's first settling is under way; the `changed`
        // that ends it names the ETag).
        if (feed.staticsLoaded) hello();
        else void feed.staticsRead().then(() => {
          if (sockets.has(ws) && !closing) hello();
        });
      },
      message: (ws: Socket, message: ArrayBuffer, isBinary: boolean) => {
        if (isBinary) ws.end(MAP_CLOSE.binary.code, MAP_CLOSE.binary.reason);
        else if (message.byteLength > MAX_CLIENT_BYTES) ws.end(MAP_CLOSE.tooBig.code, MAP_CLOSE.tooBig.reason);
      },
      close: (ws: Socket) => {
        sockets.delete(ws);
        slots.release(ws.getUserData().state?.slot);
      },
    },
  });
  return {
    get open() {
      return sockets.size;
    },
    close: () => {
      closing = true;
      off();
      clearInterval(heartbeat);
      for (const ws of sockets) ws.end(MAP_CLOSE.shuttingDown.code, MAP_CLOSE.shuttingDown.reason);
      void slots.close().catch((err: unknown) => log.warn({ err }, 'giving back the map streams\' slots failed'));
    },
  };
}
