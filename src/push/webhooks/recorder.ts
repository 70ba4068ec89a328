import type { Logger } from 'pino';
import type { Sql } from '../../../db/connect.js';
import { recordChanges, wantedKinds, type RecordedChange } from '../../../db/queries/recorded-changes.js';
import type { StatusChange } from '../../../machines/status-change.js';
import { isProduction, OptionValues, statusContent, statusRow, type HeardStatus, type OptionSources } from './change-rows.js';

/**
 * Records the live status's changes in the change log for webhook subscribers, in every `hrs serve`
 * process: topic `status`, a row per change of a station's published section or its freshness (the
 * live status's change stream), and topic `option`, a row per fuelling option whose five-state value
 * changed (computed again for every station whose availability, opening or registry entry changed).
 * Every instance records what it sees; the change keys (./change-rows.ts) make one row of each change.
 *
 * Never on the request path and never failing one: a change heard is kept in memory and written, with
 * the others, FLUSH_DELAY_MS later (at once when WRITE_ROWS are waiting) in one statement of at most
 * WRITE_ROWS rows, one statement after another, one at a time. While PostgreSQL fails, the rows wait (retried every RETRY_MS) up to
 * BUFFER_ROWS; past that the oldest are dropped, counted and warned of.
 *
 * Only the topics some active subscription wants are recorded: the kinds of the active subscriptions
 * are read at start and every TOPICS_EVERY_MS, so a subscription created (or re-enabled) is recorded for
 * within that delay, and a platform without subscriptions listens to nothing and writes nothing.
 */

/**
 * How long heard changes are gathered before they are written. Each statement costs this process about
 * a quarter of a millisecond of CPU besides its rows: gathered over 50 ms, 200 signals/s cost the import
 * path about 7% more CPU per request (bench `webhooks`); over 100 ms, half the statements.
 */
export const FLUSH_DELAY_MS = 100;
/** The most rows one statement writes. */
export const WRITE_ROWS = 500;
/** The most rows kept while PostgreSQL fails; past it the oldest are dropped. */
export const BUFFER_ROWS = 20_000;
/** How long a failed write waits before it is tried again. */
export const RETRY_MS = 1000;
/** How often the wanted topics are read again. */
export const TOPICS_EVERY_MS = 5000;

/** The subscription kinds whose changes this module records, and their change-log topics. */
const KIND_TOPICS = { station_status: 'status', fuelling_options: 'option' } as const;
export type RecordedTopic = (typeof KIND_TOPICS)[keyof typeof KIND_TOPICS];

export interface RecorderDeps extends OptionSources {
  status: OptionSources['status'] & {
    onChange(listener: (change: StatusChange) => void): () => void;
    /** Every category of a station that holds a reading, with its freshness and section (what `status` rows start from). */
    categories(hrsId: string): Partial<Record<string, { freshness: string | null; section: Record<string, unknown> | null }>>;
  };
  opening: { onChange(listener: (change: { hrsId: string }) => void): () => void };
  /** The kinds the active subscriptions want (db/queries/recorded-changes.ts wantedKinds). */
  wantedKinds(): Promise<Set<string>>;
  /** Writes rows in one statement; resolves with the rows written per topic (recordChanges). */
  write(rows: readonly RecordedChange[]): Promise<Record<string, number>>;
  log: Logger;
  /** Counts rows by topic and outcome: written, duplicate (another instance had written it), dropped. */
  counted?(topic: string, outcome: 'written' | 'duplicate' | 'dropped', rows: number): void;
  now?: () => Date;
  /** Overrides TOPICS_EVERY_MS. */
  topicsEveryMs?: number;
  /** Overrides BUFFER_ROWS. */
  bufferRows?: number;
}

/** The recorder over PostgreSQL: what it writes and what it reads of the subscriptions. */
export function changeRecorder(deps: Omit<RecorderDeps, 'wantedKinds' | 'write'> & { sql: Sql }): ChangeRecorder {
  const { sql, ...rest } = deps;
  return new ChangeRecorder({ ...rest, wantedKinds: () => wantedKinds(sql), write: (rows) => recordChanges(sql, rows) });
}

