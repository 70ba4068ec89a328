import type { Logger } from 'pino';
import type { WebSocket } from 'uWebSockets.js';
import { HttpError } from '../http/errors.js';
import type { Request } from '../http/request.js';
import type { HttpServer, SocketData, SocketRouteSpec } from '../http/server.js';
import type { Config } from '../config.js';
import type { Family } from '../http/family.js';
import type { Bus } from '../infra/bus.js';
import type { Redis } from '../infra/redis.js';
import type { Receipts } from '../infra/receipts.js';
import type { Registry } from '../registry/registry.js';
import type { LiveStatus } from '../../machines/live-status.js';

/** What the push layer is built from. */
export interface PushServices {
  config: Config;
  log: Logger;
  redis: Redis;
  bus: Bus;
  registry: Registry;
  status: LiveStatus;
  receipts: Receipts;
  families: { exportV2: Family; admin: Family };
  /** Resolves while a `Bearer …` credential still authenticates on export v2; throws its 401 otherwise. */
  recheck: (credential: string) => Promise<void>;
}
import type { StatusChange } from '../../machines/live-status.js';
import type { Receipt } from '../domain/signals.js';
import { changeMessage, receiptMessage, registryMessage, snapshotMessage } from './admin-view.js';
import { CLOSE, CLOSE_REASON, errorMessage, parseClientMessage, type ClientMessage } from './protocol.js';
import { StreamSlots, type Slot } from './stream-slots.js';

/**
 * Push: the data users' status stream and the admins' live feed, both WebSockets fanned out through
 * uWS topics (`app.publish`) from this instance's change stream (LiveStatus.onChange, which every
 * instance feeds from the bus, so a change accepted anywhere reaches every instance's subscribers)
 * and the receipt stream.
 *
 * Topics: `status/{hrs_id}` and `status/*` carry `status` and `removed` messages; `admin` carries
 * the admins' `change`, `receipt`, `station` and `removed` messages. Changes of one event-loop turn are
 * coalesced: a station changed several times in one turn gets one `status` message with its status
 * after the turn, and none when its status object did not change (a freshness step that changes no
 * published section).
 *
 * Backpressure: a socket whose unsent bytes exceed PUSH_MAX_BACKLOG (beyond the snapshot it was last
 * sent) is closed with 4000; uWS's own limit sits far above, as a last resort that never silently
 * drops a message (it closes instead).
 */

export const STREAM_PATH = '/v2/hrs/status/stream';
export const ADMIN_FEED_PATH = '/admin/v1/live';

const ALL_TOPIC = 'status/*';
const ADMIN_TOPIC = 'admin';
/** How often, at most, open sockets are checked for backlog while messages are being published. */
const SCAN_EVERY_MS = 100;
/**
 * Sockets checked per scan: with many connections a pass over all of them is spread over several
 * scans (2,000 per 100 ms: 100,000 sockets in 5 s), so the check costs a bounded sliver of a core;
 * uWS's own limit, far above PUSH_MAX_BACKLOG, still bounds what one socket can hold meanwhile.
 */
const SCAN_BATCH = 2000;
/** How often open streams' tokens are checked again (expiry; revocations are checked at once). */
const RECHECK_EVERY_MS = 60_000;

interface StreamState {
  kind: 'stream';
  user: string;
  /** `Bearer <token>`: checked again on revocations and every RECHECK_EVERY_MS. */
  credential: string;
  slot: Slot | undefined;
  all: boolean;
  ids: Set<string>;
}

interface AdminState {
  kind: 'admin';
}

type State = StreamState | AdminState;

interface Connection {
  /** Bytes of the last snapshot still allowed to wait besides the backlog limit. */
  allowance: number;
  closed: boolean;
  authTimer: NodeJS.Timeout | undefined;
  authenticating: boolean;
}

type Socket = WebSocket<SocketData<State>>;


export class Push {
  private readonly sockets = new Map<Socket, Connection>();
  private readonly dirty = new Set<string>();
  private adminQueue: string[] = [];
  private flushing = false;
  private scanTimer: NodeJS.Timeout | undefined;
  /** Sockets the current backlog pass has still to check. */
  private scanQueue: Socket[] = [];
  private readonly recheckTimer: NodeJS.Timeout;
  /** The status object last sent per station, so an unchanged status is not sent again. */
  private readonly lastSent = new Map<string, string>();
  private readonly slots: StreamSlots;
  private readonly unsubscribe: (() => void)[] = [];
  private readonly log: Logger;
  private closed = false;

