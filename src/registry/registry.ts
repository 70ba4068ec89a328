import type { RegistryRows, RegistryStationRow } from '../../db/queries/registry.js';
import type { ConfirmedLayout, ExportListVersion, OriginatorLookup, StationDirectory, StationEntry } from '../domain/stations.js';
import type { AssignmentState, CallLogMode } from '../domain/vocabulary.js';
import { holidayCountry } from '../domain/opening-hours.js';
import { coordinatesOf } from '../domain/coordinates.js';

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
  private readonly listeners: ((changed: ReadonlySet<string>) => void)[] = [];
  private loading: Promise<void> | undefined;
  private reloads = 0;
  private loadedUs = 0;
  private listVersion: ExportListVersion | undefined;
  private again = false;

  constructor(private readonly readRows: () => Promise<RegistryRows>) {}

  station(hrsId: string): StationEntry | undefined {
    return this.stations.get(hrsId)?.entry;
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
   * added, removed, or whose confirmed layout or live sources changed.
   */
  onReload(listener: (changed: ReadonlySet<string>) => void): void {
    this.listeners.push(listener);
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
      const layout: ConfirmedLayout | null = s.confirmed
        ? { nozzles: new Map(), dispensers: new Map(), storages: new Set(), products: new Set() }
        : null;
      const entry: StationEntry = {
        hrsId: s.hrs_id,
        name: s.name,
        heavyDuty: s.heavy_duty,
        layout,
        v1FuelTypes: intern.list(s.v1_fuel_types ?? []),
        openingHours: s.opening_hours ?? null,
        timeZone: s.time_zone === undefined || s.time_zone === null ? null : intern.id(s.time_zone),
        holidayCountry: holidayCountry(s.country),
        sandbox: s.sandbox === true,
        point: validPoint(s.place),
        ...(s.modified_us === undefined ? {} : { modifiedUs: Number(s.modified_us) }),
      };
      next.set(s.hrs_id, { entry, assignments: [], liveTypes: NO_TYPES });
    }
    for (const row of nozzles) {
      const layout = next.get(row.hrs_id)?.entry.layout;
      if (!layout) continue;
      const dispenser = intern.id(row.dispenser);
      const list = layout.dispensers.get(dispenser) ?? [];
      layout.dispensers.set(dispenser, list);
      if (row.nozzle === null) continue;
      const nozzle = intern.id(row.nozzle);
      list.push(nozzle);
      layout.nozzles.set(nozzle, { dispenser, fuellingOptions: intern.list(row.options) as string[] });
    }
    for (const row of storages) next.get(row.hrs_id)?.entry.layout?.storages.add(intern.id(row.external_id));
    for (const row of products) next.get(row.hrs_id)?.entry.layout?.products.add(intern.id(row.external_id));
    const stray = new Map<string, AssignmentState>();
    for (const a of assignments) {
      const held = next.get(a.hrs_id);
      if (!held) {
        stray.set(`${a.originator_id}\u0000${a.hrs_id}\u0000${a.signal_type}`, a.state);
        continue;
      }
      const signalType = intern.id(a.signal_type);
      held.assignments.push({ originatorId: intern.id(a.originator_id), signalType, state: intern.id(a.state) as AssignmentState });
      if (a.state !== 'live') continue;
      // A live v1 originator is a live availability source: its signals are availability readings.
      const type = signalType === 'v1' ? 'availability' : signalType;
      if (!held.liveTypes.includes(type)) held.liveTypes = intern.list([...held.liveTypes, type].sort());
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
    for (const listener of this.listeners) listener(changed);
  }
}

/** One station as held: its entry, its assignments and the signal types some originator is live for (sorted). */
interface Held {
  entry: StationEntry;
  assignments: { originatorId: string; signalType: string; state: AssignmentState }[];
  liveTypes: readonly string[];
}

const NO_TYPES: readonly string[] = Object.freeze([]);

/** One copy of each id and each list of ids (lists are shared, so they are never changed in place). */
class Interner {
  private readonly ids = new Map<string, string>();
  private readonly lists = new Map<string, readonly string[]>();

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
