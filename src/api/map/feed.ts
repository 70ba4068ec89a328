import type { Logger } from 'pino';
import type { MapStationRow } from '../../../db/queries/map.js';
import { openingAt } from '../../domain/opening-hours.js';
import type { StationEntry } from '../../domain/stations.js';
import { EncodedBody } from '../../http/encoding.js';
import { stationSummary, type SummaryDeps } from '../../domain/status/station-summary.js';
import { featureCollection, featureJson, heldFeature, livePartOf, staticFields, type HeldFeature, type LivePart, type StaticFields } from './feature.js';

/**
 * The public map's feed, `GET /map/v1/stations.geojson`, and the changes its stream tells: every
 * production station with coordinates as a GeoJSON Feature, sorted by hrs_id, with its five-state
 * values computed exactly as export v1.1's `GET /v1.1/hrs/status` computes them (src/domain/status/station-summary.ts).
 *
 * One body is kept, identity bytes with gzip and brotli made on first demand, under a strong ETag (a
 * digest of the features) and a Last-Modified. The features are settled, that is compared with what
 * they were computed from, on every request and shortly after every change:
 * - the registry reloaded (or the static fields read after it), or a station opened or closed since
 *   (`opening.nextDue()`): every station is computed again;
 * - a station's availability reading or freshness changed (the live status's change stream): that
 *   station is; were the availability version to move without a change heard, every station is.
 * Only when some feature differs is a new body made (with its new ETag and Last-Modified), and only
 * when one is asked for, at most every BUILD_PACE times what making the last one took: a reading that
 * leaves every five-state value as it was changes nothing a client sees, and readings arriving faster
 * than bodies can be made cost one body per pace, not one each. With more than SLICE stations, every
 * station is computed in slices with the event loop free between them. Each settling tells the
 * stream which stations' live values changed (`station`) and whether the set or a station's static
 * fields did (`changed`): changes are coalesced over SETTLE_DELAY_MS, so a burst of signals costs one
 * settling, and a client hears of a change well within a second.
 *
 * The static fields (operator, address, version) come from PostgreSQL with one query per registry
 * reload (`refreshStatics`), never per request. While that query runs after a reload, the feed stays as
 * it was (for STATICS_WAIT_MS at most): a reload then makes one new body and one `changed`, and no body
 * lists a new station without its operator and address, nor a moved one at its old address. At the
 * start, likewise, nothing is computed until the first read ends. A station's fixed pieces (geometry,
 * static fields, version) are made again only when its registry entry or static fields are new objects
 * (./feature.ts `heldFeature`).
 */

/** How long changes are gathered before the feed settles and the stream is told. */
export const SETTLE_DELAY_MS = 50;
/** How long a registry reload waits for its stations' static fields before the feed settles without them. */
export const STATICS_WAIT_MS = 1000;

/** What the stream is told of each settling that changed something. */
export type FeedChange =
  | { type: 'station'; hrs_id: string; open_now: boolean; fuelling_options: LivePart['fuelling_options'] }
  | { type: 'changed'; etag: string };

export interface MapFeedDeps extends Required<Pick<SummaryDeps, 'opening'>> {
  stations: SummaryDeps['stations'];
  status: SummaryDeps['status'] & { onChange(listener: (change: { hrsId: string; category: string }) => void): () => void };
  openingChanges: { onChange(listener: (change: { hrsId: string }) => void): () => void };
  /** The static fields of every production station (db/queries/map.ts). */
  readStatics: () => Promise<MapStationRow[]>;
  log: Logger;
  /** The platform's clock (the system clock by default). */
  now?: () => Date;
  /**
   * When bodies are paced (see MapFeed.built): in a feed of `fromFeatures` stations or more, from a
   * making that took `fromMs`, every `factor` times it. The defaults: SLICE stations, 10 ms, 10.
   */
  pacing?: { fromFeatures: number; fromMs: number; factor: number };
}

/** The kept body and its validators. */
export interface FeedBody {
  body: EncodedBody;
  etag: string;
  /** When the body was made, whole seconds since the epoch. */
  lastModified: number;
  /**
   * Whether an earlier body was made within the same second: then a date equal to `lastModified` may
   * name that earlier body, so `If-Modified-Since` with it is answered with the body, never a 304.
   */
  sharedSecond: boolean;
}

