import { isOpen, nextChange } from '../src/domain/opening-hours.js';
import type { StationDirectory, StationEntry } from '../src/domain/stations.js';
import { DeadlineTimer } from './deadline-timer.js';

/**
 * Opening and closing minutes: every station with opening hours has its next change of open/closed
 * on one shared timer (the deadline heap the freshness actors use), so the admins' feed hears of a
 * station opening or closing when it happens, without a signal. The export summary itself never
 * waits for this: it evaluates the opening hours at each request.
 */

export interface OpeningChange {
  hrsId: string;
  /** Open from now on (true), or closed. */
  open: boolean;
  /** When it changed, epoch ms. */
  at: number;
}

export type OpeningListener = (change: OpeningChange) => void;

/** Next changes kept for reuse at most (see OpeningClock.nextChange): past it they are forgotten at once. */
const MAX_COMPUTED = 10_000;

interface Entry {
  readonly hrsId: string;
  due: number;
  heapIndex: number;
}

export class OpeningClock {
  private readonly entries = new Map<string, Entry>();
  private readonly listeners = new Set<OpeningListener>();
  private readonly timer: DeadlineTimer<Entry>;
  /** Next changes computed lately, by hours, zone, country and instant (see `nextChange`). */
  private readonly computed = new Map<string, Date | null>();

  constructor(
    private readonly directory: StationDirectory,
    private readonly now: () => number = Date.now,
  ) {
    this.timer = new DeadlineTimer<Entry>((entry) => entry.due, now, (entry) => this.fire(entry));
  }

  onChange(listener: OpeningListener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** Schedules every station's next change. */
  start(): void {
    this.stationsChanged(new Set(this.directory.stationIds()));
  }

  /** After a registry reload: the changed stations' next changes, from their current hours. */
  stationsChanged(changed: ReadonlySet<string>): void {
    const after = this.now();
    for (const hrsId of changed) this.schedule(hrsId, after);
  }

  /** The earliest opening or closing to come (epoch ms); undefined when no station has one. */
  nextDue(): number | undefined {
    let first: number | undefined;
    for (const entry of this.entries.values()) if (first === undefined || entry.due < first) first = entry.due;
    return first;
  }

  /** Whether a station is open now (a station without opening hours always is). */
  isOpen(hrsId: string): boolean {
    const station = this.directory.station(hrsId);
    return station === undefined || openAt(station, new Date(this.now()));
  }

  close(): void {
    this.timer.close();
    this.entries.clear();
    this.listeners.clear();
  }

  /** `after`: the change must come later than this (epoch ms); now by default. */
  private schedule(hrsId: string, after = this.now()): void {
    const station = this.directory.station(hrsId);
    const next = station ? this.nextChange(station, after) : null;
    let entry = this.entries.get(hrsId);
    if (next === null) {
      if (entry) this.timer.disarm(entry);
      this.entries.delete(hrsId);
      return;
    }
    if (!entry) {
      entry = { hrsId, due: 0, heapIndex: -1 };
      this.entries.set(hrsId, entry);
    }
    entry.due = next.getTime();
    this.timer.arm(entry);
  }

  /**
   * The station's next change after `after`, computed once for every station with the same hours, zone
   * and holiday country at the same instant (at a start, and when a minute fires for many stations at
   * once): with 100,000 stations and a few dozen kinds of hours, a few dozen computings, not 100,000.
   */
  private nextChange(station: StationEntry, after: number): Date | null {
    const key = `${station.openingHours ?? ''}\u0000${station.timeZone ?? ''}\u0000${station.holidayCountry ?? ''}\u0000${after}`;
    let next = this.computed.get(key);
    if (next === undefined) {
      next = nextChange(station.openingHours, station.timeZone, new Date(after), station.holidayCountry);
      if (this.computed.size >= MAX_COMPUTED) this.computed.clear();
      this.computed.set(key, next);
    }
    return next;
  }

  private fire(entry: Entry): void {
    const station = this.directory.station(entry.hrsId);
    this.entries.delete(entry.hrsId);
    if (!station) return;
    const at = entry.due;
    const change = { hrsId: entry.hrsId, open: openAt(station, new Date(Math.max(at, this.now()))), at };
    for (const listener of this.listeners) listener(change);
    // Strictly after the change that fired, so one minute never fires twice.
    this.schedule(entry.hrsId, Math.max(at, this.now()) + 1);
  }
}

function openAt(station: StationEntry, at: Date): boolean {
  return isOpen(station.openingHours, station.timeZone, at, station.holidayCountry);
}
