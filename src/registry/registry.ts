import type { RegistryRows, RegistryStationRow } from '../../db/queries/registry.js';
import type { ConfirmedLayout, ExportListVersion, OriginatorLookup, StationDirectory, StationEntry } from '../domain/stations.js';
import type { AssignmentState, CallLogMode } from '../domain/vocabulary.js';
import { holidayCountry } from '../domain/opening-hours.js';
import { coordinatesOf } from '../domain/coordinates.js';

/** Hears of a completed reload; returns the promise of work it started from it, if any. */
export type ReloadListener = (changed: ReadonlySet<string>) => unknown;

/**
 * The registry in memory, as the request path needs it: stations with their confirmed layouts,
 * assignments and originators' call-log modes. Replaced whole on each reload, so readers always
 * see one consistent version. The rows come from a reader function (in service,
 * `() => readRegistryRows(sql)`), so the cache can be built from rows held in memory as well.
 */
export class Registry implements StationDirectory, OriginatorLookup {
  private stations = new Map<string, Held>();
  /** Assignments read for a station the station rows did not hold yet (the reads are side by side, not one snapshot). */
  private strayAssignments = new Map<string, AssignmentState>();
  private callLogModes = new Map<string, CallLogMode>();
  private readonly listeners: ReloadListener[] = [];
  private loading: Promise<void> | undefined;
  /** What the last reload's listeners started (reads of their own), settled or not. */
  private following: Promise<unknown> = Promise.resolve();
  private reloads = 0;
  private loadedUs = 0;
  private listVersion: ExportListVersion | undefined;
  private again = false;

  constructor(private readonly readRows: () => Promise<RegistryRows>) {}

  station(hrsId: string): StationEntry | undefined {
    return this.stations.get(hrsId)?.entry;
  }

  /** How many stations are held. */
  get size(): number {
    return this.stations.size;
  }

  stationIds(): IterableIterator<string> {
    return this.stations.keys();
  }

  assignment(originatorId: string, hrsId: string, signalType: string): AssignmentState | undefined {
    const held = this.stations.get(hrsId);
    if (held) {
      for (const a of held.assignments) if (a.originatorId === originatorId && a.signalType === signalType) return a.state;
      return undefined;
    }
    return this.strayAssignments.size === 0 ? undefined : this.strayAssignments.get(`${originatorId}\u0000${hrsId}\u0000${signalType}`);
  }

  /** Moves with every completed reload (what is derived from the registry can be kept until it moves). */
  get version(): number {
    return this.reloads;
  }

  /**
   * The registry's version in PostgreSQL (microseconds) when the loaded rows were read: they reflect it
   * or a later one. PostgreSQL past it means a change not loaded yet (its announcement still on its way).
   */
  get loadedVersionUs(): number {
    return this.loadedUs;
  }

  /**
   * Export v2's station list as the loaded rows state it: the station set's version, the newest
   * production station's, and the change log's head read before them. Undefined for rows held in
   * memory (they carry no versions): readers then ask PostgreSQL.
   */
  get exportListVersion(): ExportListVersion | undefined {
    return this.listVersion;
  }

  /** Whether some originator is live for this station and signal type (so its signals are published). */
  hasLiveSource(hrsId: string, signalType: string): boolean {
    return this.stations.get(hrsId)?.liveTypes.includes(signalType) === true;
  }

  /**
   * Called after every completed reload, with the new version in place and the ids of the stations
   * added, removed, or whose confirmed layout or live sources changed. A listener that starts work of
   * its own (a read of the rows it serves from) returns its promise: `reloadFollowed` waits for it.
   */
  onReload(listener: ReloadListener): void {
    this.listeners.push(listener);
  }

  /**
   * Settles when a reload under way has completed and what its listeners started has ended, done or
   * failed (the public map's static fields, DATEX II's rows); never rejects. The reload's own promise
   * settles before that, so an edit is answered without waiting for the views derived from it.
   */
  async reloadFollowed(): Promise<void> {
    while (this.loading) await this.loading.catch(() => {});
    await this.following;
  }