  constructor(
    private readonly server: HttpServer,
    private readonly services: PushServices,
  ) {
    const { config } = services;
    this.log = services.log.child({ component: 'push' });
    this.slots = new StreamSlots(services.redis, config.redisPrefix, config.pushStreamsPerUser, this.log);
    this.unsubscribe.push(services.status.onChange((change) => this.changed(change)));
    this.unsubscribe.push(services.receipts.on((receipts) => this.received(receipts)));
    services.registry.onReload((changed) => this.registryChanged(changed));
    void services.bus
      .on('registry', (message) => {
        if (message.tokens) void this.recheckTokens();
      })
      .catch((err: unknown) => this.log.error({ err }, 'listening for token changes failed'));
    this.recheckTimer = setInterval(() => void this.recheckTokens(), RECHECK_EVERY_MS).unref();

    const behavior = {
      maxPayloadLength: 64 * 1024,
      idleTimeout: config.pushIdleTimeoutSeconds,
      sendPingsAutomatically: true,
      maxBackpressure: Math.max(16 * 1024 * 1024, 16 * config.pushMaxBacklogBytes),
      closeOnBackpressureLimit: 1,
      open: (ws: Socket) => this.opened(ws),
      drain: (ws: Socket) => this.drained(ws),
      close: (ws: Socket, code: number) => this.closedSocket(ws, code),
    };
    server.socket<State>(this.streamSpec(behavior));
    server.socket<State>(this.adminSpec(behavior));
  }

  /** Closes every socket with 1001 and stops listening to changes. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    for (const stop of this.unsubscribe) stop();
    clearInterval(this.recheckTimer);
    clearTimeout(this.scanTimer);
    for (const [ws, connection] of this.sockets) {
      clearTimeout(connection.authTimer);
      if (!connection.closed) ws.end(CLOSE.shuttingDown, CLOSE_REASON.shuttingDown);
    }
    await this.slots.close();
  }

  /** Open sockets: streams and admin feeds. */
  get connections(): { streams: number; admins: number } {
    let streams = 0;
    let admins = 0;
    for (const ws of this.sockets.keys()) {
      const state = ws.getUserData().state;
      if (state?.kind === 'admin') admins++;
      else streams++;
    }
    return { streams, admins };
  }

  // --- the two routes ---------------------------------------------------------------------------

  private streamSpec(behavior: SocketRouteSpec<State>['behavior']): SocketRouteSpec<State> {
    const spec: SocketRouteSpec<State> = {
      path: STREAM_PATH,
      family: this.services.families.exportV2,
      messageAuth: true,
      admit: (req) => this.admitStream(req),
      release: (state) => {
        if (state.kind === 'stream') this.slots.release(state.slot);
      },
      behavior: {
        ...behavior,
        message: (ws: Socket, data: ArrayBuffer, isBinary: boolean) =>
          this.streamMessage(ws, spec, parseClientMessage(data, isBinary, ['auth', 'subscribe', 'unsubscribe'])),
      },
    };
    return spec;
  }

  private adminSpec(behavior: SocketRouteSpec<State>['behavior']): SocketRouteSpec<State> {
    const spec: SocketRouteSpec<State> = {
      path: ADMIN_FEED_PATH,
      family: this.services.families.admin,
      messageAuth: true,
      admit: () => ({ kind: 'admin' }),
      behavior: {
        ...behavior,
        message: (ws: Socket, data: ArrayBuffer, isBinary: boolean) => {
          const message = parseClientMessage(data, isBinary, ['auth']);
          if (typeof message === 'string') this.send(ws, message);
          else this.authMessage(ws, spec, message as Extract<ClientMessage, { type: 'auth' }>);
        },
      },
    };
    return spec;
  }

  private async admitStream(req: Request): Promise<StreamState> {
    const principal = req.principal;
    if (principal?.kind !== 'user') throw new Error('status stream admitted without a user');
    const slot = await this.slots.take(principal.id);
    if (slot === false) {
      throw new HttpError(
        429,
        'too_many_streams',
        `At most ${this.services.config.pushStreamsPerUser} open status streams per user; close one before opening another.`,
      );
    }
    const credential = req.headers.authorization ?? '';
    return { kind: 'stream', user: principal.id, credential, slot, all: false, ids: new Set() };
  }