/** Every station computed in one go up to this many; more in slices of this many, the event loop free between them. */
export const SLICE = 2000;
/**
 * A body is made again at most every BUILD_PACE times what making the last one took, once that is
 * PACED_FROM_MS or more in a feed of PACED_FROM_FEATURES stations or more. A smaller feed is made in a
 * millisecond or so: one that took longer was slowed by something else (a garbage collection, a busy
 * machine), and pacing it would only serve a body that is behind for no gain.
 */
const BUILD_PACE = 10;
const PACED_FROM_MS = 10;
const PACED_FROM_FEATURES = SLICE;

/** One settling's work: the features computed (into `next`), what to tell, whether the set or a static field changed. */
class Pass {
  readonly open: (station: StationEntry) => boolean;
  readonly changes: FeedChange[] = [];
  fixedChanged = false;

  constructor(
    readonly whole: boolean,
    readonly at: Date,
    readonly next: Map<string, HeldFeature>,
  ) {
    this.open = openingAt(at);
  }
}

/** A station the map shows: a production station with valid coordinates. */
export function isMapped(station: StationEntry | undefined): station is StationEntry & { point: { lat: number; lon: number } } {
  return station !== undefined && station.sandbox !== true && station.point != null;
}

export class MapFeed {
  /** The platform's clock: the bodies' dates, and the server's time `If-Modified-Since` is held to. */
  readonly now: () => Date;
  private held = new Map<string, HeldFeature>();
  private statics = new Map<string, StaticFields>();
  /** Bumped with every read of the static fields. */
  private staticsVersion = 0;
  private staticsReading: Promise<void> | undefined;
  /** Reads of the static fields started. */
  private reads = 0;
  /** When the latest read of the static fields started (performance.now()), while it is under way. */
  private readingSince: number | undefined;
  private readonly dirty = new Set<string>();
  private seen = { registry: -1, statics: -1, availability: -1, until: Number.NEGATIVE_INFINITY };
  private current: FeedBody | undefined;
  /** The held stations' ids, sorted (the body's order); undefined when the set changed since. */
  private order: string[] | undefined;
  /** Whether a feature changed since the body was made. */
  private stale = false;
  /** When the body was last made (performance.now()) and what making it took (ms). */
  private builtAt = Number.NEGATIVE_INFINITY;
  private buildMs = 0;
  /** A computing of every station in slices, while under way. */
  private computing: Promise<void> | undefined;
  private readonly listeners = new Set<(changes: readonly FeedChange[]) => void>();
  private readonly unsubscribe: (() => void)[] = [];
  private timer: NodeJS.Timeout | undefined;
  private closed = false;

  constructor(private readonly deps: MapFeedDeps) {
    this.now = deps.now ?? (() => new Date());
  }

  /** Listens to the live status and the opening clock, and reads the static fields. */
  start(): Promise<void> {
    this.unsubscribe.push(
      this.deps.status.onChange((change) => {
        if (change.category === 'availability') this.touch(change.hrsId);
      }),
      this.deps.openingChanges.onChange((change) => this.touch(change.hrsId)),
    );
    return this.refreshStatics();
  }

  /** Told of every registry reload: the static fields are read again, then the feed settles. */
  refreshStatics(): Promise<void> {
    const sequence = ++this.reads;
    this.readingSince = performance.now();
    // A read that takes too long: the feed settles without it (see `settle`).
    const waited = setTimeout(() => this.schedule(), STATICS_WAIT_MS).unref();
    const read = (async () => {
      try {
        const rows = await this.deps.readStatics();
        // A slower earlier read must not replace what a later one read.
        if (sequence !== this.reads) return;
        this.statics = new Map(rows.map((row) => [row.hrs_id, staticFields(row)]));
        this.staticsVersion++;
      } catch (err) {
        this.deps.log.warn({ err }, 'reading the stations for the public map failed: their static fields stay as they were');
      } finally {
        clearTimeout(waited);
        if (sequence === this.reads) {
          this.readingSince = undefined;
          this.schedule();
        }
      }
    })();
    this.staticsReading = read;
    return read;
  }

  /** Whether the stations' static fields were read once. */
  get staticsLoaded(): boolean {
    return this.staticsVersion > 0;
  }

  /**
   * Settles when the static fields were first read, or when the latest read ended without them (it
   * failed); never rejects. A read that a later one overtook (a registry reload right after the start)
   * does not count: the later one is waited for.
   */
  async staticsRead(): Promise<void> {
    while (this.staticsVersion === 0) {
      const reading = this.staticsReading;
      await reading;
      if (reading === this.staticsReading) return;
    }
  }

