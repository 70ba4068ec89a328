import type { Logger } from 'pino';
import { DatabaseTimeoutError, timeoutOf, type Sql } from '../../../db/connect.js';
import { stationHeadsAndRows, type StationRow } from '../../../db/queries/stations.js';
import { openingAt } from '../../domain/opening-hours.js';
import type { ConfirmedLayout, StationDirectory } from '../../domain/stations.js';
import type { PublishedReading } from '../../domain/categories/index.js';
import { siteStatus, type Held } from '../../domain/datex2/status.js';
import { leftOutReasons, siteOf, tableVersion, type LeftOutReason, type SiteModel, type SiteResult } from '../../domain/datex2/table.js';
import { siteStatusElement, statusPublication } from './xml/status.js';
import { writeElement } from './xml/writer.js';
import { tablePublication, type Publisher } from './xml/table.js';
import { EncodedBody } from '../../http/encoding.js';
import type { Category } from '../../domain/categories/index.js';

/**
 * The two DATEX II publications, kept in memory:
 *
 * - The registry's rows of every production station (db/queries/stations.ts), read again only for
 *   stations whose version (`static_modified_at`) moved. The table reads the versions on every request
 *   (one statement), so it is never behind the registry on any instance. The status reads them again
 *   only after the registry cache reloaded (this instance was told of a change): otherwise it is served
 *   from memory alone.
 * - Each station's site (table.ts), kept while its row and its latest live pricing reading stay the
 *   same objects.
 * - Each publication's document, encoded (gzip made on first demand), kept while nothing it says can
 *   have changed: the table while its version holds; the status while the live status, the registry
 *   and every station's opening state hold.
 */

/** What the publications read of the live status (machines/live-status.ts). */
export interface LiveSource {
  published(hrsId: string, category: Category): { reading: PublishedReading; freshness: Held['freshness'] } | undefined;
  /** Moves with every change of any station's status. */
  readonly version: number;
}

export interface PublicationDeps {
  sql: Sql;
  status: LiveSource;
  stations: StationDirectory & { readonly version: number };
  /** When the next station opens or closes (machines/opening-clock.ts). */
  opening: { nextDue(): number | undefined };
  publisher: Publisher;
  log: Logger;
  /** The platform's clock (the system clock by default). */
  now?: () => Date;
}

interface CurrentSites {
  rows: ReadonlyMap<string, HeldRow>;
  statusVersion: number;
  setModifiedUs: number;
  sites: SiteModel[];
  newestUs: number;
  /** The table's version (table.ts `tableVersion`). */
  version: string;
}

interface KeptSite {
  row: HeldRow;
  pricing: PublishedReading | undefined;
  result: SiteResult;
}

export interface TableDocument {
  body: EncodedBody;
  /** µs since the epoch: the newest change the document reflects. */
  lastModifiedUs: number;
}

/**
 * A station as kept: its row, or, for one left out of the table whatever its prices (no daily capacity
 * or no coordinates), only its version and why: nothing else of it is published, and with 100,000
 * stations the whole rows took some 300 MB.
 */
type HeldRow = StationRow | LeftOutRow;

interface LeftOutRow {
  hrs_id: string;
  modifiedUs: number;
  leftOut: LeftOutReason[];
}

function heldRow(row: StationRow): HeldRow {
  const leftOut = leftOutReasons(row.details);
  return leftOut.length > 0 ? { hrs_id: row.hrs_id, modifiedUs: row.modifiedUs, leftOut } : row;
}

export class Datex2Publications {
  private rows = new Map<string, HeldRow>();
  private setModifiedUs = 0;
  private readonly sites = new Map<string, KeptSite>();
  /** The registry cache's version the rows were last read for (-1: never). */
  private rowsFor = -1;
  /** Moves whenever the kept rows are replaced (a table request may read them before this instance's registry reloads). */
  private rowsGeneration = 0;
  private reading: Promise<void> | undefined;
  /** The read after the one under way, for callers that came while it ran. */
  private readingNext: Promise<void> | undefined;
  private table: { version: string; body: EncodedBody; lastModifiedUs: number } | undefined;
  private statusDoc: { key: string; due: number; body: EncodedBody } | undefined;
  /** Each site's status element as written, with what it was computed from. */
  private readonly statusPieces = new Map<string, { inputs: StatusInputs; text: string }>();
  /** Stations left out of the table, by reason (`/metrics`). */
  private leftOut: Record<LeftOutReason, number> = { no_capacity: 0, no_coordinates: 0 };
  /** The row versions already warned about, so a left-out station is logged once per change. */
  private readonly warned = new Map<string, number>();
  /** The platform's clock: the table's dates, and the server's time `If-Modified-Since` is held to. */
  readonly now: () => Date;
  /** The last `currentSites`, with what it was made from. */
  private current: CurrentSites | undefined;

