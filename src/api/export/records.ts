import type { Sql } from '../../../db/connect.js';
import { stationRows, type StationHead, type StationRow } from '../../../db/queries/stations.js';
import { fuelTypeCounts } from '../../domain/fuel-types.js';

/**
 * The export v2 station records, and the cache that keeps them serialised per station under the
 * station's version (`static_modified_at`), so a page of records is a concatenation of bytes.
 */

/**
 * Names of the record's own fields; a `details` key of the same name is left out (the registry's value
 * wins). `distance_km` is export v2's answer to a geo query (src/api/export-v2/geo.ts), put first in the
 * record: a detail of that name would make it twice.
 */
export const RECORD_FIELDS: ReadonlySet<string> = new Set([
  'distance_km',
  'hrs_id',
  'name',
  'operator',
  'heavy_duty',
  'opening_hours',
  'fuel_types',
  'photo_url',
  'dispensers',
  'storages',
  'products',
]);

/**
 * The export v2 station record: `hrs_id`, `name`, `operator` {`id`, `name`}, `heavy_duty`,
 * `opening_hours`, the v1.1 static (AFIR) details spread at the top level as given, `photo_url`, and
 * the layout sections `dispensers`, `storages`, `products` (null until a layout is confirmed).
 */
export function stationRecord(row: StationRow, baseUrl: string): Record<string, unknown> {
  const record = recordHead(row);
  spreadDetails(record, row.details);
  // Everything the v1.1 record has, so export v2 stays a superset of it.
  record.fuel_types = fuelTypeCounts(row.dispensers, row.v1_fuel_types);
  record.photo_url = row.has_photo ? `${baseUrl}/v2/hrs/${row.hrs_id}/photo` : null;
  record.dispensers = row.dispensers;
  record.storages = row.storages;
  record.products = row.products;
  return record;
}

/** The registry's own fields every generation's record starts with. */
export function recordHead(row: StationRow): Record<string, unknown> {
  return {
    hrs_id: row.hrs_id,
    name: row.name,
    operator: { id: row.operator_id, name: row.operator_name },
    heavy_duty: row.heavy_duty,
    opening_hours: row.opening_hours,
  };
}

/** The station's static (AFIR) details at the top level, as given; a key named like a record field is left out. */
export function spreadDetails(record: Record<string, unknown>, details: Record<string, unknown>): void {
  for (const [key, value] of Object.entries(details)) {
    if (RECORD_FIELDS.has(key)) continue;
    // defineProperty: a key such as "__proto__" stays a plain field.
    Object.defineProperty(record, key, { value, enumerable: true, writable: true, configurable: true });
  }
}

/** At most this many serialised records are kept (about 1 kB each); the oldest entries go first. */
const MAX_CACHED_RECORDS = 50_000;

/** Serialised (UTF-8 encoded) station records, each under the version (`static_modified_at`) it was made from. */
export class StationRecords {
  private readonly cache = new Map<string, { modifiedUs: number; body: Buffer }>();
  private baseUrl: string | undefined;

  /** `build`: the record a row makes (export v2's by default; the legacy families pass theirs). */
  constructor(
    private readonly sql: Sql,
    private readonly currentBaseUrl: () => string,
    private readonly build: (row: StationRow, baseUrl: string) => Record<string, unknown> = stationRecord,
  ) {}

  forget(hrsId: string): void {
    this.cache.delete(hrsId);
  }

  get size(): number {
    return this.cache.size;
  }

  /**
   * The records of these stations at (at least) these versions, in the given order, with the newest
   * version among them; stations removed meanwhile are left out. One statement for all the misses.
   */
  async get(heads: readonly StationHead[]): Promise<{ bodies: Buffer[]; newestUs: number }> {
    const found = await this.aligned(heads);
    return { bodies: found.bodies.filter((body): body is Buffer => body !== undefined), newestUs: found.newestUs };
  }

  /**
   * As `get`, but each record at its head's index: undefined where the station was removed meanwhile
   * (for callers that pair each record with something of their own, as a geo query its distance).
   */
  async aligned(heads: readonly StationHead[]): Promise<{ bodies: (Buffer | undefined)[]; newestUs: number }> {
    const baseUrl = this.currentBaseUrl();
    if (baseUrl !== this.baseUrl) {
      // Records embed absolute links; the base is fixed once the server listens.
      this.cache.clear();
      this.baseUrl = baseUrl;
    }
    const bodies: (Buffer | undefined)[] = new Array(heads.length);
    let newestUs = 0;
    // Made only for a page with records not kept (a page read again has them all).
    let at: Map<string, number> | undefined;
    for (let index = 0; index < heads.length; index++) {
      const head = heads[index]!;
      const cached = this.cache.get(head.hrsId);
      if (cached && cached.modifiedUs === head.modifiedUs) {
        bodies[index] = cached.body;
        if (cached.modifiedUs > newestUs) newestUs = cached.modifiedUs;
      } else {
        (at ??= new Map()).set(head.hrsId, index);
      }
    }
    if (at !== undefined) {
      for (const row of await stationRows(this.sql, [...at.keys()])) {
        const body = Buffer.from(JSON.stringify(this.build(row, baseUrl)));
        bodies[at.get(row.hrs_id)!] = body;
        newestUs = Math.max(newestUs, row.modifiedUs);
        this.remember(row.hrs_id, row.modifiedUs, body);
      }
    }
    return { bodies, newestUs };
  }

  private remember(hrsId: string, modifiedUs: number, body: Buffer): void {
    const held = this.cache.get(hrsId);
    // A slower request that read an older version must not replace a newer one.
    if (held && held.modifiedUs > modifiedUs) return;
    this.cache.delete(hrsId);
    this.cache.set(hrsId, { modifiedUs, body });
    if (this.cache.size > MAX_CACHED_RECORDS) this.cache.delete(this.cache.keys().next().value!);
  }
}
