/**
 * A station as the rules see it: its confirmed layout and what signals are checked against. Below
 * the signal categories (./categories/), which resolve signals against it, and the ports of
 * ./stations.ts, which name the categories.
 */

/** A station's operator-confirmed layout as signals resolve against it. */
export interface ConfirmedLayout {
  /** nozzle external id → its dispenser and fuelling options */
  nozzles: Map<string, { dispenser: string; fuellingOptions: string[] }>;
  /** dispenser external id → its nozzles, in layout order */
  dispensers: Map<string, string[]>;
  storages: Set<string>;
  products: Set<string>;
}

export interface StationEntry {
  hrsId: string;
  name: string;
  heavyDuty: boolean;
  /** null until the operator has confirmed a layout; drafts are never here. */
  layout: ConfirmedLayout | null;
  /**
   * The station's registered v1 fuel types (`700car`, `350car`, `350bus`), which import v1 / v1.1
   * signals are checked against beside the confirmed layout. Left out: none registered.
   */
  v1FuelTypes?: readonly string[];
  /** The station's opening hours (OpenStreetMap syntax), null when not given; see opening-hours.ts. */
  openingHours?: string | null;
  /** The IANA time zone its opening hours are read in (named in the registry or found at its coordinates); null when unknown. */
  timeZone?: string | null;
  /** The country whose public holidays `PH` in its opening hours means (ISO 3166-1 alpha-2, lowercase); null when unknown. */
  holidayCountry?: string | null;
  /** One of the export v1.1 sandbox's sample stations: shown to the sandbox token only (see sandbox.ts). */
  sandbox?: boolean;
  /**
   * Where it stands (WGS 84), read from its details (./coordinates.ts); left out or null when the
   * registry gives no valid coordinates (latitude within ±90, longitude within ±180).
   */
  point?: { lat: number; lon: number } | null;
  /**
   * Its version as export v2 states it (`static_modified_at`, microseconds) when the registry was read
   * from PostgreSQL; left out for rows held in memory.
   */
  modifiedUs?: number;
}

/** Export v2's station list as a registry read from PostgreSQL states it (src/registry/registry.ts). */
export interface ExportListVersion {
  /** `station_set.modified_at` (microseconds): moves when a station is added or removed. */
  setModifiedUs: number;
  /** The newest `static_modified_at` of a production (not sandbox) station, microseconds; 0 without any. */
  newestUs: number;
  /** The change log's head when the rows were read (export v2's `sync_token` position). */
  changeLogHead: number;
}