  constructor(private readonly deps: PublicationDeps) {
    this.now = deps.now ?? (() => new Date());
  }

  /** Stations left out of the publications, by reason (as of the rows last read and the live status now). */
  leftOutCounts(): Record<LeftOutReason, number> {
    if (this.rowsFor !== -1) this.currentSites();
    return { ...this.leftOut };
  }

  /**
   * Reads the versions of every station and the rows of those that changed, as they are from the
   * call on. A read already under way may have read the versions before a change the caller knows
   * of (a reload's, or one committed before a request): the caller then waits for one more read after
   * it, which everyone asking meanwhile shares.
   */
  refresh(): Promise<void> {
    if (this.reading === undefined) {
      this.reading = this.read().finally(() => {
        this.reading = undefined;
      });
      return this.reading;
    }
    this.readingNext ??= this.reading
      .catch(() => undefined)
      .then(() => {
        this.readingNext = undefined;
        return this.refresh();
      });
    return this.readingNext;
  }

  /**
   * `refresh` as a request waits for it: at most the pool's bound (DATABASE_TIMEOUT), then a 503. A
   * read over every station may take up to a minute (db/deadline.ts `wholeRegistryRead`), and one
   * under way when PostgreSQL froze held the requests chained after it that long; the read goes on,
   * and serves the requests after it.
   */
  private refreshForRequest(): Promise<void> {
    const reading = this.refresh();
    const ms = timeoutOf(this.deps.sql);
    if (ms === undefined) return reading;
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<never>((_resolve, reject) => {
      timer = setTimeout(() => reject(new DatabaseTimeoutError(`PostgreSQL did not answer within ${ms} ms`, false)), ms);
    });
    return Promise.race([reading, late]).finally(() => clearTimeout(timer));
  }

  private async read(): Promise<void> {
    const registryVersion = this.deps.stations.version;
    let changed = false;
    const { heads, kept: fresh } = await stationHeadsAndRows(
      this.deps.sql,
      (read) => {
        const stale = read.stations.filter((h) => this.rows.get(h.hrsId)?.modifiedUs !== h.modifiedUs).map((h) => h.hrsId);
        changed = stale.length > 0 || read.stations.length !== this.rows.size;
        return stale;
      },
      heldRow,
    );
    // Unchanged (the usual case, on every table request): the same map, so what was made of it is kept.
    if (changed) {
      const next = new Map<string, HeldRow>();
      const byId = new Map(fresh.map((row) => [row.hrs_id, row]));
      for (const head of heads.stations) {
        const row = byId.get(head.hrsId) ?? this.rows.get(head.hrsId);
        if (row !== undefined) next.set(head.hrsId, row);
      }
      this.rows = next;
      this.rowsGeneration++;
      for (const hrsId of this.sites.keys()) if (!next.has(hrsId)) this.sites.delete(hrsId);
    }
    this.setModifiedUs = heads.setModifiedUs;
    this.rowsFor = registryVersion;
  }

  /**
   * Every publishable station's site, by hrs_id, from the kept rows and the live pricing, with the
   * table's version and the newest change it shows. Kept while the rows and the live status stay the
   * same; the version is digested again only when some site changed.
   */
  private currentSites(): CurrentSites {
    const statusVersion = this.deps.status.version;
    const last = this.current;
    if (last !== undefined && last.rows === this.rows && last.statusVersion === statusVersion && last.setModifiedUs === this.setModifiedUs) return last;
    const sites: SiteModel[] = [];
    const leftOut: Record<LeftOutReason, number> = { no_capacity: 0, no_coordinates: 0 };
    let newestUs = this.setModifiedUs;
    for (const [hrsId, row] of this.rows) {
      // Left out whatever its prices: its reasons are all there is to it.
      const pricing = 'leftOut' in row ? undefined : this.deps.status.published(hrsId, 'pricing')?.reading;
      let kept = this.sites.get(hrsId);
      if (kept === undefined || kept.row !== row || kept.pricing !== pricing) {
        const input = pricing === undefined ? null : { datetime: pricing.datetime, receivedAt: pricing.receivedAt, products: productsOf(pricing) };
        kept = { row, pricing, result: 'leftOut' in row ? { leftOut: row.leftOut } : siteOf(row, input) };
        this.sites.set(hrsId, kept);
      }
      newestUs = Math.max(newestUs, row.modifiedUs);
      if ('site' in kept.result) {
        sites.push(kept.result.site);
        if (kept.result.site.station.rates.length > 0 && pricing !== undefined) newestUs = Math.max(newestUs, pricing.receivedAt * 1000);
      } else {
        for (const reason of kept.result.leftOut) leftOut[reason]++;
        if (this.warned.get(hrsId) !== row.modifiedUs) {
          this.warned.set(hrsId, row.modifiedUs);
          this.deps.log.warn({ hrsId, missing: kept.result.leftOut }, 'station left out of the DATEX II publications (the AFIR profile requires its daily capacity and coordinates)');
        }
      }
    }
    for (const hrsId of this.warned.keys()) if (!this.rows.has(hrsId)) this.warned.delete(hrsId);
    this.leftOut = leftOut;
    const same = last !== undefined && last.sites.length === sites.length && sites.every((site, i) => site === last.sites[i]);
    this.current = { rows: this.rows, statusVersion, setModifiedUs: this.setModifiedUs, sites, newestUs, version: same ? last.version : tableVersion(sites) };
    return this.current;
  }