  /** Hears of every settling that changed something; returns the unsubscribe function. */
  onChanges(listener: (changes: readonly FeedChange[]) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /**
   * The current body, settled now; waits for the first read of the static fields, and, after a registry
   * reload, for the read it started (STATICS_WAIT_MS at most): a request right after a reload gets the
   * new registry's stations, not the body from before it.
   */
  async body(): Promise<FeedBody> {
    await this.settled();
    return this.built();
  }

  /** The current ETag, settled now (the stream's `hello`); undefined until the static fields were first read and every station computed once. */
  get etag(): string | undefined {
    if (this.staticsVersion === 0) return undefined;
    this.settle();
    return this.current === undefined ? undefined : this.built().etag;
  }

  /** One station's Feature as the feed lists it (settled now), or undefined when the map does not show it. */
  async feature(hrsId: string): Promise<string | undefined> {
    return (await this.station(hrsId))?.feature;
  }

  /** One station's Feature and its live part (its five-state values), settled now; undefined when the map does not show it. */
  async station(hrsId: string): Promise<{ feature: string; live: LivePart } | undefined> {
    await this.settled();
    const held = this.held.get(hrsId);
    return held === undefined ? undefined : { feature: featureJson(held), live: livePartOf(held) };
  }

  /** Settled now, after the waits `body` describes, and after a computing of every station under way. */
  private async settled(): Promise<void> {
    if (this.staticsVersion === 0) await this.staticsRead();
    else if (this.deps.stations.version !== this.seen.registry && this.awaitingStatics()) {
      const left = STATICS_WAIT_MS - (performance.now() - this.readingSince!);
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([this.staticsReading, new Promise((resolve) => (timer = setTimeout(resolve, left).unref()))]);
      clearTimeout(timer);
    }
    this.settle();
    while (this.computing) {
      await this.computing;
      this.settle();
    }
  }

  close(): void {
    this.closed = true;
    clearTimeout(this.timer);
    for (const off of this.unsubscribe.splice(0)) off();
    this.listeners.clear();
  }

  private touch(hrsId: string): void {
    this.dirty.add(hrsId);
    this.schedule();
  }

  private schedule(): void {
    if (this.timer !== undefined || this.closed) return;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      try {
        this.settle();
      } catch (err) {
        this.deps.log.error({ err }, 'settling the public map feed failed');
      }
    }, SETTLE_DELAY_MS).unref();
  }

  /**
   * Computes what moved since the last settling and tells the stream. Every station (see the class
   * comment) is computed in slices of SLICE stations with the event loop free between them when there
   * are more than SLICE (100,000 stations take seconds): until that is done the feed stays as it was,
   * and `computing` is the work under way. The body is made when asked for (`built`), or at once when
   * the station set or a static field changed (the stream's `changed` names its ETag).
   */
  private settle(): void {
    if (this.computing) return;
    const at = this.now();
    const { stations, status, opening } = this.deps;
    const seen = { registry: stations.version, statics: this.staticsVersion, availability: status.availabilityVersion, until: this.seen.until };
    // The registry reloaded and its stations' static fields are being read: the body stays as it was
    // until they are (every change since is settled then), so a reload makes one body, not two.
    if (this.current !== undefined && seen.registry !== this.seen.registry && this.awaitingStatics()) return;
    // Nor is any computed before the first read of the static fields (unless it takes STATICS_WAIT_MS or
    // fails): every station would be computed twice at the start, once without them.
    if (this.current === undefined && this.staticsVersion === 0 && this.awaitingStatics()) return;
    const whole =
      this.current === undefined ||
      seen.registry !== this.seen.registry ||
      seen.statics !== this.seen.statics ||
      at.getTime() >= this.seen.until ||
      (seen.availability !== this.seen.availability && this.dirty.size === 0);
    if (!whole && this.dirty.size === 0) return;
    if (whole) seen.until = opening.nextDue() ?? Number.POSITIVE_INFINITY;
    const ids = whole ? [...stations.stationIds()] : [...this.dirty];
    this.dirty.clear();
    this.seen = seen;
    const pass = new Pass(whole, at, whole ? new Map<string, HeldFeature>() : this.held);
    if (ids.length <= SLICE) {
      this.compute(pass, ids);
      this.finish(pass);
      return;
    }
    const run = (async () => {
      for (let i = 0; i < ids.length; i += SLICE) {
        if (i > 0) await new Promise((resolve) => setImmediate(resolve));
        if (this.closed) return;
        this.compute(pass, ids.slice(i, i + SLICE));
      }
      this.finish(pass);
    })();
    this.computing = run
      .catch((err: unknown) => this.deps.log.error({ err }, 'settling the public map feed failed'))
      .finally(() => {
        this.computing = undefined;
        // Changes heard meanwhile.
        if (this.dirty.size > 0) this.schedule();
      });
  }

  /** Computes the features of `ids` into the pass. */
  private compute(pass: Pass, ids: readonly string[]): void {
    const { stations } = this.deps;
    for (const hrsId of ids) {
      const station = stations.station(hrsId);
      const before = this.held.get(hrsId);
      if (!isMapped(station)) {
        if (before !== undefined) pass.fixedChanged = true;
        if (!pass.whole) pass.next.delete(hrsId);
        continue;
      }
      const summary = stationSummary(this.deps, station, pass.at, pass.open);
      const live: LivePart = { open_now: pass.open(station), fuelling_options: summary };
      const parts = heldFeature(before, station, this.statics.get(hrsId) ?? staticFields(undefined), live);
      pass.next.set(hrsId, parts);
      if (before === undefined || before.head !== parts.head || before.tail !== parts.tail) pass.fixedChanged = true;
      else if (before.live !== parts.live) pass.changes.push({ type: 'station', hrs_id: hrsId, ...live });
    }
  }

  /** Puts a pass's features in place: a new body at once when the set or a static field changed, else when next asked for. */
  private finish(pass: Pass): void {
    // A station no longer listed when every station was computed: removed.
    if (pass.whole && !pass.fixedChanged) for (const id of this.held.keys()) if (!pass.next.has(id)) pass.fixedChanged = true;
    if (pass.whole || pass.fixedChanged) this.order = undefined;
    this.held = pass.next;
    if (this.current !== undefined && !pass.fixedChanged && pass.changes.length === 0) return;
    this.stale = true;
    if (pass.fixedChanged || this.current === undefined) {
      this.build(pass.at);
      if (pass.fixedChanged) pass.changes.push({ type: 'changed', etag: this.current!.etag });
    }
    this.tell(pass.changes);
  }

  /**
   * The body, made again when a feature changed since it was made. When making it took PACED_FROM_MS or
   * more (about 0.3 s with 100,000 stations; a millisecond with a thousand, which is never paced) in a
   * feed of PACED_FROM_FEATURES stations or more, not
   * more often than every BUILD_PACE times that, so that a stream of readings cannot keep the event loop
   * making bodies: until then the body made last is served, a consistent earlier state under its own
   * validators and `generated_at`.
   */
  private built(): FeedBody {
    if (this.current !== undefined && !this.stale) return this.current;
    const { fromFeatures, fromMs, factor } = this.deps.pacing ?? { fromFeatures: PACED_FROM_FEATURES, fromMs: PACED_FROM_MS, factor: BUILD_PACE };
    const paced = this.held.size >= fromFeatures && this.buildMs >= fromMs;
    if (this.current !== undefined && paced && performance.now() - this.builtAt < factor * this.buildMs) return this.current;
    return this.build(this.now());
  }

  /** Whether a read of the static fields is under way, started less than STATICS_WAIT_MS ago. */
  private awaitingStatics(): boolean {
    return this.readingSince !== undefined && performance.now() - this.readingSince < STATICS_WAIT_MS;
  }

  /** The body over every held feature, sorted by hrs_id, with its validators: the features' bytes written once, straight into it. */
  private build(at: Date): FeedBody {
    const started = performance.now();
    this.order ??= [...this.held.keys()].sort();
    const { bytes, etag } = featureCollection(this.order.map((id) => this.held.get(id)!), at);
    // Never before the body it replaces, were the clock to step back: a date a client holds must not
    // seem newer than a later body (If-Modified-Since would keep its copy).
    const lastModified = Math.max(Math.floor(at.getTime() / 1000), this.current?.lastModified ?? 0);
    const sharedSecond = this.current !== undefined && this.current.lastModified >= lastModified;
    this.current = { body: new EncodedBody(bytes), etag, lastModified, sharedSecond };
    this.stale = false;
    this.builtAt = performance.now();
    this.buildMs = this.builtAt - started;
    return this.current;
  }

  private tell(changes: readonly FeedChange[]): void {
    if (changes.length === 0) return;
    for (const listener of this.listeners) {
      try {
        listener(changes);
      } catch (err) {
        this.deps.log.error({ err }, 'a listener of the public map feed failed');
      }
    }
  }
}
