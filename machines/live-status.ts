import {
  CATEGORIES,
  SECTION_KEYS,
  bySectionKey,
  freshnessPolicies,
  type Category,
  type FreshnessPolicy,
  type FreshnessSettings,
  type PublishedReading,
} from '../src/domain/categories/index.js';
import type { PublishedSignal } from '../src/domain/signals.js';
import type { StationDirectory } from '../src/domain/stations.js';
import { buildSection } from '../src/domain/status/sections.js';
import { DeadlineTimer } from './deadline-timer.js';
import { freshnessOf, type Freshness, type FreshnessInput, type FreshnessSnapshot } from './freshness.js';
import { FreshnessRunner, type Step } from './runner.js';
import type { Actor } from './status-actor.js';
import { ChangeStream, changeOf, type CategoryView, type ChangeListener, type StatusChange, type StatusLog } from './status-change.js';

export type { CategoryView, ChangeListener, StatusChange, StatusLog };

/** A station with no reading held: every section null. */
const NULL_SECTIONS = bySectionKey(() => null);

/** The freshness deadlines (see the categories' `freshness`), and the clock (epoch ms); tests may move it. */
export interface LiveStatusOptions extends FreshnessSettings {
  now?: () => number;
}

/**
 * The live status of every station: one independent actor per station and signal category (a
 * freshness machine snapshot and its own next deadline, see FreshnessRunner), created by the first published
 * reading and removed with the station. Reads are served from memory: each station's status object is
 * kept serialised until something of it changes. Every change of a published section and every
 * freshness transition goes out on one change stream (`onChange`).
 */
export class LiveStatus {
  private readonly runner = new FreshnessRunner();
  private readonly stations = new Map<string, Map<Category, Actor>>();
  private readonly stream: ChangeStream;
  private readonly policies: Record<Category, FreshnessPolicy>;
  private readonly now: () => number;
  /** Serialised status object per station (stations without actors included once read). */
  private readonly cache = new Map<string, string>();
  private sortedIds: string[] | undefined;
  /** Moves with every change of any station's status object (see `version`). */
  private changes = 0;
  /** Moves with every change of a station's availability actor, and with registry changes (see `availabilityVersion`). */
  private availabilityChanges = 0;
  private closed = false;
  /** Every actor with a pending delayed event, by due time, on one Node timer. */
  private readonly deadlines: DeadlineTimer<Actor>;

  constructor(
    private readonly directory: StationDirectory,
    private readonly log: StatusLog,
    options: LiveStatusOptions,
  ) {
    this.stream = new ChangeStream(log);
    this.policies = freshnessPolicies(options);
    this.now = options.now ?? Date.now;
    this.deadlines = new DeadlineTimer<Actor>((actor) => actor.due, this.now, (actor) => this.fire(actor));
  }

  /** Subscribes to the change stream; returns the unsubscribe function. */
  onChange(listener: ChangeListener): () => void {
    return this.stream.subscribe(listener);
  }

  /**
   * Restores actors from stored published snapshots (in batches, as db/queries/signals.ts reads them),
   * deadlines re-armed from each reading's `datetime` (a reading already past a deadline starts in the
   * state it has reached). Readings applied meanwhile (from the bus) win when they are newer.
   */
  async restore(batches: AsyncIterable<readonly PublishedSignal[]>): Promise<number> {
    let count = 0;
    for await (const signals of batches) {
      for (const signal of signals) if (this.apply(signal, false)) count++;
    }
    return count;
  }

  /**
   * Applies the stored published snapshots newer than the readings held (or of a station and category
   * holding none) as committed readings, their changes going out on the change stream: what the bus
   * would have brought while this instance could not hear it (src/platform.ts, catchUpAfterRejoin).
   * Returns how many were applied.
   */
  async catchUp(batches: AsyncIterable<readonly PublishedSignal[]>): Promise<number> {
    let count = 0;
    for await (const signals of batches) {
      for (const signal of signals) {
        const held = this.stations.get(signal.hrsId)?.get(signal.category);
        if (held && signal.datetime <= held.reading.datetime) continue;
        if (this.apply(signal, true)) count++;
      }
    }
    return count;
  }

  /**
   * Applies committed live readings: each replaces its station's published reading of that category
   * unless the one held was measured later (a late reading never overwrites a newer one, as in the
   * database). Returns how many were applied.
   */
  publish(signals: readonly PublishedSignal[]): number {
    let applied = 0;
    for (const signal of signals) if (this.apply(signal, true)) applied++;
    return applied;
  }

  /** The station status object as JSON, or undefined for a station not in the registry. */
  stationJson(hrsId: string): string | undefined {
    const cached = this.cache.get(hrsId);
    if (cached !== undefined) return cached;
    if (!this.directory.station(hrsId)) return undefined;
    const actors = this.stations.get(hrsId);
    let json: string;
    if (!actors) json = JSON.stringify({ hrs_id: hrsId, ...NULL_SECTIONS });
    else {
      json = `{"hrs_id":${JSON.stringify(hrsId)}`;
      for (const category of CATEGORIES) {
        const actor = actors.get(category);
        json += `,"${SECTION_KEYS[category]}":${actor ? this.sectionJson(actor) : 'null'}`;
      }
      json += '}';
    }
    this.cache.set(hrsId, json);
    return json;
  }

