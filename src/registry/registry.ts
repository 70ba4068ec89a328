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
  private stations = new Map<string, StationEntry>();
  private assignments = new Map<string, AssignmentState>();
  private callLogModes = new Map<string, CallLogMode>();
  /** `hrs_id NUL signal type` of every station and type some originator is live for. */
  private liveSources = new Set<string>();
  private readonly listeners: ((changed: ReadonlySet<string>) => void)[] = [];
  /** Per station, a fingerprint of what the published status depends on (layout, live sources, opening hours and zone, v1 fuel types). */
  private fingerprints = new Map<string, string>();
  private loading: Promise<void> | undefined;
  private reloads = 0;
  private loadedUs = 0;
  private listVersion: ExportListVersion | undefined;
  private again = false;

  constructor(private readonly readRows: () => Promise<RegistryRows>) {}

  station(hrsId: string): StationEntry | undefined {
    return this.stations.get(hrsId);
  }

  stationIds(): IterableIterator<string> {
    return this.stations.keys();
  }

  assignment(originatorId: string, hrsId: string, signalType: string): AssignmentState | undefined {
    return this.assignments.get(`${originatorId}\u0000${hrsId}\u0000${signalType}`);
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
    return this.liveSources.has(`${hrsId}\u0000${signalType}`);
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
    const next = new Map<string, StationEntry>();
    for (const s of stations) {
      const layout: ConfirmedLayout | null = s.confirmed
        ? { nozzles: new Map(), dispensers: new Map(), storages: new Set(), products: new Set() }
        : null;
      next.set(s.hrs_id, {
        hrsId: s.hrs_id,
        name: s.name,
        heavyDuty: s.heavy_duty,
        layout,
        v1FuelTypes: s.v1_fuel_types ?? [],
        openingHours: s.opening_hours ?? null,
        timeZone: s.time_zone ?? null,
        holidayCountry: holidayCountry(s.country),
        sandbox: s.sandbox === true,
        point: validPoint(s.place),
        ...(s.modified_us === undefined ? {} : { modifiedUs: Number(s.modified_us) }),
      });
    }
    for (const row of nozzles) {
      const layout = next.get(row.hrs_id)?.layout;
      if (!layout) continue;
      const list = layout.dispensers.get(row.dispenser) ?? [];
      layout.dispensers.set(row.dispenser, list);
      if (row.nozzle === null) continue;
      list.push(row.nozzle);
      layout.nozzles.set(row.nozzle, { dispenser: row.dispenser, fuellingOptions: row.options });
    }
    for (const row of storages) next.get(row.hrs_id)?.layout?.storages.add(row.external_id);
    for (const row of products) next.get(row.hrs_id)?.layout?.products.add(row.external_id);
    this.stations = next;
    this.reloads++;
    this.loadedUs = versionUs ?? Number.POSITIVE_INFINITY;
    this.listVersion = listVersionOf(stations, versionUs, changeLogHead);
    this.assignments = new Map(assignments.map((a) => [`${a.originator_id}\u0000${a.hrs_id}\u0000${a.signal_type}`, a.state]));
    this.callLogModes = new Map(originators.map((o) => [o.id, o.call_log_mode]));
    // A live v1 originator is a live availability source: its signals are availability readings.
    const live = assignments
      .filter((a) => a.state === 'live')
      .map((a) => (a.signal_type === 'v1' ? { ...a, signal_type: 'availability' } : a));
    this.liveSources = new Set(live.map((a) => `${a.hrs_id}\u0000${a.signal_type}`));
    const liveTypes = new Map<string, string[]>();
    for (const a of live) liveTypes.set(a.hrs_id, [...(liveTypes.get(a.hrs_id) ?? []), a.signal_type]);
    const fingerprints = new Map<string, string>();
    const changed = new Set<string>();
    for (const [hrsId, entry] of next) {
      const print = fingerprint(entry, liveTypes.get(hrsId) ?? []);
      fingerprints.set(hrsId, print);
      if (this.fingerprints.get(hrsId) !== print) changed.add(hrsId);
    }
    for (const hrsId of this.fingerprints.keys()) if (!next.has(hrsId)) changed.add(hrsId);
    this.fingerprints = fingerprints;
    for (const listener of this.listeners) listener(changed);
  }
}

function listVersionOf(stations: readonly RegistryStationRow[], versionUs: number | undefined, changeLogHead: number | undefined): ExportListVersion | undefined {
  if (versionUs === undefined || changeLogHead === undefined || stations.some((s) => s.modified_us === undefined)) return undefined;
  let newestUs = 0;
  for (const s of stations) if (s.sandbox !== true) newestUs = Math.max(newestUs, Number(s.modified_us));
  // Without stations the version read first is the set's alone.
  const setModifiedUs = stations.length > 0 ? Number(stations[0]!.set_us ?? 0) : versionUs;
  return { setModifiedUs, newestUs, changeLogHead };
}

function fingerprint(entry: StationEntry, liveTypes: string[]): string {
  const layout = entry.layout;
  // Opening hours and zone: the export summary and the opening clock follow them.
  const parts = [liveTypes.sort().join(','), entry.openingHours ?? '', entry.timeZone ?? '', entry.holidayCountry ?? '', (entry.v1FuelTypes ?? []).join(',')];
  if (layout) {
    parts.push([...layout.nozzles.keys()].sort().join(','), [...layout.storages].sort().join(','), [...layout.products].sort().join(','));
  }
  return parts.join('\u0001');
}

/** The station's coordinates when its details give a valid WGS 84 point, else null. */
function validPoint(place: Record<string, unknown> | null | undefined): { lat: number; lon: number } | null {
  if (!place) return null;
  const point = coordinatesOf(place);
  if (!point || Math.abs(point.lat) > 90 || Math.abs(point.lon) > 180) return null;
  return point;
}
