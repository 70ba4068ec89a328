import type { StationDirectory } from '../domain/stations.js';
import type { Family } from '../http/family.js';
import type { SocketRouteSpec } from '../http/server.js';
import { snapshotMessage, type SectionSeen, type StatusCategories, type VerdictSource } from './admin-view.js';
import type { Connections, Socket, State } from './connections.js';
import { ADMIN_TOPIC } from './fan-out.js';

/**
 * The admins' live feed (`/admin/v1/live`): once authenticated with the admin token, a socket is
 * sent the snapshot of every station and the recent tail, and joins the `admin` topic, where the fan-out (fan-out.ts)
 * publishes changes, receipts and registry changes. The only message it takes is `auth`.
 */

export const ADMIN_FEED_PATH = '/admin/v1/live';

/**
 * Alike by shape to the status stream's deps (subscriptions.ts): both are a socket route's family and
 * connections, but each reads its own sources (the snapshot, tail and expiring tokens here; stream
 * slots and a per-user limit there), so a shared base would hold two fields.
 */
export interface AdminFeedDeps {
  family: Family;
  connections: Connections;
  stations: Pick<StationDirectory, 'station' | 'stationIds'>;
  status: StatusCategories;
  /** The recent tail as a `tail` message (fan-out.ts). */
  tail: () => string;
  /** The tokens expiring soon (expiring-tokens.ts): in the snapshot, and read again on each one. */
  expiring?: { current(): string; refresh(): void };
  /** Told every section the snapshot carries (the fan-out's, for the next change's `previous_section`). */
  seen?: SectionSeen;
  /** Each station's verdict, in its row. */
  verdicts?: VerdictSource;
}

export class AdminFeed {
  constructor(private readonly deps: AdminFeedDeps) {}

  /** The socket route: the admin token, in the upgrade request or the first message. */
  spec(): SocketRouteSpec<State> {
    const { connections } = this.deps;
    const welcome = (ws: Socket) => this.welcome(ws);
    const spec: SocketRouteSpec<State> = {
      path: ADMIN_FEED_PATH,
      family: this.deps.family,
      messageAuth: true,
      admit: () => ({ kind: 'admin' }),
      behavior: {
        ...connections.behavior(welcome),
        message: (ws: Socket, data: ArrayBuffer, isBinary: boolean) => {
          connections.receive(ws, data, isBinary, ['auth'], (message) => {
            if (typeof message === 'string') connections.send(ws, message);
            else if (message.type === 'auth') connections.authenticate(ws, spec, message, welcome);
          });
        },
      },
    };
    return spec;
  }

  /** The greeting, then the snapshot of every station; later messages come on the `admin` topic. */
  private welcome(ws: Socket): void {
    const { connections, stations, status } = this.deps;
    connections.send(ws, JSON.stringify({ type: 'authenticated' }));
    ws.subscribe(ADMIN_TOPIC);
    connections.sendSnapshot(ws, snapshotMessage(stations, status, this.deps.expiring?.current(), this.deps.seen, this.deps.verdicts));
    // Read again: a change since the last read reaches every admin as an `expiring_tokens` message.
    this.deps.expiring?.refresh();
    // What happened lately, so the tail survives a reload of the page.
    connections.send(ws, this.deps.tail());
  }
}