  // --- connection life ---------------------------------------------------------------------------

  private opened(ws: Socket): void {
    const connection: Connection = { allowance: 0, closed: false, authTimer: undefined, authenticating: false };
    this.sockets.set(ws, connection);
    if (this.closed) {
      ws.end(CLOSE.shuttingDown, CLOSE_REASON.shuttingDown);
      return;
    }
    const data = ws.getUserData();
    if (data.state) {
      this.welcome(ws, data.state);
      return;
    }
    connection.authTimer = setTimeout(() => {
      if (connection.closed || data.state) return;
      const seconds = this.services.config.pushAuthTimeoutMs / 1000;
      this.send(ws, errorMessage('not_authenticated', `No auth message within ${seconds} seconds of connecting.`));
      ws.end(CLOSE.authTimeout, CLOSE_REASON.authTimeout);
    }, this.services.config.pushAuthTimeoutMs);
  }

  /** Once authenticated: the admins get the snapshot of every station; streams wait for a subscribe. */
  private welcome(ws: Socket, state: State): void {
    if (state.kind === 'admin') {
      this.send(ws, JSON.stringify({ type: 'authenticated' }));
      ws.subscribe(ADMIN_TOPIC);
      this.sendSnapshot(ws, snapshotMessage(this.services.registry, this.services.status));
    } else {
      this.send(ws, JSON.stringify({ type: 'authenticated', user: state.user }));
    }
  }

  private closedSocket(ws: Socket, code: number): void {
    const connection = this.sockets.get(ws);
    this.sockets.delete(ws);
    if (connection) {
      connection.closed = true;
      clearTimeout(connection.authTimer);
    }
    const state = ws.getUserData().state;
    if (state?.kind === 'stream') this.slots.release(state.slot);
    this.log.debug({ code, kind: state?.kind ?? 'unauthenticated' }, 'websocket closed');
  }

  private drained(ws: Socket): void {
    const connection = this.sockets.get(ws);
    if (connection && ws.getBufferedAmount() <= this.services.config.pushMaxBacklogBytes) connection.allowance = 0;
  }

  private authMessage(ws: Socket, spec: SocketRouteSpec<State>, message: Extract<ClientMessage, { type: 'auth' }>): void {
    const connection = this.sockets.get(ws);
    const data = ws.getUserData();
    if (!connection) return;
    const echo = message.id === undefined ? {} : { id: message.id };
    if (data.state || connection.authenticating) {
      this.send(ws, errorMessage('already_authenticated', 'This connection is authenticated already.', echo));
      return;
    }
    connection.authenticating = true;
    this.server.authenticateSocket(spec, data.req, message.token).then(
      (state) => {
        connection.authenticating = false;
        if (connection.closed) {
          if (state.kind === 'stream') this.slots.release(state.slot);
          return;
        }
        clearTimeout(connection.authTimer);
        if (state.kind === 'stream') state.credential = `Bearer ${message.token}`;
        data.state = state;
        this.welcome(ws, state);
      },
      (err: unknown) => {
        connection.authenticating = false;
        if (connection.closed) return;
        clearTimeout(connection.authTimer);
        if (err instanceof HttpError && err.status === 429) {
          const code = err.code === 'too_many_streams' ? 'too_many_streams' : 'throttled';
          const retry = err.options.headers?.['Retry-After'];
          this.send(ws, errorMessage(code, err.detail, { ...echo, ...(retry ? { retry_after: Number(retry) } : {}) }));
          ws.end(CLOSE.tooMany, CLOSE_REASON.tooMany);
        } else if (err instanceof HttpError && err.status < 500) {
          this.send(ws, errorMessage('authentication_failed', err.detail, echo));
          ws.end(CLOSE.unauthorized, CLOSE_REASON.unauthorized);
        } else {
          this.log.error({ err }, 'authenticating a websocket failed');
          this.send(ws, errorMessage('authentication_failed', 'Unexpected platform error; please report it.', echo));
          ws.end(1011, 'internal error');
        }
      },
    );
  }

  // --- the status stream -------------------------------------------------------------------------

