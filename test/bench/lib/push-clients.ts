/**
 * The status stream's subscribers for ../push.bench.ts: every WebSocket client (the `ws` package) of a
 * run in this one process, so they share no event loop with the server or the poster.
 *
 * Layout (ClientsConfig): `windows` streams on `width` consecutive stations each, stream i on stations
 * i, i+1, …, i+width-1 of the ring `stations` (wrapping around), plus `all` streams on "*". With as
 * many windows as stations, every station has `width` window subscribers.
 *
 * Messages from the parent, each answered once done:
 * - `connect` → `connected`: opens every stream (`concurrency` at a time); each waits for
 *   `authenticated`, subscribes, and is live once its `subscribed` and `snapshot` have arrived.
 * - `reset` → `reset`: forgets the status messages recorded so far (after a warm-up).
 * - `settle` → `settled`: answers once no status message has arrived for `quietMs` (at most `maxMs`).
 * - `analyse` (the posted signals) → `analysis`: matches the messages received against the signals.
 * - `close` → `closed`: closes every stream (1000) and waits for the closing handshakes.
 *
 * Clock: `performance.timeOrigin + performance.now()`, as the poster's, so times of both processes on
 * one machine compare. Each status message's receipt time is read before it is parsed.
 */
import WebSocket from 'ws';
import { next, onStop, ready, send } from './ipc.js';

export interface ClientsConfig {
  url: string;
  headers: Record<string, string>;
  /** The ring of station ids the windows run over. */
  stations: string[];
  /** Streams on a window of `width` consecutive stations. */
  windows: number;
  width: number;
  /** Streams on "*". */
  all: number;
  /** Streams being opened at a time. */
  concurrency: number;
  /** Check that each snapshot lists every subscribed station with an availability section. */
  checkSnapshots: boolean;
}

/** The posted signals, index by index; `ackAt` is -1 for a signal not acknowledged with 204. */
export interface Signals {
  station: number[];
  datetime: number[];
  sentAt: number[];
  ackAt: number[];
}

export interface Stats {
  count: number;
  p50: number;
  p99: number;
  max: number;
  /** Values below zero (a message that arrived before the 204 did). */
  negative: number;
}

export interface Analysis {
  /** Signal deliveries due: per acknowledged signal, the streams subscribed to its station. */
  expected: number;
  /** Due deliveries for which a message carrying the signal's datetime or a later one arrived. */
  delivered: number;
  /** Of those, how many only arrived as a later state (coalesced with a newer signal). */
  superseded: number;
  /** Due deliveries no message covered. */
  lost: number;
  /** Delivery latency from the signal's 204, and from its POST being sent, in milliseconds. */
  fromAck: Stats;
  fromSend: Stats;
  /** Status messages recorded. */
  received: number;
  /** Status messages whose availability datetime is no posted signal's (of that station). */
  unmatched: number;
  /** The same station's same datetime received again on one stream. */
  duplicates: number;
  /** A station's datetime lower than one received before on the same stream. */
  outOfOrder: number;
  /** Status messages for stations the stream is not subscribed to. */
  unsubscribed: number;
  /** Messages other than `status` after the snapshot, by type. */
  others: Record<string, number>;
  /** Streams the server closed while live, by close code. */
  closedByServer: Record<string, number>;
}

const config = JSON.parse(process.argv[2] ?? '{}') as ClientsConfig;
const S = config.stations.length;
const TOTAL = config.windows + config.all;
const stationIndex = new Map(config.stations.map((id, i) => [id, i]));
const clock = () => performance.timeOrigin + performance.now();

/** Station indexes of window stream `c`. */
const windowOf = (c: number) => Array.from({ length: config.width }, (_, k) => (c + k) % S);
const isAll = (c: number) => c >= config.windows;
const subscribed = (c: number, station: number) => isAll(c) || (station - c + S) % S < config.width;

const sockets: WebSocket[] = [];
let closing = false;
const closedByServer: Record<string, number> = {};
const others: Record<string, number> = {};

