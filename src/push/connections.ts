import type { Logger } from 'pino';
import type { WebSocket } from 'uWebSockets.js';
import { HttpError } from '../http/errors.js';
import type { HttpServer, SocketData, SocketRouteSpec } from '../http/server.js';
import { CLOSE, CLOSE_REASON, errorMessage, parseClientMessage, type ClientMessage } from './protocol.js';
import type { Slot, StreamSlots } from '../infra/stream-slots.js';

/**
 * The life of the push layer's sockets, whichever route opened them: the record kept per socket, the
 * time a socket without a token in its upgrade request has to send its `auth` message, that message's
 * handling, sending (a snapshot's unsent part is allowed besides the backlog limit), and the 1001
 * every socket gets at shutdown.
 */

/** A status stream's state once authenticated. */
export interface StreamState {
  kind: 'stream';
  user: string;
  /** `Bearer <token>`: checked again on revocations and every minute (see token-recheck.ts). */
  credential: string;
  slot: Slot | undefined;
  all: boolean;
  ids: Set<string>;
}

/** An admins' feed's state once authenticated. */
export interface AdminState {
  kind: 'admin';
}

export type State = StreamState | AdminState;

export type Socket = WebSocket<SocketData<State>>;

/** What is kept per open socket besides its state. */
export interface Connection {
  /** Bytes of the last snapshot still allowed to wait besides the backlog limit. */
  allowance: number;
  closed: boolean;
  authTimer: NodeJS.Timeout | undefined;
  authenticating: boolean;
  /** Messages that arrived while the `auth` message was being checked, handled in order after it. */
  waiting: (() => void)[];
}

/** A client message over this many bytes closes the socket with 1009 (the protocol's limit). */
export const MAX_MESSAGE_BYTES = 64 * 1024;

/**
 * What uWS itself reads of one message before giving up without a close frame (1006): larger than
 * the protocol's limit, so that a message over that limit is read and answered with 1009.
 */
export const MAX_READ_BYTES = 1024 * 1024;

/** Messages kept while an `auth` message is being checked; more are refused (`invalid_message`). */
const MAX_WAITING = 32;

/** What an authenticated socket is sent first (its route's greeting). */
export type Welcome = (ws: Socket, state: State) => void;

/** The route's uWS behaviour without `message`, which the route adds. */
export type Behavior = Omit<SocketRouteSpec<State>['behavior'], 'message'>;

export interface ConnectionsDeps {
  /** Authenticates an `auth` message as the route's upgrade request would have been. */
  server: Pick<HttpServer, 'authenticateSocket'>;
  /** Gives a stream's slot back when its socket closes. */
  slots: Pick<StreamSlots, 'release'>;
  log: Logger;
  authTimeoutMs: number;
  idleTimeoutSeconds: number;
  maxBacklogBytes: number;
}

export class Connections {
  private readonly sockets = new Map<Socket, Connection>();
  private closing = false;
  /** Sockets closed for falling too far behind, since start (metrics). */
  private closedSlow = 0;

  constructor(private readonly deps: ConnectionsDeps) {}

  /** Every open socket with its record. */
  get all(): ReadonlyMap<Socket, Connection> {
    return this.sockets;
  }

  /** Open sockets: streams and admin feeds. */
  counts(): { streams: number; admins: number; closedSlow: number } {
    let streams = 0;
    let admins = 0;
    for (const ws of this.sockets.keys()) {
      const state = ws.getUserData().state;
      if (state?.kind === 'admin') admins++;
      else streams++;
    }
    return { streams, admins, closedSlow: this.closedSlow };
  }

  /** The limits and life handlers of a route's sockets; `welcome` greets them once authenticated. */
  behavior(welcome: Welcome): Behavior {
    const { idleTimeoutSeconds, maxBacklogBytes } = this.deps;
    return {
      maxPayloadLength: MAX_READ_BYTES,
      idleTimeout: idleTimeoutSeconds,
      sendPingsAutomatically: true,
      maxBackpressure: Math.max(16 * 1024 * 1024, 16 * maxBacklogBytes),
      closeOnBackpressureLimit: 1,
      open: (ws: Socket) => this.opened(ws, welcome),
      drain: (ws: Socket) => this.drained(ws),
      close: (ws: Socket, code: number) => this.closed(ws, code),
    };
  }

  /** Closes every socket with 1001; sockets that open from now on are closed the same way. */
  close(): void {
    this.closing = true;
    for (const [ws, connection] of this.sockets) {
      clearTimeout(connection.authTimer);
      if (!connection.closed) ws.end(CLOSE.shuttingDown, CLOSE_REASON.shuttingDown);
    }
  }

  send(ws: Socket, message: string): void {
    const connection = this.sockets.get(ws);
    if (!connection || connection.closed) return;
    ws.send(message, false, false);
  }

  /** Sends a snapshot; the part of it that cannot leave at once does not count against the backlog limit. */
  sendSnapshot(ws: Socket, message: string): void {
    const connection = this.sockets.get(ws);
    if (!connection || connection.closed) return;
    ws.send(message, false, false);
    connection.allowance = Math.max(connection.allowance, ws.getBufferedAmount());
  }

