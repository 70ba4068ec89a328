import { visibleTo } from '../domain/sandbox.js';
import type { LiveStatus } from '../../machines/live-status.js';
import type { StationLookup } from '../domain/stations.js';
import { HttpError } from '../http/errors.js';
import type { RouteDoc } from '../http/contract.js';
import type { Request } from '../http/request.js';
import type { Family } from '../http/family.js';
import type { SocketRouteSpec } from '../http/server.js';
import type { Connections, Socket, State, StreamState } from './connections.js';
import { ALL_TOPIC, stationTopic } from './fan-out.js';
import { errorMessage, type ClientMessage } from './protocol.js';
import { STREAM_RETRY_AFTER_SECONDS, type StreamSlots } from '../infra/stream-slots.js';

/**
 * The data users' status stream (`/v2/hrs/status/stream`): a stream is admitted while its user holds
 * fewer than PUSH_STREAMS_PER_USER, then subscribes to stations (`status/{hrs_id}`) or to every one
 * (`status/*`); each subscribe is acknowledged and followed by a snapshot of what it added, each
 * unsubscribe acknowledged. The messages themselves are published by the fan-out (fan-out.ts).
 */

export const STREAM_PATH = '/v2/hrs/status/stream';

export interface StatusStreamDeps {
  family: Family;
  connections: Connections;
  slots: Pick<StreamSlots, 'take' | 'release'>;
  stations: StationLookup;
  status: Pick<LiveStatus, 'stationJson' | 'allJson'>;
  streamsPerUser: number;
  /** The stream's operation in the export v2 document. */
  doc: RouteDoc;
}

type Echo = { id?: string | number };

export class StatusStream {
  constructor(private readonly deps: StatusStreamDeps) {}

  /** The socket route: export v2 tokens, in the upgrade request or the first message. */
  spec(): SocketRouteSpec<State> {
    const { connections, slots } = this.deps;
    const welcome = (ws: Socket, state: State) => {
      if (state.kind === 'stream') connections.send(ws, JSON.stringify({ type: 'authenticated', user: state.user }));
    };
    const spec: SocketRouteSpec<State> = {
      path: STREAM_PATH,
      family: this.deps.family,
      messageAuth: true,
      doc: this.deps.doc,
      admit: (req) => this.admit(req),
      release: (state) => {
        if (state.kind === 'stream') slots.release(state.slot);
      },
      behavior: {
        ...connections.behavior(welcome),
        message: (ws: Socket, data: ArrayBuffer, isBinary: boolean) => {
          connections.receive(ws, data, isBinary, ['auth', 'subscribe', 'unsubscribe'], (message) => {
            if (typeof message !== 'string' && message.type === 'auth') connections.authenticate(ws, spec, message, welcome);
            else this.message(ws, message);
          });
        },
      },
    };
    return spec;
  }

  /** Takes one of the user's stream slots, or refuses with 429. */
  private async admit(req: Request): Promise<StreamState> {
    const user = req.principal?.kind === 'user' ? req.principal.id : undefined;
    if (user === undefined) throw new Error('status stream admitted without a user');
    const slot = await this.deps.slots.take(user);
    if (slot === false) {
      throw new HttpError(
        429,
        'too_many_streams',
        `At most ${this.deps.streamsPerUser} open status streams per user; close one before opening another.`,
        { headers: { 'Retry-After': String(STREAM_RETRY_AFTER_SECONDS) } },
      );
    }
    const credential = req.headers.authorization ?? '';
    return { kind: 'stream', user, credential, slot, all: false, ids: new Set() };
  }

  private message(ws: Socket, message: Exclude<ClientMessage, { type: 'auth' }> | string): void {
    if (typeof message === 'string') {
      this.deps.connections.send(ws, message);
      return;
    }
    const state = ws.getUserData().state;
    const echo: Echo = message.id === undefined ? {} : { id: message.id };
    if (state?.kind !== 'stream') {
      this.deps.connections.send(ws, errorMessage('not_authenticated', 'Send {"type": "auth", "token": "..."} first.', echo));
      return;
    }
    if (message.type === 'subscribe') this.subscribe(ws, state, message.hrs_ids, echo);
    else this.unsubscribe(ws, state, message.hrs_ids, echo);
  }

  private subscribe(ws: Socket, state: StreamState, ids: '*' | string[], echo: Echo): void {
    const { connections, status } = this.deps;
    if (ids === '*') {
      for (const id of state.ids) ws.unsubscribe(stationTopic(id));
      state.ids.clear();
      state.all = true;
      ws.subscribe(ALL_TOPIC);
      connections.send(ws, JSON.stringify({ type: 'subscribed', ...echo, hrs_ids: '*', subscriptions: '*' }));
      connections.sendSnapshot(ws, `{"type":"snapshot",${status.allJson().slice(1)}`);
      return;
    }
    const wanted = [...new Set(ids)].sort();
    // The export v1.1 sandbox's stations are not export v2's: unknown here.
    const unknown = wanted.filter((id) => {
      const station = this.deps.stations.station(id);
      return station === undefined || !visibleTo('production', station);
    });
    if (unknown.length > 0) {
      const names = unknown.map((id) => `"${id}"`).join(', ');
      connections.send(
        ws,
        errorMessage('unknown_station', `No registered station has the id ${names}; nothing was subscribed.`, { ...echo, hrs_ids: unknown }),
      );
      return;
    }
    if (!state.all) {
      for (const id of wanted) {
        if (state.ids.has(id)) continue;
        state.ids.add(id);
        ws.subscribe(stationTopic(id));
      }
    }
    connections.send(ws, JSON.stringify({ type: 'subscribed', ...echo, hrs_ids: wanted, subscriptions: subscriptions(state) }));
    let snapshot = '{"type":"snapshot","stations":[';
    wanted.forEach((id, i) => {
      snapshot += (i === 0 ? '' : ',') + (status.stationJson(id) ?? 'null');
    });
    connections.sendSnapshot(ws, `${snapshot}]}`);
  }

  private unsubscribe(ws: Socket, state: StreamState, ids: '*' | string[], echo: Echo): void {
    const { connections } = this.deps;
    if (ids === '*') {
      for (const id of state.ids) ws.unsubscribe(stationTopic(id));
      state.ids.clear();
      if (state.all) ws.unsubscribe(ALL_TOPIC);
      state.all = false;
      connections.send(ws, JSON.stringify({ type: 'unsubscribed', ...echo, hrs_ids: '*', subscriptions: [] }));
      return;
    }
    const named = [...new Set(ids)].sort();
    if (state.all) {
      connections.send(
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
      if (state.ids.delete(id)) ws.unsubscribe(stationTopic(id));
    }
    connections.send(ws, JSON.stringify({ type: 'unsubscribed', ...echo, hrs_ids: named, subscriptions: subscriptions(state) }));
  }
}

/** A stream's subscriptions as acks show them. */
function subscriptions(state: StreamState): '*' | string[] {
  return state.all ? '*' : [...state.ids].sort();
}
