import type { Test } from 'tap';
import WebSocket from 'ws';
import { STATIONS, setUp, startHaproxy, startNginx, type Deployment } from './deploy.js';
import { TOKENS } from './fixtures.js';
import { ADMIN_TOKEN } from './platform.js';
import { ROOT, freePort, waitFor } from './process.js';
import { until } from './wait.js';

/**
 * The three WebSocket streams (the status stream, the admins' feed, the public map's stream) through
 * the shipped proxy configurations, for test/system/deploy-nginx-streams.test.ts and
 * test/system/deploy-haproxy-streams.test.ts: the upgrade; a stream left idle well past the proxy's idle
 * timeout, kept open by the platform's pings alone; every stream closed at its maximum age
 * (PUSH_MAX_AGE) and resumed; and one instance killed, its clients resuming on the other without
 * missing an update.
 *
 * The proxies' copies differ from deploy/ in their ports and in the idle timeout of an upgraded
 * connection: 300 s shipped, PROXY_IDLE_SECONDS here, as the platform's ping interval is cut in the
 * same proportion (PUSH_IDLE_TIMEOUT 8: a ping after 4 s of silence from the client, where 60 pings
 * after 44 s), so that the idle wait takes seconds, not minutes.
 */

/** The proxies' idle timeout for an upgraded connection in the test's copies. */
export const PROXY_IDLE_SECONDS = 6;
/** PUSH_MAX_AGE for the test's instances: longer than the idle wait, so the two show apart. */
export const MAX_AGE_SECONDS = 20;

const ENV = {
  ADMIN_TOKEN,
  PUSH_IDLE_TIMEOUT: '8',
  PUSH_MAX_AGE: String(MAX_AGE_SECONDS),
  // Slots of a killed instance's streams stay taken until their leases run out (a minute).
  PUSH_STREAMS_PER_USER: '50',
  MAP_STREAMS_PER_ADDRESS: '50',
  MAP_RATE_LIMIT: '100000',
  MAP_RATE_LIMIT_DAY: '1000000',
};

/** The stations the streams follow: on the map (coordinates) and live for mon-1's availability. */
export const FOLLOWED = STATIONS.slice(0, 4);

export interface ProxiedDeployment {
  d: Deployment;
  url: string;
  output: () => string;
}

export async function nginxDeployment(t: Test): Promise<ProxiedDeployment> {
  const d = await setUp(t, ENV);
  const nginx = await startNginx(t, d, [
    [/proxy_read_timeout 300s;/, `proxy_read_timeout ${PROXY_IDLE_SECONDS}s;`],
    [/proxy_send_timeout 300s;/, `proxy_send_timeout ${PROXY_IDLE_SECONDS}s;`],
  ]);
  return { d, url: nginx.url, output: nginx.output };
}

export async function haproxyDeployment(t: Test): Promise<ProxiedDeployment> {
  const d = await setUp(t, ENV);
  const haproxy = await startHaproxy(t, d, [[/timeout tunnel 300s/, `timeout tunnel ${PROXY_IDLE_SECONDS}s`]]);
  // Both servers in (two checks a second apart) before streams are spread over them.
  await until('both instances up', () => (/is DOWN/.test(haproxy.output()) ? undefined : true), 5_000);
  await new Promise((resolve) => setTimeout(resolve, 2500));
  return { d, url: haproxy.url, output: haproxy.output };
}

type Kind = 'status' | 'admin' | 'map';
export const KINDS: Kind[] = ['status', 'admin', 'map'];

/** A stream's life as its client saw it. */
interface Life {
  openedAt: number;
  closedAt?: number;
  code?: number;
  reason?: string;
}

/**
 * A client of one of the three streams that does what the docs tell a client to do: on any close it
 * reconnects (after RECONNECT_MS, through the proxy) and resumes by the stream's own mechanism. The
 * status stream subscribes again and takes the snapshot; the admins' feed takes the snapshot and the
 * tail; the map's stream compares the `hello`'s ETag with its copy of the feed and reads the feed
 * again when they differ. `view` is what the client shows per station; `heard` (admins' feed) the
 * availability readings it was told of, live or in a tail.
 */
export class StreamClient {
  static readonly RECONNECT_MS = 300;
  readonly lives: Life[] = [];
  readonly view = new Map<string, string>();
  readonly heard = new Set<string>();
  pings = 0;
  /** Frames received (messages and pings), with when. */
  lastFrameAt = 0;
  longestSilenceMs = 0;
  ready = false;
  private socket: WebSocket | undefined;
  private stopped = false;
  private etag: string | null = null;
  /** The updates (status, change, station) received since `mark()`. */
  updates = 0;

