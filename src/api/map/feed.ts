import { createHash } from 'node:crypto';
import type { Logger } from 'pino';
import type { MapStationRow } from '../../../db/queries/map.js';
import { openingAt } from '../../domain/opening-hours.js';
import type { StationEntry } from '../../domain/stations.js';
import { EncodedBody } from '../../http/encoding.js';
import { stationSummary, type SummaryDeps } from '../../domain/status/station-summary.js';
import { featureParts, staticFields, type FeatureParts, type LivePart, type StaticFields } from './feature.js';

/**
 * The public map's feed, `GET /map/v1/stations.geojson`, and the changes its stream tells: every
 * production station with coordinates as a GeoJSON Feature, sorted by hrs_id, with its five-state
 * values computed exactly as export v1.1's `GET /v1.1/hrs/status` computes them (src/domain/status/station-summary.ts).
 *
 * One body is kept per change, identity bytes with gzip and brotli made on first demand, under a
 * strong ETag (a digest of the features) and a Last-Modified. It is settled, that is compared with
 * what it was computed from, on every request and shortly after every change:
 * - the registry reloaded (or the static fields read after it), or a station opened or closed since
 *   (`opening.nextDue()`): every station is computed again;
 * - a station's availability reading or freshness changed (the live status's change stream): that
 *   station is; were the availability version to move without a change heard, every station is.
 * Only when some feature differs is a new body made (with its new ETag and Last-Modified): a reading
 * that leaves every five-state value as it was changes nothing a client sees. Each settling tells the
 * stream which stations' live values changed (`station`) and whether the set or a station's static
 * fields did (`changed`): changes are coalesced over SETTLE_DELAY_MS, so a burst of signals costs one
 * settling, and a client hears of a change well within a second.
 *
 * The static fields (operator, address, version) come from PostgreSQL with one query per registry
 * reload (`refreshStatics`), never per request. While that query runs after a reload, the feed stays as
 * it was (for STATICS_WAIT_MS at most): a reload then makes one new body and one `changed`, and no body
 * lists a new station without its operator and address, nor a moved one at its old address.
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

interface Held {
  parts: FeatureParts;
  live: LivePart;
}

/** A station the map shows: a production station with valid coordinates. */
export function isMapped(station: StationEntry | undefined): station is StationEntry & { point: { lat: number; lon: number } } {
  return station !== undefined && station.sandbox !== true && station.point != null;
}