// Status messages recorded, column by column.
let msgClient: number[] = [];
let msgStation: number[] = [];
let msgDatetime: number[] = [];
let msgAt: number[] = [];
let lastMessageAt = 0;

function record(client: number, data: WebSocket.RawData, at: number): void {
  lastMessageAt = at;
  let message: { type?: string; station?: { hrs_id?: string; availability?: { datetime?: string } | null } };
  try {
    message = JSON.parse(String(data)) as typeof message;
  } catch {
    others['(not JSON)'] = (others['(not JSON)'] ?? 0) + 1;
    return;
  }
  const station = message.type === 'status' ? stationIndex.get(message.station?.hrs_id ?? '') : undefined;
  const datetime = Date.parse(message.station?.availability?.datetime ?? '');
  if (station === undefined || Number.isNaN(datetime)) {
    const kind = message.type === 'status' ? 'status (unknown station or no availability)' : String(message.type);
    others[kind] = (others[kind] ?? 0) + 1;
    return;
  }
  msgClient.push(client);
  msgStation.push(station);
  msgDatetime.push(datetime);
  msgAt.push(at);
}

/** Opens stream `c`; resolves once it is live (its snapshot arrived). */
function open(c: number): Promise<void> {
  const ids = isAll(c) ? '*' : windowOf(c).map((i) => config.stations[i]!);
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(config.url, { headers: config.headers, perMessageDeflate: false });
    sockets[c] = ws;
    let stage: 'authenticated' | 'subscribed' | 'snapshot' | 'live' = 'authenticated';
    const fail = (why: string) => {
      if (stage === 'live') return;
      ws.terminate();
      reject(new Error(`stream ${c}: ${why}`));
    };
    ws.on('message', (data) => {
      const at = clock();
      if (stage === 'live') {
        record(c, data, at);
        return;
      }
      let message: { type?: string; stations?: { hrs_id?: string; availability?: unknown }[] };
      try {
        message = JSON.parse(String(data)) as typeof message;
      } catch {
        fail('a message that is not JSON');
        return;
      }
      if (message.type !== stage) {
        fail(`expected "${stage}", got ${String(data).slice(0, 200)}`);
        return;
      }
      if (stage === 'authenticated') {
        stage = 'subscribed';
        ws.send(JSON.stringify({ type: 'subscribe', hrs_ids: ids }));
      } else if (stage === 'subscribed') {
        stage = 'snapshot';
      } else {
        if (config.checkSnapshots) {
          const listed = message.stations ?? [];
          const want = ids === '*' ? S : ids.length;
          if (listed.length !== want || listed.some((s) => !s?.availability)) {
            fail(`the snapshot lists ${listed.length} stations (${want} subscribed), or one without availability`);
            return;
          }
        }
        stage = 'live';
        resolve();
      }
    });
    ws.on('error', (err) => fail(err.message));
    ws.on('close', (code, reason) => {
      if (stage !== 'live') fail(`closed (${code} ${String(reason)}) before its snapshot`);
      else if (!closing) closedByServer[code] = (closedByServer[code] ?? 0) + 1;
    });
  });
}

function stats(values: number[]): Stats {
  const sorted = Float64Array.from(values).sort();
  const at = (p: number) => (sorted.length === 0 ? Number.NaN : sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!);
  let negative = 0;
  for (const v of sorted) if (v < 0) negative++;
  return { count: sorted.length, p50: at(50), p99: at(99), max: sorted.length === 0 ? Number.NaN : sorted[sorted.length - 1]!, negative };
}