export class ChangeRecorder {
  private wanted = new Set<RecordedTopic>();
  private readonly options: OptionValues;
  private heard: HeardStatus[] = [];
  /** By `hrs_id/category`, the content (statusContent) of the last status row made, or as found when the topic became wanted. */
  private readonly statusContents = new Map<string, string>();
  private buffer: RecordedChange[] = [];
  private readonly listening: (() => void)[] = [];
  /** Production station ids as of the last registry reload (a removed station's changes come before the reload is told here). */
  private production = new Set<string>();
  private timer: NodeJS.Timeout | undefined;
  private topicsTimer: NodeJS.Timeout | undefined;
  private writing: Promise<void> | undefined;
  private failing = false;
  private topicsFailing = false;
  private dropped = 0;
  private closed = false;
  private readonly now: () => Date;

  constructor(private readonly deps: RecorderDeps) {
    this.options = new OptionValues(deps);
    this.now = deps.now ?? (() => new Date());
  }

  /** Reads the wanted topics and starts listening for them; reads them again every TOPICS_EVERY_MS. */
  async start(): Promise<void> {
    this.readProduction();
    await this.refreshTopics();
    this.topicsTimer = setInterval(() => void this.refreshTopics(), this.deps.topicsEveryMs ?? TOPICS_EVERY_MS).unref();
  }

  /** The topics recorded now. */
  get topics(): ReadonlySet<RecordedTopic> {
    return this.wanted;
  }

  /** Reads the active subscriptions' kinds; on failure the topics stay as they were. */
  async refreshTopics(): Promise<void> {
    let kinds: Set<string>;
    try {
      kinds = await this.deps.wantedKinds();
    } catch (err) {
      // Once per outage: the next reads fail alike.
      if (!this.topicsFailing) this.deps.log.warn({ err }, 'reading the webhook subscriptions failed: the topics recorded stay as they were');
      this.topicsFailing = true;
      return;
    }
    this.topicsFailing = false;
    if (this.closed) return;
    const next = new Set(Object.entries(KIND_TOPICS).flatMap(([kind, topic]) => (kinds.has(kind) ? [topic] : [])));
    if (next.size === this.wanted.size && [...next].every((topic) => this.wanted.has(topic))) return;
    if (next.has('option') && !this.wanted.has('option')) this.options.seed(this.now());
    if (!next.has('option')) this.options.clear();
    if (next.has('status') && !this.wanted.has('status')) this.seedStatus();
    if (!next.has('status')) {
      this.heard = [];
      this.statusContents.clear();
    }
    this.wanted = next;
    this.listen(next.size > 0);
    this.deps.log.info({ topics: [...next] }, 'webhook changes recorded for these topics');
  }

  /** After a registry reload: the changed stations' options are computed again. */
  stationsChanged(changed: ReadonlySet<string>): void {
    this.readProduction();
    if (!this.wanted.has('option')) return;
    for (const hrsId of changed) this.options.touch(hrsId);
    if (changed.size > 0) this.schedule();
  }