export class MapFeed {
  /** The platform's clock: the bodies' dates, and the server's time `If-Modified-Since` is held to. */
  readonly now: () => Date;
  private held = new Map<string, Held>();
  private statics = new Map<string, StaticFields>();
  /** Bumped with every read of the static fields. */
  private staticsVersion = 0;
  private staticsRead: Promise<void> | undefined;
  /** Reads of the static fields started. */
  private reads = 0;
  /** When the latest read of the static fields started (performance.now()), while it is under way. */
  private readingSince: number | undefined;
  private readonly dirty = new Set<string>();
  private seen = { registry: -1, statics: -1, availability: -1, until: Number.NEGATIVE_INFINITY };
  private current: FeedBody | undefined;
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
    this.staticsRead = read;
    return read;
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
    if (this.staticsVersion === 0) await this.staticsRead;
    else if (this.deps.stations.version !== this.seen.registry && this.awaitingStatics()) {
      const left = STATICS_WAIT_MS - (performance.now() - this.readingSince!);
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([this.staticsRead, new Promise((resolve) => (timer = setTimeout(resolve, left).unref()))]);
      clearTimeout(timer);
    }
    return this.settle();
  }

  /** The current ETag, settled now (the stream's `hello`); undefined until the static fields were first read. */
  get etag(): string | undefined {
    return this.staticsVersion === 0 ? undefined : this.settle().etag;
  }

  /** One station's Feature as the feed lists it (settled now), or undefined when the map does not show it. */
  async feature(hrsId: string): Promise<string | undefined> {
    return (await this.station(hrsId))?.feature;
  }

  /** One station's Feature and its live part (its five-state values), settled now; undefined when the map does not show it. */
  async station(hrsId: string): Promise<{ feature: string; live: LivePart } | undefined> {
    await this.body();
    const held = this.held.get(hrsId);
    return held === undefined ? undefined : { feature: held.parts.json, live: held.live };
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

  /** Computes what moved since the last settling; a new body (and the stream told) when some feature differs. */
  private settle(): FeedBody {
    const at = this.now();
    const { stations, status, opening } = this.deps;
    const seen = { registry: stations.version, statics: this.staticsVersion, availability: status.availabilityVersion, until: this.seen.until };
    // The registry reloaded and its stations' static fields are being read: the body stays as it was
    // until they are (every change since is settled then), so a reload makes one body, not two.
    if (this.current !== undefined && seen.registry !== this.seen.registry && this.awaitingStatics()) return this.current;
    const whole =
      this.current === undefined ||
      seen.registry !== this.seen.registry ||
      seen.statics !== this.seen.statics ||
      at.getTime() >= this.seen.until ||
      (seen.availability !== this.seen.availability && this.dirty.size === 0);
    if (!whole && this.dirty.size === 0) return this.current!;
    if (whole) seen.until = opening.nextDue() ?? Number.POSITIVE_INFINITY;
    const ids = whole ? [...stations.stationIds()] : [...this.dirty];
    this.dirty.clear();
    this.seen = seen;
    const open = openingAt(at);
    const next = whole ? new Map<string, Held>() : this.held;
    const changes: FeedChange[] = [];
    let fixedChanged = false;
    for (const hrsId of ids) {
      const station = stations.station(hrsId);
      const before = this.held.get(hrsId);
      if (!isMapped(station)) {
        if (before !== undefined) fixedChanged = true;
        if (!whole) next.delete(hrsId);
        continue;
      }
      const summary = stationSummary(this.deps, station, at, open);
      const live: LivePart = { open_now: open(station), fuelling_options: summary };
      const parts = featureParts(station, this.statics.get(hrsId) ?? staticFields(undefined), live);
      next.set(hrsId, { parts, live });
      if (before === undefined || before.parts.fixed !== parts.fixed) fixedChanged = true;
      else if (before.parts.live !== parts.live) changes.push({ type: 'station', hrs_id: hrsId, ...live });
    }
    // A station no longer listed when every station was computed: removed.
    if (whole && [...this.held.keys()].some((id) => !next.has(id))) fixedChanged = true;
    this.held = next;
    if (this.current !== undefined && !fixedChanged && changes.length === 0) return this.current;
    this.current = this.build(at);
    if (fixedChanged) changes.push({ type: 'changed', etag: this.current.etag });
    this.tell(changes);
    return this.current;
  }

  /** Whether a read of the static fields is under way, started less than STATICS_WAIT_MS ago. */
  private awaitingStatics(): boolean {
    return this.readingSince !== undefined && performance.now() - this.readingSince < STATICS_WAIT_MS;
  }

  /** The body over every held feature, sorted by hrs_id, with its validators. */
  private build(at: Date): FeedBody {
    const features = [...this.held.keys()].sort().map((id) => this.held.get(id)!.parts.json).join(',');
    const etag = `"${createHash('sha256').update(features).digest('base64url').slice(0, 27)}"`;
    // Never before the body it replaces, were the clock to step back: a date a client holds must not
    // seem newer than a later body (If-Modified-Since would keep its copy).
    const lastModified = Math.max(Math.floor(at.getTime() / 1000), this.current?.lastModified ?? 0);
    const body = new EncodedBody(`{"type":"FeatureCollection","generated_at":${JSON.stringify(at.toISOString())},"features":[${features}]}`);
    return { body, etag, lastModified, sharedSecond: this.current !== undefined && this.current.lastModified >= lastModified };
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