function analyse(signals: Signals): Analysis {
  // Message indexes per stream and station, in order of arrival.
  const lists = new Map<number, number[]>();
  for (let m = 0; m < msgClient.length; m++) {
    const key = msgClient[m]! * S + msgStation[m]!;
    const list = lists.get(key);
    if (list) list.push(m);
    else lists.set(key, [m]);
  }
  const posted = new Map<number, Set<number>>();
  for (let j = 0; j < signals.station.length; j++) {
    const station = signals.station[j]!;
    if (!posted.has(station)) posted.set(station, new Set());
    posted.get(station)!.add(signals.datetime[j]!);
  }
  let unmatched = 0;
  let duplicates = 0;
  let outOfOrder = 0;
  let unsubscribed = 0;
  for (const [key, list] of lists) {
    const client = Math.floor(key / S);
    const station = key % S;
    if (!subscribed(client, station)) unsubscribed += list.length;
    let latest = -Infinity;
    for (const m of list) {
      const datetime = msgDatetime[m]!;
      if (!posted.get(station)?.has(datetime)) unmatched++;
      if (datetime === latest) duplicates++;
      else if (datetime < latest) outOfOrder++;
      latest = Math.max(latest, datetime);
    }
  }

  let expected = 0;
  let delivered = 0;
  let superseded = 0;
  const fromAck: number[] = [];
  const fromSend: number[] = [];
  const subscribers: number[] = [];
  for (let j = 0; j < signals.station.length; j++) {
    if (signals.ackAt[j]! < 0) continue;
    const station = signals.station[j]!;
    const datetime = signals.datetime[j]!;
    subscribers.length = 0;
    for (let k = 0; k < config.width; k++) {
      const c = (station - k + S) % S;
      if (c < config.windows) subscribers.push(c);
    }
    for (let c = config.windows; c < TOTAL; c++) subscribers.push(c);
    for (const c of subscribers) {
      expected++;
      const list = lists.get(c * S + station);
      const m = list?.find((i) => msgDatetime[i]! >= datetime);
      if (m === undefined) continue;
      delivered++;
      if (msgDatetime[m] !== datetime) superseded++;
      fromAck.push(msgAt[m]! - signals.ackAt[j]!);
      fromSend.push(msgAt[m]! - signals.sentAt[j]!);
    }
  }
  return {
    expected,
    delivered,
    superseded,
    lost: expected - delivered,
    fromAck: stats(fromAck),
    fromSend: stats(fromSend),
    received: msgClient.length,
    unmatched,
    duplicates,
    outOfOrder,
    unsubscribed,
    others,
    closedByServer,
  };
}

onStop(() => {
  closing = true;
  for (const ws of sockets) ws?.terminate();
});

ready({ streams: TOTAL });
process.on('message', (message: { type?: string; [key: string]: unknown }) => {
  switch (message?.type) {
    case 'reset':
      msgClient = [];
      msgStation = [];
      msgDatetime = [];
      msgAt = [];
      for (const key of Object.keys(others)) delete others[key];
      send({ type: 'reset' });
      break;
    case 'settle': {
      const quietMs = Number(message.quietMs);
      const deadline = clock() + Number(message.maxMs);
      const started = clock();
      const check = () => {
        const now = clock();
        if (now - Math.max(lastMessageAt, started) >= quietMs || now >= deadline) send({ type: 'settled', waitedMs: now - started });
        else setTimeout(check, 25);
      };
      check();
      break;
    }
    case 'analyse':
      send({ type: 'analysis', analysis: analyse(message.signals as Signals) });
      break;
    case 'close': {
      closing = true;
      const open = sockets.filter((ws) => ws && ws.readyState !== WebSocket.CLOSED);
      let left = open.length;
      const timer = setTimeout(() => {
        for (const ws of open) ws.terminate();
      }, 5000);
      const done = () => {
        if (--left > 0) return;
        clearTimeout(timer);
        send({ type: 'closed' });
      };
      if (left === 0) {
        clearTimeout(timer);
        send({ type: 'closed' });
      }
      for (const ws of open) {
        ws.once('close', done);
        ws.close(1000, 'benchmark over');
      }
      break;
    }
  }
});

await next('connect');
const started = clock();
let nextStream = 0;
let failures = 0;
let firstError: string | undefined;
await Promise.all(
  Array.from({ length: Math.min(config.concurrency, TOTAL) }, async () => {
    while (nextStream < TOTAL) {
      const c = nextStream++;
      try {
        await open(c);
      } catch (err) {
        failures++;
        firstError ??= (err as Error).message;
      }
    }
  }),
);
send({ type: 'connected', ms: clock() - started, streams: TOTAL - failures, failures, firstError });