  /**
   * The table publication, read against the registry's current versions; undefined while no station
   * can be published (the schema requires a table to hold at least one site).
   */
  async tableDocument(): Promise<TableDocument | undefined> {
    await this.refreshForRequest();
    const { sites, newestUs, version } = this.currentSites();
    if (sites.length === 0) return undefined;
    if (this.table?.version !== version) {
      // A change no kept time shows (a pricing source no longer live): the change is dated when seen.
      const previous = this.table?.lastModifiedUs ?? 0;
      const lastModifiedUs = newestUs > previous || this.table === undefined ? newestUs : Math.max(previous + 1_000_000, this.now().getTime() * 1000);
      this.table = { version, body: new EncodedBody(tablePublication(sites, this.deps.publisher, this.now())), lastModifiedUs };
    }
    return { body: this.table.body, lastModifiedUs: this.table.lastModifiedUs };
  }

  /** The status publication, from memory (the rows are read again only after a registry reload). */
  async statusDocument(): Promise<EncodedBody> {
    if (this.rowsFor !== this.deps.stations.version) await this.refreshForRequest();
    const at = this.now();
    const key = `${this.deps.status.version}:${this.deps.stations.version}:${this.rowsGeneration}:${this.setModifiedUs}`;
    const kept = this.statusDoc;
    if (kept !== undefined && kept.key === key && at.getTime() < kept.due) return kept.body;
    const { sites, version } = this.currentSites();
    const open = openingAt(at);
    const pieces = sites.map((site) => {
      const station = this.deps.stations.station(site.hrsId);
      const held = (category: Category) => this.deps.status.published(site.hrsId, category);
      const inputs: StatusInputs = {
        site,
        open: station === undefined ? true : open(station),
        availability: held('availability'),
        usage: held('usage'),
        storage: held('hydrogen-storage'),
        layout: station?.layout ?? null,
      };
      const kept = this.statusPieces.get(site.hrsId);
      if (kept !== undefined && sameInputs(kept.inputs, inputs)) return kept.text;
      const text = writeElement(siteStatusElement(siteStatus(site, inputs)));
      this.statusPieces.set(site.hrsId, { inputs, text });
      return text;
    });
    for (const hrsId of this.statusPieces.keys()) if (!this.rows.has(hrsId)) this.statusPieces.delete(hrsId);
    const body = new EncodedBody(statusPublication(pieces, sites.length === 0 ? null : version, this.deps.publisher, at));
    this.statusDoc = { key, due: this.deps.opening.nextDue() ?? Number.POSITIVE_INFINITY, body };
    return body;
  }
}

/** What one site's status is computed from: the same objects (readings are replaced, never changed) give the same element. */
interface StatusInputs {
  site: SiteModel;
  open: boolean;
  availability: Held | undefined;
  usage: Held | undefined;
  storage: Held | undefined;
  layout: ConfirmedLayout | null;
}

const sameHeld = (a: StatusInputs['usage'], b: StatusInputs['usage']) => a?.reading === b?.reading && a?.freshness === b?.freshness;
const sameInputs = (a: StatusInputs, b: StatusInputs) =>
  a.site === b.site && a.open === b.open && a.layout === b.layout && sameHeld(a.availability, b.availability) && sameHeld(a.usage, b.usage) && sameHeld(a.storage, b.storage);

const productsOf = (reading: PublishedReading): Record<string, unknown>[] =>
  Array.isArray(reading.payload.products) ? (reading.payload.products as unknown[]).filter((p): p is Record<string, unknown> => typeof p === 'object' && p !== null) : [];