  private streamMessage(ws: Socket, spec: SocketRouteSpec<State>, message: ClientMessage | string): void {
    if (typeof message === 'string') {
      this.send(ws, message);
      return;
    }
    if (message.type === 'auth') {
      this.authMessage(ws, spec, message);
      return;
    }
    const state = ws.getUserData().state;
    const echo = message.id === undefined ? {} : { id: message.id };
    if (state?.kind !== 'stream') {
      this.send(ws, errorMessage('not_authenticated', 'Send {"type": "auth", "token": "..."} first.', echo));
      return;
    }
    if (message.type === 'subscribe') this.subscribe(ws, state, message.hrs_ids, echo);
    else this.unsubscribeFrom(ws, state, message.hrs_ids, echo);
  }

  private subscribe(ws: Socket, state: StreamState, ids: '*' | string[], echo: object): void {
    if (ids === '*') {
      for (const id of state.ids) ws.unsubscribe(`status/${id}`);
      state.ids.clear();
      state.all = true;
      ws.subscribe(ALL_TOPIC);
      this.send(ws, JSON.stringify({ type: 'subscribed', ...echo, hrs_ids: '*', subscriptions: '*' }));
      this.sendSnapshot(ws, `{"type":"snapshot",${this.services.status.allJson().slice(1)}`);
      return;
    }
    const wanted = [...new Set(ids)].sort();
    const unknown = wanted.filter((id) => !this.services.registry.station(id));
    if (unknown.length > 0) {
      this.send(
        ws,
        errorMessage('unknown_station', `No registered station has the id ${unknown.map((id) => `"${id}"`).join(', ')}; nothing was subscribed.`, {
          ...echo,
          hrs_ids: unknown,
        }),
      );
      return;
    }
    if (!state.all) {
      for (const id of wanted) {
        if (state.ids.has(id)) continue;
        state.ids.add(id);
        ws.subscribe(`status/${id}`);
      }
    }
    this.send(ws, JSON.stringify({ type: 'subscribed', ...echo, hrs_ids: wanted, subscriptions: this.subscriptions(state) }));
    let snapshot = '{"type":"snapshot","stations":[';
    wanted.forEach((id, i) => {
      snapshot += (i === 0 ? '' : ',') + (this.services.status.stationJson(id) ?? 'null');
    });
    this.sendSnapshot(ws, `${snapshot}]}`);
  }

  private unsubscribeFrom(ws: Socket, state: StreamState, ids: '*' | string[], echo: object): void {
    if (ids === '*') {
      for (const id of state.ids) ws.unsubscribe(`status/${id}`);
      state.ids.clear();
      if (state.all) ws.unsubscribe(ALL_TOPIC);
      state.all = false;
      this.send(ws, JSON.stringify({ type: 'unsubscribed', ...echo, hrs_ids: '*', subscriptions: [] }));
      return;
    }
    const named = [...new Set(ids)].sort();
    if (state.all) {
      this.send(
        ws,
        errorMessage(
          'not_subscribed',
          'This stream is subscribed to every station ("*"): unsubscribe "*", then subscribe to the stations wanted.',
          { ...echo, hrs_ids: named },
        ),
      );
      return;
    }
    for (const id of named) {
      if (state.ids.delete(id)) ws.unsubscribe(`status/${id}`);
    }
    this.send(ws, JSON.stringify({ type: 'unsubscribed', ...echo, hrs_ids: named, subscriptions: this.subscriptions(state) }));
  }

  private subscriptions(state: StreamState): '*' | string[] {
    return state.all ? '*' : [...state.ids].sort();
  }

  // --- fan-out -----------------------------------------------------------------------------------

  /** Whether anybody reads the admins' feed on this instance (otherwise its messages are not even built). */
  private get adminsListening(): boolean {
    return this.server.app.numSubscribers(ADMIN_TOPIC) > 0;
  }

  private changed(change: StatusChange): void {
    if (this.closed) return;
    this.dirty.add(change.hrsId);
    if (this.adminsListening) this.adminQueue.push(changeMessage(change));
    this.schedule();
  }

  private received(receipts: readonly Receipt[]): void {
    if (this.closed || !this.adminsListening) return;
    const at = new Date().toISOString();
    for (const r of receipts) this.adminQueue.push(receiptMessage(r, at));
    this.schedule();
  }

