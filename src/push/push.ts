import type { Logger } from 'pino';
import type { LiveStatus } from '../../machines/live-status.js';
import type { StationDirectory } from '../domain/stations.js';
import type { RouteDoc } from '../http/contract.js';
import type { Family } from '../http/family.js';
import type { HttpServer } from '../http/server.js';
import type { ReceiptListener } from '../infra/receipts.js';
import type { OpeningListener } from '../../machines/opening-clock.js';
import type { TokenEvent } from '../domain/token-events.js';
import type { Rejection } from '../domain/rejections.js';
import { AdminFeed } from './admin-feed.js';
import type { VerdictSource } from './admin-view.js';
import { Backlog } from './backlog.js';
import { Connections } from './connections.js';
import { FanOut } from './fan-out.js';
import type { StreamSlots } from '../infra/stream-slots.js';
import { StatusStream } from './subscriptions.js';
import { TokenRecheck } from './token-recheck.js';
import { ExpiringTokens } from './expiring-tokens.js';
import { ADMIN_TOPIC } from './fan-out.js';
import type { ExpiringTokenRow } from '../../db/queries/credential-reminders.js';

/**
 * Push: the data users' status stream (subscriptions.ts) and the admins' live feed (admin-feed.ts),
 * both WebSockets (connections.ts) fanned out through uWS topics from the change stream, receipts and
 * registry reloads (fan-out.ts); sockets that fall too far behind are closed (backlog.ts), and so are
 * streams whose token stops authenticating (token-recheck.ts). Built with `createPush`, nothing runs
 * until `start`.
 */

export interface PushDeps {
  server: HttpServer;
  /** The families the two socket routes belong to: the status stream's (export v2) and the admins' feed's. */
  families: { stream: Family; admin: Family };
  /** The platform's logger (the push layer logs as `component: push`). */
  log: Logger;
  settings: {
    /** PUSH_STREAMS_PER_USER, as the 429 tells it (the slots enforce it). */
    streamsPerUser: number;
    /** PUSH_AUTH_TIMEOUT: how long a socket has for its `auth` message. */
    authTimeoutMs: number;
    /** PUSH_IDLE_TIMEOUT */
    idleTimeoutSeconds: number;
    /** PUSH_MAX_BACKLOG */
    maxBacklogBytes: number;
  };
  status: Pick<LiveStatus, 'onChange' | 'stationJson' | 'allJson' | 'categories'>;
  receipts: { on(listener: ReceiptListener): () => void };
  /** Stations opening and closing (machines/opening-clock.ts). */
  opening?: { onChange(listener: OpeningListener): () => void };
  /** Personal tokens' events (created, expiry changed, revoked, reminded of). */
  tokenEvents?: { on(listener: (events: readonly TokenEvent[]) => void): () => void };
  /** Refused import calls. */
  rejections?: { on(listener: (rejections: readonly Rejection[]) => void): () => void };
  stations: StationDirectory;
  /** Each station's verdict (src/domain/status/verdict.ts), which the admins' feed carries. */
  verdicts?: VerdictSource;
  /** Open streams per user; started and closed with the push layer. */
  slots: StreamSlots;
  /** The status stream's operation in the export v2 document. */
  streamDoc: RouteDoc;
  /** Resolves when a `Bearer …` credential still authenticates on export v2; throws its HttpError (401) otherwise. */
  recheck: (credential: string) => Promise<void>;
  /** Reads the tokens expiring soon, for the admins' dashboard (expiring-tokens.ts); without it none are listed. */
  expiringTokens?: (now: Date, withinMs: number, limit: number) => Promise<ExpiringTokenRow[]>;
}

export interface Push {
  /** Listens to the change stream and receipts, registers both socket routes, starts the timers. */
  start(): void;
  /** Closes every socket with 1001 and stops listening to changes. */
  close(): Promise<void>;
  /** After each registry reload: the stations added, removed, or whose published status may differ. */
  stationsChanged(changed: ReadonlySet<string>): void;
  /** Tokens changed (a revocation, say): open streams' tokens are checked again at once. */
  tokensChanged(): void;
  /** Open sockets (streams and admin feeds), and sockets closed since start for falling too far behind. */
  readonly connections: { streams: number; admins: number; closedSlow: number };
}

export function createPush(deps: PushDeps): Push {
  const { server, settings, status, stations, slots } = deps;
  const log = deps.log.child({ component: 'push' });
  const { authTimeoutMs, idleTimeoutSeconds, maxBacklogBytes } = settings;
  const connections = new Connections({ server, slots, log, authTimeoutMs, idleTimeoutSeconds, maxBacklogBytes });
  const backlog = new Backlog({ connections, log, maxBacklogBytes });
  const fanOut = new FanOut({ app: server.app, status, receipts: deps.receipts, opening: deps.opening, tokenEvents: deps.tokenEvents, rejections: deps.rejections, stations, verdicts: deps.verdicts, published: () => backlog.schedule() });
  const stream = new StatusStream({ family: deps.families.stream, connections, slots, stations, status, streamsPerUser: settings.streamsPerUser, doc: deps.streamDoc });
  const expiring = deps.expiringTokens
    ? new ExpiringTokens({
        read: deps.expiringTokens,
        publish: (message) => void server.app.publish(ADMIN_TOPIC, message),
        listening: () => server.app.numSubscribers(ADMIN_TOPIC) > 0,
        log,
      })
    : undefined;
  const adminFeed = new AdminFeed({ family: deps.families.admin, connections, stations, status, tail: () => fanOut.tailMessage(), expiring, seen: fanOut.seen, verdicts: deps.verdicts });
  // Personal tokens' events (created, expiry changed, revoked) change the list too.
  let stopTokenEvents: (() => void) | undefined;
  const tokens = new TokenRecheck({ connections, recheck: deps.recheck, log });
  let closed = false;
  return {
    start() {
      fanOut.start();
      tokens.start();
      if (expiring) {
        expiring.start();
        stopTokenEvents = deps.tokenEvents?.on(() => expiring.refresh());
      }
      slots.start();
      server.socket(stream.spec());
      server.socket(adminFeed.spec());
    },
    async close() {
      if (closed) return;
      closed = true;
      fanOut.stop();
      tokens.stop();
      expiring?.stop();
      stopTokenEvents?.();
      backlog.stop();
      connections.close();
      await slots.close();
    },
    stationsChanged: (changed) => fanOut.stationsChanged(changed),
    tokensChanged: () => {
      void tokens.now();
      expiring?.refresh();
    },
    get connections() {
      return connections.counts();
    },
  };
}