  /** Moves whenever anything `allJson` returns may have changed, so a reader may keep what it made of it until then. */
  get version(): number {
    return this.changes;
  }

  /**
   * Moves whenever a published availability reading or its freshness may have changed: what the export
   * v1.1 summary reads (usage, storage and pricing changes leave it alone).
   */
  get availabilityVersion(): number {
    return this.availabilityChanges;
  }

  /** `{"stations": [...]}` over every registered production station (no sandbox station), sorted by hrs_id. */
  allJson(): string {
    // The export v2 view: the sandbox's sample stations are never in it.
    this.sortedIds ??= [...this.directory.stationIds()].filter((id) => this.directory.station(id)?.sandbox !== true).sort();
    let json = '{"stations":[';
    let first = true;
    for (const id of this.sortedIds) {
      const station = this.stationJson(id);
      if (station === undefined) continue;
      json += first ? station : `,${station}`;
      first = false;
    }
    return `${json}]}`;
  }

  /** The station status object (parsed), for internal consumers. */
  station(hrsId: string): Record<string, unknown> | undefined {
    const json = this.stationJson(hrsId);
    return json === undefined ? undefined : (JSON.parse(json) as Record<string, unknown>);
  }

  /** The freshness of one station and category; null when no reading is held. */
  freshness(hrsId: string, category: Category): Freshness | null {
    const actor = this.stations.get(hrsId)?.get(category);
    return actor ? actor.freshness : null;
  }

  /**
   * The published reading of one station and category with its freshness: what the export v1.1
   * summary is computed from. Undefined when no reading is held or none may be published (no live
   * source any more).
   */
  published(hrsId: string, category: Category): { reading: PublishedReading; freshness: Freshness } | undefined {
    const actor = this.stations.get(hrsId)?.get(category);
    if (!actor || !this.directory.hasLiveSource(hrsId, category)) return undefined;
    return { reading: actor.reading, freshness: actor.freshness };
  }

  /** Every category of a station that holds a reading, with its freshness and times (admins' view). */
  categories(hrsId: string): Partial<Record<Category, CategoryView>> {
    const out: Partial<Record<Category, CategoryView>> = {};
    for (const [category, actor] of this.stations.get(hrsId) ?? []) {
      out[category] = {
        freshness: actor.freshness,
        datetime: actor.reading.datetime,
        receivedAt: actor.reading.receivedAt,
        originatorId: actor.originatorId,
        section: JSON.parse(this.sectionJson(actor)) as Record<string, unknown> | null,
      };
    }
    return out;
  }

  /** How many actors are held. */
  get size(): number {
    let n = 0;
    for (const actors of this.stations.values()) n += actors.size;
    return n;
  }

  /** How many actors are held in each freshness (for metrics: counted when asked, one pass). */
  countByFreshness(): Record<Freshness, number> {
    const counts: Record<Freshness, number> = { fresh: 0, stale: 0, unknown: 0 };
    for (const actors of this.stations.values()) for (const actor of actors.values()) counts[actor.freshness]++;
    return counts;
  }

  /** Stops every timer; the object serves reads still but changes no more. */
  close(): void {
    this.closed = true;
    this.deadlines.close();
  }

  private apply(signal: PublishedSignal, announce: boolean): boolean {
    if (this.closed) return false;
    const station = this.directory.station(signal.hrsId);
    if (!station) return false;
    let actors = this.stations.get(signal.hrsId);
    const actor = actors?.get(signal.category);
    const reading: PublishedReading = signal.reading ?? { datetime: signal.datetime, receivedAt: signal.receivedAt, payload: signal.payload };
    const input: FreshnessInput = { policy: this.policies[signal.category], datetime: signal.datetime, now: this.now() };
    // The machine's own step for a signal, without stepping it (see FreshnessRunner.classify): the
    // snapshot is made from `entered` when a deadline needs it.
    const { freshness, pending } = this.runner.classify(input);
    if (actor) {
      if (signal.datetime < actor.reading.datetime) return false;
      const previous = actor.freshness;
      actor.reading = reading;
      actor.originatorId = signal.originatorId;
      actor.snapshot = undefined;
      actor.enteredAt = input.now;
      actor.freshness = freshness;
      if (pending) {
        actor.deadline = pending.deadline;
        actor.due = pending.due;
        this.deadlines.arm(actor); // moves it when it was armed
      } else this.disarm(actor);
      this.refresh(actor, announce ? 'signal' : undefined, previous, true);
      return true;
    }
    if (!actors) {
      actors = new Map();
      this.stations.set(signal.hrsId, actors);
    }
    const created: Actor = {
      hrsId: signal.hrsId,
      category: signal.category,
      reading,
      originatorId: signal.originatorId,
      snapshot: undefined,
      enteredAt: input.now,
      freshness,
      deadline: pending?.deadline,
      due: pending?.due ?? 0,
      heapIndex: -1,
      json: undefined,
    };
    actors.set(signal.category, created);
    this.arm(created);
    this.refresh(created, announce ? 'signal' : undefined, null, true);
    return true;
  }