  private registryChanged(changed: ReadonlySet<string>): void {
    if (this.closed) return;
    const admins = this.adminsListening;
    for (const id of changed) {
      this.dirty.add(id);
      if (admins) this.adminQueue.push(registryMessage(this.services.registry, this.services.status, id));
    }
    this.schedule();
  }

  private schedule(): void {
    if (this.flushing) return;
    this.flushing = true;
    setImmediate(() => this.flush());
  }

  private flush(): void {
    this.flushing = false;
    if (this.closed) return;
    const app = this.server.app;
    for (const id of this.dirty) {
      if (app.numSubscribers(`status/${id}`) + app.numSubscribers(ALL_TOPIC) === 0) {
        // Nobody to tell: forget what was sent, so the next change goes out to whoever subscribes.
        this.lastSent.delete(id);
        continue;
      }
      const json = this.services.status.stationJson(id);
      // Undefined only for a station that left the registry (changes name registered stations).
      const message = json === undefined ? JSON.stringify({ type: 'removed', hrs_id: id }) : `{"type":"status","station":${json}}`;
      if (json === undefined) this.lastSent.delete(id);
      else if (this.lastSent.get(id) === json) continue;
      else this.lastSent.set(id, json);
      app.publish(`status/${id}`, message);
      app.publish(ALL_TOPIC, message);
    }
    this.dirty.clear();
    const admin = this.adminQueue;
    this.adminQueue = [];
    for (const message of admin) app.publish(ADMIN_TOPIC, message);
    this.scheduleScan();
  }

  /** Checks every socket's backlog soon (at most every SCAN_EVERY_MS while publishing). */
  private scheduleScan(): void {
    if (this.scanTimer !== undefined) return;
    this.scanTimer = setTimeout(() => {
      this.scanTimer = undefined;
      this.scan();
    }, SCAN_EVERY_MS);
  }

  private scan(): void {
    const limit = this.services.config.pushMaxBacklogBytes;
    if (this.scanQueue.length === 0) this.scanQueue = [...this.sockets.keys()];
    const batch = this.scanQueue.splice(0, SCAN_BATCH);
    // A pass still under way keeps the scans going even when nothing more is published.
    if (this.scanQueue.length > 0) this.scheduleScan();
    for (const ws of batch) {
      const connection = this.sockets.get(ws);
      if (!connection || connection.closed) continue;
      const buffered = ws.getBufferedAmount();
      if (buffered <= limit + connection.allowance) continue;
      this.log.warn({ buffered, limit, kind: ws.getUserData().state?.kind }, 'closing a subscriber that fell too far behind');
      connection.closed = true;
      ws.end(CLOSE.tooSlow, CLOSE_REASON.tooSlow);
    }
  }

  private send(ws: Socket, message: string): void {
    const connection = this.sockets.get(ws);
    if (!connection || connection.closed) return;
    ws.send(message, false, false);
  }

  /** Sends a snapshot; the part of it that cannot leave at once does not count against the backlog limit. */
  private sendSnapshot(ws: Socket, message: string): void {
    const connection = this.sockets.get(ws);
    if (!connection || connection.closed) return;
    ws.send(message, false, false);
    connection.allowance = Math.max(connection.allowance, ws.getBufferedAmount());
  }

  // --- credentials of open streams ---------------------------------------------------------------

  /** Closes streams whose token no longer authenticates (revoked, expired, owner deactivated). */
  private async recheckTokens(): Promise<void> {
    const byCredential = new Map<string, Socket[]>();
    for (const [ws, connection] of this.sockets) {
      const state = ws.getUserData().state;
      if (connection.closed || state?.kind !== 'stream') continue;
      byCredential.set(state.credential, [...(byCredential.get(state.credential) ?? []), ws]);
    }
    for (const [credential, sockets] of byCredential) {
      try {
        await this.services.recheck(credential);
      } catch (err) {
        if (!(err instanceof HttpError)) {
          this.log.warn({ err }, 'checking an open stream\'s token failed');
          continue;
        }
        for (const ws of sockets) {
          const connection = this.sockets.get(ws);
          if (!connection || connection.closed) continue;
          this.send(ws, errorMessage('authentication_failed', err.detail));
          connection.closed = true;
          ws.end(CLOSE.unauthorized, CLOSE_REASON.unauthorized);
        }
      }
    }
  }
}