  callLogMode(originatorId: string): CallLogMode {
    return this.callLogModes.get(originatorId) ?? 'errors';
  }

  /** Reads everything again; concurrent calls coalesce into at most one more read. */
  reload(): Promise<void> {
    if (this.loading) {
      this.again = true;
      return this.loading;
    }
    this.loading = (async () => {
      try {
        do {
          this.again = false;
          await this.read();
        } while (this.again);
      } finally {
        this.loading = undefined;
      }
    })();
    return this.loading;
  }

  private async read(): Promise<void> {
    const { stations, nozzles, storages, products, assignments, originators, versionUs, changeLogHead } = await this.readRows();
    // Ids, option lists and fuel-type lists repeat across stations (D1, N1, S1, ["700"]): one copy of each.
    const intern = new Interner();
    const next = new Map<string, Held>();
    for (const s of stations) {
      const entry: StationEntry = {
        hrsId: s.hrs_id,
        name: s.name,
        heavyDuty: s.heavy_duty,
        // A confirmed station's is set below, from its parts' rows.
        layout: null,
        v1FuelTypes: intern.list(s.v1_fuel_types ?? []),
        openingHours: s.opening_hours ?? null,
        timeZone: s.time_zone === undefined || s.time_zone === null ? null : intern.id(s.time_zone),
        holidayCountry: holidayCountry(s.country),
        sandbox: s.sandbox === true,
        point: validPoint(s.place),
        ...(s.modified_us === undefined ? {} : { modifiedUs: Number(s.modified_us) }),
      };
      next.set(s.hrs_id, { entry, assignments: NO_ASSIGNMENTS, liveTypes: NO_TYPES });
    }
    // A layout is made once per combination of the rows' parts that stations share, not per station:
    // each confirmed station first collects the indices of its parts' rows (nozzles, then storages, then
    // products, in the rows' order), and stations with the same indices get the same layout object.
    const partsOf = new Map<string, number[]>();
    for (const s of stations) if (s.confirmed) partsOf.set(s.hrs_id, []);
    const collect = (hrsIds: readonly string[], index: number) => {
      for (const hrsId of hrsIds) partsOf.get(hrsId)?.push(index);
    };
    nozzles.forEach((group, g) => collect(group.hrs_ids, g));
    storages.forEach((group, j) => collect(group.hrs_ids, nozzles.length + j));
    products.forEach((group, k) => collect(group.hrs_ids, nozzles.length + storages.length + k));
    const nozzleParts = nozzles.map((group) => {
      const dispenser = intern.id(group.dispenser);
      const nozzle = group.nozzle === null ? null : intern.id(group.nozzle);
      return { dispenser, nozzle, part: nozzle === null ? undefined : { dispenser, fuellingOptions: intern.list(group.options) as string[] } };
    });
    const storageIds = storages.map((group) => intern.id(group.external_id));
    const productIds = products.map((group) => intern.id(group.external_id));
    const layoutOf = (indices: readonly number[]): ConfirmedLayout => {
      const layout: ConfirmedLayout = { nozzles: new Map(), dispensers: new Map(), storages: new Set(), products: new Set() };
      for (const index of indices) {
        if (index < nozzles.length) {
          const { dispenser, nozzle, part } = nozzleParts[index]!;
          const list = layout.dispensers.get(dispenser) ?? [];
          layout.dispensers.set(dispenser, list);
          if (nozzle === null) continue;
          list.push(nozzle);
          layout.nozzles.set(nozzle, part!);
        } else if (index < nozzles.length + storages.length) {
          layout.storages.add(storageIds[index - nozzles.length]!);
        } else {
          layout.products.add(productIds[index - nozzles.length - storages.length]!);
        }
      }
      // Stations of one make share a layout: one copy of each (layouts are never changed once read).
      return intern.layout(layout);
    };
    for (const [hrsId, layout] of perCombination(partsOf, layoutOf)) next.get(hrsId)!.entry.layout = layout;
    // Likewise the assignments: each station collects the indices of its assignment rows, and one list
    // of assignments (and of live signal types) is made per combination.
    const stray = new Map<string, AssignmentState>();
    const assignmentRows = assignments.map((group) => {
      const assignment = intern.assignment(group.originator_id, group.signal_type, group.state);
      // A live v1 originator is a live availability source: its signals are availability readings.
      return { assignment, liveType: group.state === 'live' ? (assignment.signalType === 'v1' ? 'availability' : assignment.signalType) : undefined };
    });
    const assignedOf = new Map<string, number[]>();
    assignments.forEach((group, g) => {
      for (const hrsId of group.hrs_ids) {
        if (!next.has(hrsId)) {
          stray.set(`${group.originator_id}\u0000${hrsId}\u0000${group.signal_type}`, group.state);
          continue;
        }
        const indices = assignedOf.get(hrsId);
        if (indices) indices.push(g);
        else assignedOf.set(hrsId, [g]);
      }
    });
    const assignedListsOf = (indices: readonly number[]) => {
      const live = new Set<string>();
      for (const g of indices) if (assignmentRows[g]!.liveType !== undefined) live.add(assignmentRows[g]!.liveType!);
      return {
        // An originator's stations share their list of assignments: one copy of each list.
        assignments: intern.assignments(indices.map((g) => assignmentRows[g]!.assignment)),
        liveTypes: live.size === 0 ? NO_TYPES : intern.list([...live].sort()),
      };
    };
    for (const [hrsId, known] of perCombination(assignedOf, assignedListsOf)) {
      const held = next.get(hrsId)!;
      held.assignments = known.assignments;
      held.liveTypes = known.liveTypes;
    }
    const previous = this.stations;
    const changed = new Set<string>();
    for (const [hrsId, held] of next) {
      const before = previous.get(hrsId);
      if (!before || !sameStatusInputs(before, held)) changed.add(hrsId);
    }
    for (const hrsId of previous.keys()) if (!next.has(hrsId)) changed.add(hrsId);
    this.stations = next;
    this.strayAssignments = stray;
    this.reloads++;
    this.loadedUs = versionUs ?? Number.POSITIVE_INFINITY;
    this.listVersion = listVersionOf(stations, versionUs, changeLogHead);
    this.callLogModes = new Map(originators.map((o) => [o.id, o.call_log_mode]));
    this.following = Promise.allSettled(this.listeners.map((listener) => listener(changed)));
  }
}