  /** Stops listening; writes what is held (one attempt). */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.listen(false);
    clearInterval(this.topicsTimer);
    clearTimeout(this.timer);
    this.timer = undefined;
    await this.writing;
    this.collect();
    this.failing = false;
    while (this.buffer.length > 0 && !this.failing) await this.writeBatch();
    if (this.buffer.length > 0) this.deps.log.warn({ rows: this.buffer.length }, 'webhook changes not recorded at shutdown (PostgreSQL failing)');
  }

  private readProduction(): void {
    const { stations } = this.deps;
    this.production = new Set([...stations.stationIds()].filter((id) => isProduction(stations.station(id))));
  }

  private listen(on: boolean): void {
    for (const off of this.listening.splice(0)) off();
    if (!on) return;
    this.listening.push(
      this.deps.status.onChange((change) => this.heardStatus(change)),
      this.deps.opening.onChange((change) => this.touchOption(change.hrsId)),
    );
  }

  /** Takes every station's status content as it is now, recording nothing (when the topic becomes wanted). */
  private seedStatus(): void {
    this.statusContents.clear();
    for (const hrsId of this.production) {
      for (const [category, view] of Object.entries(this.deps.status.categories(hrsId))) {
        if (view) this.statusContents.set(`${hrsId}/${category}`, statusContent(view.freshness, view.section));
      }
    }
  }

  private heardStatus(change: StatusChange): void {
    if (change.category === 'availability') this.touchOption(change.hrsId);
    if (!this.wanted.has('status') || !this.production.has(change.hrsId)) return;
    // Only what a subscriber is told of: the freshness or the section beyond its times moved, or the
    // registry changed what may be published.
    const key = `${change.hrsId}/${change.category}`;
    const content = statusContent(change.freshness, change.section);
    const registry = change.cause === 'registry' || change.cause === 'removed';
    if (!registry && this.statusContents.get(key) === content) return;
    this.statusContents.set(key, content);
    this.heard.push({
      hrsId: change.hrsId,
      category: change.category,
      freshness: change.freshness,
      // Read now, as the live status asks: later the actor may hold another reading.
      section: change.section,
      datetime: change.datetime,
      registryVersion: change.cause === 'registry' || change.cause === 'removed' ? this.deps.stations.loadedVersionUs : undefined,
    });
    // A full statement's worth is written without waiting out the delay (never within this call).
    if (this.heard.length >= WRITE_ROWS && this.timer !== undefined) {
      clearTimeout(this.timer);
      this.timer = undefined;
      this.schedule(0);
    } else this.schedule();
  }

  private touchOption(hrsId: string): void {
    if (!this.wanted.has('option')) return;
    this.options.touch(hrsId);
    this.schedule();
  }

  private schedule(delay = FLUSH_DELAY_MS): void {
    if (this.timer !== undefined || this.writing !== undefined || this.closed) return;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      this.flush();
    }, delay).unref();
  }

  /** Makes the rows of what was heard, in order: status changes first, then the options computed now. */
  private collect(): void {
    const rows = this.heard.map(statusRow);
    this.heard = [];
    if (this.options.pending) rows.push(...this.options.changes(this.now()));
    if (rows.length === 0) return;
    this.buffer.push(...rows);
    const over = this.buffer.length - (this.deps.bufferRows ?? BUFFER_ROWS);
    if (over > 0) this.drop(over);
  }

  private drop(count: number): void {
    const gone = this.buffer.splice(0, count);
    this.dropped += gone.length;
    for (const [topic, n] of tally(gone)) this.deps.counted?.(topic, 'dropped', n);
    this.deps.log.warn({ dropped: gone.length, dropped_since_start: this.dropped, kept: this.buffer.length }, 'webhook changes dropped: PostgreSQL has not taken them and the buffer is full');
  }

  private flush(): void {
    if (this.closed) return;
    this.collect();
    if (this.buffer.length === 0) return;
    this.writing = this.writeBatch().finally(() => {
      this.writing = undefined;
      if (this.heard.length > 0 || this.options.pending || this.buffer.length > 0) {
        this.schedule(this.failing ? RETRY_MS : this.buffer.length >= WRITE_ROWS ? 0 : FLUSH_DELAY_MS);
      }
    });
  }

  /** Writes the oldest WRITE_ROWS rows; on failure they stay in the buffer, in order. */
  private async writeBatch(): Promise<void> {
    const batch = this.buffer.slice(0, WRITE_ROWS);
    try {
      const written = await this.deps.write(batch);
      this.buffer.splice(0, batch.length);
      if (this.failing) this.deps.log.info({ rows: batch.length }, 'webhook changes recorded again');
      this.failing = false;
      for (const [topic, n] of tally(batch)) {
        const w = written[topic] ?? 0;
        this.deps.counted?.(topic, 'written', w);
        this.deps.counted?.(topic, 'duplicate', n - w);
      }
    } catch (err) {
      if (!this.failing) this.deps.log.warn({ err, kept: this.buffer.length }, 'recording webhook changes failed: they are kept and tried again');
      this.failing = true;
    }
  }
}

function tally(rows: readonly RecordedChange[]): Map<string, number> {
  const counts = new Map<string, number>();
  for (const row of rows) counts.set(row.topic, (counts.get(row.topic) ?? 0) + 1);
  return counts;
}