  constructor(
    readonly kind: Kind,
    private readonly url: string,
  ) {}

  get life(): Life {
    return this.lives[this.lives.length - 1]!;
  }

  get open(): boolean {
    return this.socket?.readyState === WebSocket.OPEN;
  }

  connect(): void {
    if (this.stopped) return;
    this.ready = false;
    const ws = this.url.replace('http:', 'ws:');
    const socket =
      this.kind === 'status'
        ? new WebSocket(`${ws}/v2/hrs/status/stream`, { headers: { Authorization: `Bearer ${TOKENS.export_v2}` } })
        : this.kind === 'admin'
          ? new WebSocket(`${ws}/admin/v1/live`, { headers: { Authorization: `Bearer ${ADMIN_TOKEN}` } })
          : new WebSocket(`${ws}/map/v1/stream`);
    this.socket = socket;
    const life: Life = { openedAt: 0 };
    socket.on('open', () => {
      life.openedAt = Date.now();
      this.lives.push(life);
      this.frame();
    });
    socket.on('ping', () => {
      this.pings++;
      this.frame();
    });
    socket.on('message', (data) => {
      this.frame();
      void this.receive(JSON.parse(String(data)) as Record<string, any>);
    });
    socket.on('error', () => {});
    socket.on('close', (code, reason) => {
      if (life.openedAt) Object.assign(life, { closedAt: Date.now(), code, reason: String(reason) });
      this.ready = false;
      setTimeout(() => this.connect(), StreamClient.RECONNECT_MS);
    });
  }

  /** Starts measuring the silence between frames afresh. */
  mark(): void {
    this.longestSilenceMs = 0;
    this.lastFrameAt = Date.now();
    this.updates = 0;
  }

  stop(): void {
    this.stopped = true;
    this.socket?.close();
  }

  private frame(): void {
    const now = Date.now();
    if (this.lastFrameAt) this.longestSilenceMs = Math.max(this.longestSilenceMs, now - this.lastFrameAt);
    this.lastFrameAt = now;
  }

  private async receive(message: Record<string, any>): Promise<void> {
    switch (message.type) {
      case 'authenticated':
        if (this.kind === 'status') this.socket!.send(JSON.stringify({ type: 'subscribe', hrs_ids: FOLLOWED, id: 'resume' }));
        return;
      case 'snapshot':
        if (this.kind === 'status') {
          for (const station of message.stations as Record<string, any>[]) this.view.set(station.hrs_id, station.availability?.datetime ?? 'none');
          this.ready = true;
        } else {
          for (const station of message.stations as Record<string, any>[]) {
            if (FOLLOWED.includes(station.hrs_id)) this.view.set(station.hrs_id, station.sections?.availability?.datetime ?? 'none');
          }
        }
        return;
      case 'tail':
        for (const event of message.events as Record<string, any>[]) this.change(event);
        this.ready = true;
        return;
      case 'status':
        this.updates++;
        this.view.set(message.station.hrs_id, message.station.availability?.datetime ?? 'none');
        return;
      case 'change':
        this.updates++;
        this.change(message);
        if (message.category === 'availability' && FOLLOWED.includes(message.hrs_id)) this.view.set(message.hrs_id, message.section?.datetime ?? 'none');
        return;
      case 'hello':
        if (message.etag !== this.etag) await this.readFeed();
        this.ready = true;
        return;
      case 'changed':
        await this.readFeed();
        return;
      case 'station':
        this.updates++;
        if (FOLLOWED.includes(message.hrs_id)) this.view.set(message.hrs_id, JSON.stringify(message.fuelling_options));
        return;
    }
  }

  private change(event: Record<string, any>): void {
    if (event.type === 'change' && event.category === 'availability') this.heard.add(`${event.hrs_id} ${Date.parse(event.datetime ?? event.section?.datetime)}`);
  }

  private async readFeed(): Promise<void> {
    const feed = await readFeed(this.url);
    this.etag = feed.etag;
    for (const [id, options] of feed.options) this.view.set(id, options);
  }
}

/** The map's feed through the proxy: its ETag and each followed station's fuelling options. */
export async function readFeed(url: string): Promise<{ etag: string | null; options: Map<string, string> }> {
  const res = await fetch(`${url}/map/v1/stations.geojson`);
  if (res.status !== 200) throw new Error(`the map feed answered ${res.status}`);
  const feed = (await res.json()) as { features: { properties: Record<string, any> }[] };
  const options = new Map<string, string>();
  for (const f of feed.features) if (FOLLOWED.includes(f.properties.hrs_id)) options.set(f.properties.hrs_id, JSON.stringify(f.properties.fuelling_options));
  return { etag: res.headers.get('ETag'), options };
}