/**
 * Each station's value made from its rows' indices, made once per combination of indices (stations
 * with the same rows share the one value).
 */
function* perCombination<T>(indicesOf: ReadonlyMap<string, readonly number[]>, make: (indices: readonly number[]) => T): Generator<[string, T]> {
  const made = new Map<string, T>();
  for (const [hrsId, indices] of indicesOf) {
    const key = indices.join(',');
    let value = made.get(key);
    if (value === undefined) {
      value = make(indices);
      made.set(key, value);
    }
    yield [hrsId, value];
  }
}

/** One station as held: its entry, its assignments and the signal types some originator is live for (sorted). */
interface Held {
  entry: StationEntry;
  assignments: readonly Assignment[];
  liveTypes: readonly string[];
}

interface Assignment {
  readonly originatorId: string;
  readonly signalType: string;
  readonly state: AssignmentState;
}

const NO_TYPES: readonly string[] = Object.freeze([]);
const NO_ASSIGNMENTS: readonly Assignment[] = Object.freeze([]);

/**
 * One copy of each id, list of ids, assignment, list of assignments and layout: what repeats across
 * 100,000 stations is held once (shared, so never changed in place).
 */
class Interner {
  private readonly ids = new Map<string, string>();
  private readonly lists = new Map<string, readonly string[]>();
  private readonly assignmentsByKey = new Map<string, Assignment>();
  private readonly assignmentLists = new Map<string, readonly Assignment[]>();
  private readonly layouts = new Map<string, ConfirmedLayout>();

  assignment(originatorId: string, signalType: string, state: string): Assignment {
    const key = `${originatorId}\u0000${signalType}\u0000${state}`;
    let known = this.assignmentsByKey.get(key);
    if (!known) {
      known = Object.freeze({ originatorId: this.id(originatorId), signalType: this.id(signalType), state: this.id(state) as AssignmentState });
      this.assignmentsByKey.set(key, known);
    }
    return known;
  }