  /**
   * A client message, parsed and handled in arrival order: at once, or, while the socket's `auth`
   * message is being checked, once that is done (dropped if it refused the socket). A message over
   * MAX_MESSAGE_BYTES closes the socket with 1009 instead.
   */
  receive(ws: Socket, data: ArrayBuffer, isBinary: boolean, allowed: readonly ClientMessage['type'][], handle: (message: ClientMessage | string) => void): void {
    const connection = this.sockets.get(ws);
    if (!connection || connection.closed) return;
    if (data.byteLength > MAX_MESSAGE_BYTES) {
      connection.closed = true;
      ws.end(CLOSE.tooBig, CLOSE_REASON.tooBig);
      return;
    }
    // Parsed now: uWS reuses `data` once this returns.
    const message = parseClientMessage(data, isBinary, allowed);
    if (!connection.authenticating) handle(message);
    else if (connection.waiting.length < MAX_WAITING) connection.waiting.push(() => handle(message));
    else this.send(ws, errorMessage('invalid_message', `At most ${MAX_WAITING} messages may wait for authentication; this one was dropped.`));
  }

  /** Closes a socket with one of the protocol's codes; nothing more is sent to it meanwhile. */
  end(ws: Socket, connection: Connection, close: 'tooSlow' | 'unauthorized'): void {
    connection.closed = true;
    if (close === 'tooSlow') this.closedSlow++;
    ws.end(CLOSE[close], CLOSE_REASON[close]);
  }

  /** The `auth` message: authenticates the socket by the route's rules, then welcomes it, or closes it. */
  authenticate(ws: Socket, spec: SocketRouteSpec<State>, message: Extract<ClientMessage, { type: 'auth' }>, welcome: Welcome): void {
    const connection = this.sockets.get(ws);
    const data = ws.getUserData();
    if (!connection) return;
    const echo = message.id === undefined ? {} : { id: message.id };
    if (data.state || connection.authenticating) {
      this.send(ws, errorMessage('already_authenticated', 'This connection is authenticated already.', echo));
      return;
    }
    connection.authenticating = true;
    this.deps.server.authenticateSocket(spec, data.req, message.token).then(
      (state) => {
        connection.authenticating = false;
        if (connection.closed) {
          if (state.kind === 'stream') this.deps.slots.release(state.slot);
          return;
        }
        clearTimeout(connection.authTimer);
        if (state.kind === 'stream') state.credential = `Bearer ${message.token}`;
        data.state = state;
        welcome(ws, state);
        for (const handle of connection.waiting.splice(0)) {
          if (!connection.closed) handle();
        }
      },
      (err: unknown) => {
        connection.authenticating = false;
        connection.waiting = [];
        if (connection.closed) return;
        clearTimeout(connection.authTimer);
        this.refused(ws, err, echo);
      },
    );
  }

  /** Answers a refused `auth` message and closes: 4429 when limited, 4401 when refused, 1011 on a fault. */
  private refused(ws: Socket, err: unknown, echo: { id?: string | number }): void {
    if (err instanceof HttpError && err.status === 429) {
      const code = err.code === 'too_many_streams' ? 'too_many_streams' : 'throttled';
      const retry = err.options.headers?.['Retry-After'];
      this.send(ws, errorMessage(code, err.detail, { ...echo, ...(retry ? { retry_after: Number(retry) } : {}) }));
      ws.end(CLOSE.tooMany, CLOSE_REASON.tooMany);
    } else if (err instanceof HttpError && err.status < 500) {
      this.send(ws, errorMessage('authentication_failed', err.detail, echo));
      ws.end(CLOSE.unauthorized, CLOSE_REASON.unauthorized);
    } else {
      this.deps.log.error({ err }, 'authenticating a websocket failed');
      this.send(ws, errorMessage('authentication_failed', 'Unexpected platform error; please report it.', echo));
      ws.end(1011, 'internal error');
    }
  }

  private opened(ws: Socket, welcome: Welcome): void {
    const connection: Connection = { allowance: 0, closed: false, authTimer: undefined, authenticating: false, waiting: [] };
    this.sockets.set(ws, connection);
    if (this.closing) {
      ws.end(CLOSE.shuttingDown, CLOSE_REASON.shuttingDown);
      return;
    }
    const data = ws.getUserData();
    if (data.state) {
      welcome(ws, data.state);
      return;
    }
    const { authTimeoutMs } = this.deps;
    connection.authTimer = setTimeout(() => {
      if (connection.closed || data.state) return;
      this.send(ws, errorMessage('not_authenticated', `No auth message within ${authTimeoutMs / 1000} seconds of connecting.`));
      ws.end(CLOSE.authTimeout, CLOSE_REASON.authTimeout);
    }, authTimeoutMs);
  }

  private closed(ws: Socket, code: number): void {
    const connection = this.sockets.get(ws);
    this.sockets.delete(ws);
    if (connection) {
      connection.closed = true;
      clearTimeout(connection.authTimer);
    }
    const state = ws.getUserData().state;
    if (state?.kind === 'stream') this.deps.slots.release(state.slot);
    this.deps.log.debug({ code, kind: state?.kind ?? 'unauthenticated' }, 'websocket closed');
  }

  private drained(ws: Socket): void {
    const connection = this.sockets.get(ws);
    if (connection && ws.getBufferedAmount() <= this.deps.maxBacklogBytes) connection.allowance = 0;
  }
}