  /** The actor's machine snapshot, made from its last signal when none was made since (see FreshnessRunner.classify). */
  private snapshotOf(actor: Actor): FreshnessSnapshot {
    return (actor.snapshot ??= this.runner.start({ policy: this.policies[actor.category], datetime: actor.reading.datetime, now: actor.enteredAt }).snapshot);
  }

  /** Takes a machine step: the new snapshot, cancelled and newly scheduled delayed events. */
  private step(actor: Actor, step: Step): void {
    actor.snapshot = step.snapshot;
    actor.freshness = freshnessOf(step.snapshot);
    if (actor.deadline && step.cancel.includes(actor.deadline)) this.disarm(actor);
    for (const delayed of step.schedule) {
      this.disarm(actor);
      actor.deadline = delayed.deadline;
      actor.due = delayed.due;
      this.arm(actor);
    }
  }

  private disarm(actor: Actor): void {
    this.deadlines.disarm(actor);
    actor.deadline = undefined;
  }

  private arm(actor: Actor): void {
    if (actor.deadline) this.deadlines.arm(actor);
  }

  private fire(actor: Actor): void {
    const deadline = actor.deadline!;
    actor.deadline = undefined;
    const previous = actor.freshness;
    this.step(actor, this.runner.deliver(this.snapshotOf(actor), deadline));
    this.refresh(actor, 'freshness', previous, false);
  }

  /**
   * Recomputes the actor's published section and tells the change stream when the section or the
   * freshness changed (for a signal always: a new reading is news even when equal). With nobody
   * listening nothing is serialised here; the next read does it. A section nobody has serialised
   * since its last change was seen by nobody, so only a freshness change makes it news.
   */
  private refresh(actor: Actor, cause: StatusChange['cause'] | undefined, previous: Freshness | null, always: boolean): void {
    const freshness = actor.freshness;
    this.cache.delete(actor.hrsId);
    this.changes++;
    if (actor.category === 'availability') this.availabilityChanges++;
    if (freshness !== previous && previous !== null) {
      this.log.debug({ hrs_id: actor.hrsId, category: actor.category, from: previous, to: freshness }, 'status freshness changed');
    }
    if (!cause || !this.stream.listening) {
      actor.json = undefined;
      return;
    }
    if (always) {
      // News whatever it says: the section is made only when a listener reads it (the admins' feed).
      actor.json = undefined;
      this.stream.emit(this.change(actor, cause, previous, freshness));
      return;
    }
    const section = this.section(actor, freshness);
    const json = JSON.stringify(section);
    const changed = freshness !== previous || (actor.json !== undefined && json !== actor.json);
    actor.json = json;
    if (changed) this.stream.emit(this.change(actor, cause, previous, freshness, section));
  }

  /** The change as listeners get it (see `changeOf`). */
  private change(actor: Actor, cause: StatusChange['cause'], previous: Freshness | null, freshness: Freshness | null, section?: StatusChange['section']): StatusChange {
    return changeOf(actor, (a, f) => this.section(a, f), cause, previous, freshness, section);
  }

  private sectionJson(actor: Actor): string {
    return (actor.json ??= JSON.stringify(this.section(actor, actor.freshness)));
  }

  private section(actor: Actor, freshness: Freshness): Record<string, unknown> | null {
    if (freshness === 'unknown') return null;
    if (!this.directory.hasLiveSource(actor.hrsId, actor.category)) return null;
    const station = this.directory.station(actor.hrsId);
    if (!station) return null;
    return buildSection(actor.category, actor.reading, station.layout, freshness);
  }

  /**
   * After a registry reload: drop removed stations, republish what layouts and assignments now allow,
   * for the stations the reload changed (the composition root calls it from the registry's reload).
   */
  stationsChanged(changed: ReadonlySet<string>): void {
    if (changed.size === 0) return;
    this.sortedIds = undefined;
    this.changes++;
    this.availabilityChanges++;
    for (const hrsId of changed) {
      this.cache.delete(hrsId);
      const actors = this.stations.get(hrsId);
      if (!actors) continue;
      if (!this.directory.station(hrsId)) {
        this.stations.delete(hrsId);
        for (const actor of actors.values()) {
          this.disarm(actor);
          this.stream.emit(this.change(actor, 'removed', actor.freshness, null, null));
        }
        continue;
      }
      for (const actor of actors.values()) this.refresh(actor, 'registry', actor.freshness, false);
    }
  }
}