/** Posts availability readings for the followed stations in turn, one at a time; each station's readings alternate, so each is a change. */
export class Importer {
  /** The last acknowledged reading per station (its datetime in ms), and every one acknowledged. */
  readonly last = new Map<string, number>();
  readonly acknowledged: string[] = [];
  readonly failures: string[] = [];
  private running = false;
  private inFlight = false;
  private paused: Promise<void> | undefined;
  private resume: (() => void) | undefined;
  private done: Promise<void> = Promise.resolve();
  private n = 0;
  private readonly sent = new Map<string, number>();

  constructor(private readonly url: string) {}

  /** One reading for `hrs`, retried (a new transmission id) on a 502/503 or a connection error. */
  async post(hrs: string): Promise<void> {
    const sent = this.sent.get(hrs) ?? 0;
    this.sent.set(hrs, sent + 1);
    const available = sent % 2 === 0;
    this.n++;
    for (let attempt = 0; ; attempt++) {
      const at = Math.max(Date.now(), (this.last.get(hrs) ?? 0) + 1);
      const body = [{ hrs, datetime: new Date(at).toISOString(), transmission_id: `streams-${this.n}-${attempt}`, nozzles: [{ id: 'N1', available }], station: { maintenance: false, limitedly_available: false } }];
      try {
        const res = await fetch(`${this.url}/import/v2/signal/availability/`, {
          method: 'POST',
          headers: { Authorization: `Bearer ${TOKENS.import_v2}`, 'Content-Type': 'application/json' },
          body: JSON.stringify(body),
        });
        const text = await res.text();
        if (res.status === 204) {
          this.last.set(hrs, at);
          this.acknowledged.push(`${hrs} ${at}`);
          return;
        }
        if (res.status !== 502 && res.status !== 503) throw new Error(`import answered ${res.status}: ${text}`);
        this.failures.push(String(res.status));
      } catch (err) {
        if ((err as Error).message.startsWith('import answered')) throw err;
        this.failures.push((err as Error).message);
      }
      if (attempt >= 20) throw new Error(`no import acknowledged in 20 attempts: ${this.failures.slice(-3).join(', ')}`);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }

  /** Posts in a loop (every `everyMs`) until `stop`. */
  start(everyMs = 40): void {
    this.running = true;
    this.done = (async () => {
      for (let i = 0; this.running; i++) {
        if (this.paused) await this.paused;
        this.inFlight = true;
        await this.post(FOLLOWED[i % FOLLOWED.length]!).finally(() => (this.inFlight = false));
        await new Promise((resolve) => setTimeout(resolve, everyMs));
      }
    })();
  }

  /** Resolves once no request is in flight; none starts until `go`. */
  async pause(): Promise<void> {
    this.paused = new Promise((resolve) => (this.resume = resolve));
    await until('the importer between requests', () => (this.inFlight ? undefined : true), 10_000, 1);
  }

  go(): void {
    this.paused = undefined;
    this.resume?.();
  }

  async stop(): Promise<void> {
    this.running = false;
    await this.done;
  }
}

/** hrs_push_sockets of one instance, asked directly: open streams by kind. */
export async function socketsOn(port: number): Promise<Record<Kind, number>> {
  const res = await fetch(`http://127.0.0.1:${port}/metrics`, { headers: { Authorization: `Bearer ${ADMIN_TOKEN}` } });
  const text = await res.text();
  const count = (kind: string) => Number(new RegExp(`^hrs_push_sockets\\{kind="${kind}"\\} (\\d+)`, 'm').exec(text)?.[1] ?? 0);
  return { status: count('stream'), admin: count('admin'), map: count('map') };
}

/**
 * Opens clients until each instance holds at least one stream of each kind. Round robin alone may not
 * do it: the requests of one round (an upgrade per missing kind, and the map client's feed) can be an
 * even number, and then fall the same way every round. So every other round begins with a plain
 * request through the proxy, which shifts the turn by one: the instance a round's first upgrade
 * goes to changes at least every second round, whatever the kinds still missing.
 */
export async function spread(p: ProxiedDeployment, clients: StreamClient[]): Promise<void> {
  let counts: Record<Kind, number>[] = [];
  for (let round = 0; round < 12; round++) {
    counts = await Promise.all(p.d.instances.map((i) => socketsOn(i.port)));
    const missingKinds = KINDS.filter((k) => counts.some((c) => c[k] === 0));
    if (missingKinds.length === 0) return;
    if (round % 2 === 1) await (await fetch(`${p.url}/healthz`)).arrayBuffer();
    for (const kind of missingKinds) {
      const client = new StreamClient(kind, p.url);
      client.connect();
      clients.push(client);
      await until(`a ${kind} stream ready`, () => (client.ready ? true : undefined), 10_000);
    }
  }
  throw new Error(`the proxy never spread the streams over both instances (${JSON.stringify(counts)})`);
}

/** Every client's view of every followed station equals what was acknowledged last (status, admin) or the map's feed now (map). */
export async function caughtUp(clients: StreamClient[], importer: Importer, url: string): Promise<string[]> {
  const feed = await readFeed(url);
  const wrong: string[] = [];
  for (const c of clients) {
    for (const hrs of FOLLOWED) {
      const seen = c.view.get(hrs);
      if (c.kind === 'map') {
        if (seen !== feed.options.get(hrs)) wrong.push(`${c.kind} ${hrs}: ${seen} ≠ the feed's ${feed.options.get(hrs)}`);
      } else if (Date.parse(seen ?? '') !== importer.last.get(hrs)) {
        wrong.push(`${c.kind} ${hrs}: ${seen} ≠ the last acknowledged ${new Date(importer.last.get(hrs) ?? 0).toISOString()}`);
      }
    }
  }
  return wrong;
}

export { STATIONS };

/** The four checks through one proxy, in order (the streams opened by the first serve the others). */
export async function streamsThroughProxy(t: Test, p: ProxiedDeployment): Promise<void> {
  // Stopped when the whole test ends: each check below goes on with the streams of the one before.
  const clients: StreamClient[] = [];
  t.teardown(() => clients.forEach((c) => c.stop()));
  const importer = new Importer(p.url);

  await t.test('every stream upgrades through the proxy, on both instances', async (t) => {
    await spread(p, clients);
    for (const kind of KINDS) t.ok(clients.some((c) => c.kind === kind && c.ready), `${kind}: upgraded, greeted and caught up`);
    const counts = await Promise.all(p.d.instances.map((i) => socketsOn(i.port)));
    t.same(KINDS.filter((k) => counts.some((c) => c[k] === 0)), [], `${clients.length} streams spread over both instances (${JSON.stringify(counts)})`);
    clients.forEach((c) => c.mark());
    for (const hrs of FOLLOWED) await importer.post(hrs);
    await until('every stream hears the imports', () => (clients.every((c) => c.updates >= FOLLOWED.length) ? true : undefined), 10_000);
    t.same(clients.filter((c) => c.updates < FOLLOWED.length).map((c) => c.kind), [], 'each hears an import for every station, whichever instance took it');
  });

  await t.test(`idle for ${2 * PROXY_IDLE_SECONDS} s, ${PROXY_IDLE_SECONDS} s being the proxy's idle timeout: the platform's pings keep every stream open`, async (t) => {
    if (clients.length === 0) throw new Error('no streams: the upgrade failed');
    const opened = clients.map((c) => c.lives.length);
    clients.forEach((c) => c.mark());
    const pings = clients.map((c) => c.pings);
    await new Promise((resolve) => setTimeout(resolve, 2 * PROXY_IDLE_SECONDS * 1000));
    const closed = clients.filter((c, i) => !c.open || c.lives.length !== opened[i]);
    t.same(closed.map((c) => `${c.kind}: ${c.life.code} ${c.life.reason}`), [], 'no stream was closed');
    const silence = Math.max(...clients.map((c) => c.longestSilenceMs));
    t.ok(clients.every((c, i) => c.pings - pings[i]! >= 2), `each was pinged (${clients.map((c, i) => c.pings - pings[i]!).join(', ')} pings)`);
    t.ok(silence < PROXY_IDLE_SECONDS * 1000, `the longest silence on any stream, ${silence} ms, is shorter than the proxy's idle timeout`);
    clients.forEach((c) => c.mark());
    await importer.post(FOLLOWED[1]!);
    await until('every stream hears an import after the wait', () => (clients.every((c) => c.updates > 0) ? true : undefined), 10_000);
    t.same(clients.filter((c) => c.updates === 0).map((c) => c.kind), [], 'and each still hears an import');
  });

  await t.test(`no stream stays open longer than PUSH_MAX_AGE (${MAX_AGE_SECONDS} s): closed with 1001, resumed`, async (t) => {
    if (clients.length === 0) throw new Error('no streams: the upgrade failed');
    const first = clients.map((c) => c.lives[c.lives.length - 1]!);
    await until('every stream closed at its age', () => (first.every((l) => l.closedAt !== undefined) ? true : undefined), (MAX_AGE_SECONDS + 5) * 1000);
    const ages = first.map((l) => (l.closedAt! - l.openedAt) / 1000);
    t.same(new Set(first.map((l) => `${l.code} ${l.reason}`)), new Set(['1001 stream at its maximum age: reconnect']), 'each closed by the platform with 1001');
    t.ok(ages.every((a) => a <= MAX_AGE_SECONDS + 1 && a >= 0.9 * MAX_AGE_SECONDS - 1), `each after ${Math.min(...ages).toFixed(1)}-${Math.max(...ages).toFixed(1)} s open (at most ${MAX_AGE_SECONDS})`);
    await until('every stream resumed', () => (clients.every((c) => c.ready && c.open) ? true : undefined), 10_000);
    t.same(clients.filter((c) => !(c.ready && c.open)).map((c) => c.kind), [], 'every client reconnected through the proxy and resumed');
    await importer.post(FOLLOWED[2]!);
    const wrong = await until('every view caught up', async () => {
      const w = await caughtUp(clients, importer, p.url);
      return w.length === 0 ? w : undefined;
    }, 10_000, 250).catch(() => caughtUp(clients, importer, p.url));
    t.same(wrong, [], 'and shows the last reading of every station');
  });

  await t.test('one instance killed: its clients resume on the other without missing an update', async (t) => {
    if (clients.length === 0) throw new Error('no streams: the upgrade failed');
    // The reconnections at the maximum age may have put every stream of a kind on one instance.
    await spread(p, clients);
    await until('every stream ready', () => (clients.every((c) => c.ready && c.open) ? true : undefined), 10_000);
    const victim = p.d.instances[0]!;
    const held = await socketsOn(victim.port);
    t.ok(KINDS.every((k) => held[k] > 0), `the instance to be killed holds streams of every kind (${JSON.stringify(held)})`);
    const lives = clients.map((c) => c.lives.length);
    const from = importer.acknowledged.length;
    importer.start();
    await until('imports before the kill', () => (importer.acknowledged.length >= from + 12 ? true : undefined), 20_000);
    // Between two requests, and after the last one's announcement (sent within 5 ms) has left.
    await importer.pause();
    await new Promise((resolve) => setTimeout(resolve, 100));
    const killedAt = Date.now();
    victim.running.child.kill('SIGKILL');
    await victim.running.exited;
    importer.go();
    // Waited for by count: the clients learn of the kill through the proxy a moment after the process has
    // gone, and until then every one of them still looks ready and open.
    const movedNow = () => clients.filter((c, i) => c.lives.length > lives[i]!);
    await until(
      'the killed instance\'s clients reconnected',
      () => (KINDS.every((k) => movedNow().filter((c) => c.kind === k).length >= held[k]) && clients.every((c) => c.ready && c.open) ? true : undefined),
      20_000,
    ).catch(() => undefined); // what is missing is reported below
    const back = (Date.now() - killedAt) / 1000;
    const moved = movedNow();
    const atResume = importer.acknowledged.length;
    await until('imports after the kill', () => (importer.acknowledged.length >= atResume + 12 ? true : undefined), 20_000);
    await importer.stop();
    t.same(KINDS.filter((k) => !moved.some((c) => c.kind === k)), [], `clients of every kind reconnected (${moved.map((c) => c.kind).join(', ')}), all back and caught up ${back.toFixed(1)} s after the kill (${StreamClient.RECONNECT_MS} ms of it their wait)`);
    t.ok(moved.every((c) => c.lives[lives[clients.indexOf(c)]! - 1]!.code === 1006), 'their streams had ended without a close frame (1006)');
    const wrong = await until('every view caught up', async () => {
      const w = await caughtUp(clients, importer, p.url);
      return w.length === 0 ? w : undefined;
    }, 10_000, 250).catch(() => caughtUp(clients, importer, p.url));
    t.same(wrong, [], `every client shows the last reading of every station (${importer.acknowledged.length - from} acknowledged around the kill)`);
    const admins = clients.filter((c) => c.kind === 'admin');
    const missed = admins.flatMap((c) => importer.acknowledged.slice(from).filter((a) => !c.heard.has(a)).map((a) => `${a} (${clients.indexOf(c)})`));
    t.same(missed, [], 'every admin was told of every acknowledged reading, live or in the tail it got on reconnecting');
    t.comment(`importer retries: ${importer.failures.length} (${[...new Set(importer.failures)].join(', ') || 'none'})`);
  });
}