  assignments(list: readonly Assignment[]): readonly Assignment[] {
    if (list.length === 0) return NO_ASSIGNMENTS;
    const key = list.map((a) => `${a.originatorId}\u0000${a.signalType}\u0000${a.state}`).join('\u0001');
    let known = this.assignmentLists.get(key);
    if (!known) {
      known = Object.freeze([...list]);
      this.assignmentLists.set(key, known);
    }
    return known;
  }

  layout(layout: ConfirmedLayout): ConfirmedLayout {
    const parts: string[] = [];
    for (const [dispenser, nozzles] of layout.dispensers) {
      parts.push(`d${dispenser}`);
      for (const nozzle of nozzles) parts.push(`n${nozzle}`, `o${layout.nozzles.get(nozzle)?.fuellingOptions.join('\u0002') ?? ''}`);
    }
    parts.push('s', ...[...layout.storages].sort(), 'p', ...[...layout.products].sort());
    const key = parts.join('\u0001');
    const known = this.layouts.get(key);
    if (known) return known;
    this.layouts.set(key, layout);
    return layout;
  }

  id(value: string): string {
    const known = this.ids.get(value);
    if (known !== undefined) return known;
    this.ids.set(value, value);
    return value;
  }

  list(values: readonly string[]): readonly string[] {
    if (values.length === 0) return NO_TYPES;
    const key = values.join('\u0000');
    const known = this.lists.get(key);
    if (known) return known;
    const list = Object.freeze(values.map((v) => this.id(v)));
    this.lists.set(key, list);
    return list;
  }
}

/**
 * Whether what a station's published status depends on is unchanged between two reads: its live
 * sources, opening hours and zone, holiday country, v1 fuel types, and its layout's nozzles, storages
 * and products (compared as sets).
 */
function sameStatusInputs(a: Held, b: Held): boolean {
  const x = a.entry;
  const y = b.entry;
  if (!sameList(a.liveTypes, b.liveTypes)) return false;
  if ((x.openingHours ?? '') !== (y.openingHours ?? '') || (x.timeZone ?? '') !== (y.timeZone ?? '') || (x.holidayCountry ?? '') !== (y.holidayCountry ?? '')) return false;
  if (!sameList(x.v1FuelTypes ?? NO_TYPES, y.v1FuelTypes ?? NO_TYPES)) return false;
  if (!x.layout || !y.layout) return x.layout === y.layout;
  return sameSet(x.layout.nozzles.keys(), y.layout.nozzles) && sameSet(x.layout.storages.values(), y.layout.storages) && sameSet(x.layout.products.values(), y.layout.products);
}

function sameList(a: readonly string[], b: readonly string[]): boolean {
  if (a === b) return true;
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

function sameSet(a: IterableIterator<string>, b: { has(key: string): boolean; size: number }): boolean {
  let n = 0;
  for (const key of a) {
    if (!b.has(key)) return false;
    n++;
  }
  return n === b.size;
}

function listVersionOf(stations: readonly RegistryStationRow[], versionUs: number | undefined, changeLogHead: number | undefined): ExportListVersion | undefined {
  if (versionUs === undefined || changeLogHead === undefined || stations.some((s) => s.modified_us === undefined)) return undefined;
  let newestUs = 0;
  for (const s of stations) if (s.sandbox !== true) newestUs = Math.max(newestUs, Number(s.modified_us));
  // Without stations the version read first is the set's alone.
  const setModifiedUs = stations.length > 0 ? Number(stations[0]!.set_us ?? 0) : versionUs;
  return { setModifiedUs, newestUs, changeLogHead };
}

/** The station's coordinates when its details give a valid WGS 84 point, else null. */
function validPoint(place: Record<string, unknown> | null | undefined): { lat: number; lon: number } | null {
  if (!place) return null;
  const point = coordinatesOf(place);
  if (!point || Math.abs(point.lat) > 90 || Math.abs(point.lon) > 180) return null;
  return point;
}
