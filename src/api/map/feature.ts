import { createHash } from 'node:crypto';
import type { MapStationRow } from '../../../db/queries/map.js';
import type { OptionSummary } from '../../domain/status/summary.js';
import type { StationEntry } from '../../domain/stations.js';

/**
 * One station as the public map's feed shows it: a GeoJSON Feature (RFC 7946: a Point at `[lon,
 * lat]`) whose properties are its static fields (name, operator, address, heavy duty, time zone,
 * version) and its live part (open now, the five-state value of each fuelling option). The two parts
 * are kept apart so that the feed can tell a live change (a `station` message of the stream) from a
 * static one (`changed`: the client reads the feed again).
 */

/** What the map shows of a station beyond the registry cache, read with one query per registry reload. */
export interface StaticFields {
  operator: string | null;
  street: string | null;
  postcode: string | null;
  city: string | null;
  country: string | null;
  /** The version of the station's static content (ISO 8601, UTC). */
  modifiedAt: string | null;
}

/** The live part of a feature: what a stream's `station` message carries. */
export interface LivePart {
  open_now: boolean;
  fuelling_options: OptionSummary[];
}

const NO_STATICS: StaticFields = { operator: null, street: null, postcode: null, city: null, country: null, modifiedAt: null };

const isRecord = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);
const text = (value: unknown): string | null => (typeof value === 'string' && value.trim() !== '' ? value.trim() : null);
/** A country code as ISO 3166-1 alpha-2 in capitals; other text as given. */
const country = (value: unknown): string | null => {
  const given = text(value);
  return given !== null && /^[A-Za-z]{2}$/.test(given) ? given.toUpperCase() : given;
};

/**
 * A station's static fields from its row: the address is `details.address`, an object (`street` and
 * `house_number` make the street line, `postal_code`, `city`, `country`) or one line of text (then
 * the street line, the rest null); the postcode, the city and the country fall back to
 * `details.postcode`, `details.city` and `details.country`, as some registries give them beside the
 * address (v1.1's AFIR details have the city there; without it the map could not find a station by its
 * city, nor say where it is).
 */
export function staticFields(row: MapStationRow | undefined): StaticFields {
  if (row === undefined) return NO_STATICS;
  const fields = isRecord(row.address) ? row.address : {};
  const street = text(fields.street);
  const house = text(fields.house_number);
  return {
    operator: row.operator_name,
    street: typeof row.address === 'string' ? text(row.address) : street === null ? house : house === null ? street : `${street} ${house}`,
    postcode: text(fields.postal_code) ?? text(fields.postcode) ?? text(row.postcode),
    city: text(fields.city) ?? text(row.city),
    country: country(fields.country) ?? country(row.country),
    modifiedAt: new Date(row.modified_ms).toISOString(),
  };
}

/**
 * The feature serialised in three pieces, the whole Feature being `head + live + tail`: `head` and
 * `tail` hold what only a registry change moves (geometry, static fields, version), `live` the live
 * part's members (`"open_now":…,"fuelling_options":[…]`, without braces). The feed keeps these and
 * writes them straight into its body, so a station costs its feature's bytes once.
 */
export interface FeatureParts {
  head: string;
  live: string;
  tail: string;
  /** UTF-8 bytes of the whole Feature. */
  bytes: number;
}

/** The whole Feature, as the feed lists it. */
export const featureJson = (parts: FeatureParts): string => parts.head + parts.live + parts.tail;

/** The live part again from its serialised members. */
export const livePartOf = (parts: FeatureParts): LivePart => JSON.parse(`{${parts.live}}`) as LivePart;

/** A Feature's pieces that only the station's entry and static fields move: `head` and `tail`, and their UTF-8 bytes. */
interface FixedParts {
  head: string;
  tail: string;
  bytes: number;
}

/** The fixed pieces of the Feature of a station that has a point, its properties in the contract's order. */
function fixedParts(station: StationEntry & { point: { lat: number; lon: number } }, statics: StaticFields): FixedParts {
  const fixedProperties = {
    hrs_id: station.hrsId,
    name: station.name,
    operator: statics.operator,
    street: statics.street,
    postcode: statics.postcode,
    city: statics.city,
    country: statics.country,
    heavy_duty: station.heavyDuty,
    time_zone: station.timeZone ?? null,
  };
  const geometry = { type: 'Point', coordinates: [station.point.lon, station.point.lat] };
  // As JSON.stringify writes { type, id, geometry, properties: { ...fixed, open_now, fuelling_options, modified_at } }.
  const head = `{"type":"Feature","id":${JSON.stringify(station.hrsId)},"geometry":${JSON.stringify(geometry)},"properties":${JSON.stringify(fixedProperties).slice(0, -1)},`;
  const tail = `,"modified_at":${JSON.stringify(statics.modifiedAt)}}}`;
  return { head, tail, bytes: Buffer.byteLength(head) + Buffer.byteLength(tail) };
}

/** The live part's members as the Feature holds them (`"open_now":…,"fuelling_options":[…]`). */
const liveMembers = (live: LivePart): string => JSON.stringify({ open_now: live.open_now, fuelling_options: live.fuelling_options }).slice(1, -1);

/** A station's feature as the feed holds it, with what its fixed pieces were made from. */
export interface HeldFeature extends FeatureParts {
  station: StationEntry;
  statics: StaticFields;
  /** UTF-8 bytes of `head` and `tail`. */
  fixedBytes: number;
}

/**
 * The station's feature with its live part now. Its fixed pieces are made again only when the
 * station's registry entry or its static fields are other objects than `before`'s (a reload, a new
 * read): any other settling (an opening minute passed) makes the live members alone, and keeps
 * `before` itself when they are equal.
 */
export function heldFeature(
  before: HeldFeature | undefined,
  station: StationEntry & { point: { lat: number; lon: number } },
  statics: StaticFields,
  live: LivePart,
): HeldFeature {
  const members = liveMembers(live);
  if (before !== undefined && before.station === station && before.statics === statics) {
    if (before.live === members) return before;
    return { head: before.head, live: members, tail: before.tail, bytes: before.fixedBytes + Buffer.byteLength(members), station, statics, fixedBytes: before.fixedBytes };
  }
  const fixed = fixedParts(station, statics);
  return { head: fixed.head, live: members, tail: fixed.tail, bytes: fixed.bytes + Buffer.byteLength(members), station, statics, fixedBytes: fixed.bytes };
}

/**
 * The feed's FeatureCollection over `features` in their order, each feature's bytes written once
 * straight into one buffer (with 100,000 stations, 60 MB in about 80 ms), and its strong ETag: a digest
 * of the features alone, so bodies that differ only in `generated_at` share it.
 */
export function featureCollection(features: readonly FeatureParts[], at: Date): { bytes: Buffer; etag: string } {
  const head = Buffer.from(`{"type":"FeatureCollection","generated_at":${JSON.stringify(at.toISOString())},"features":[`);
  let size = head.length + 2 + Math.max(0, features.length - 1);
  for (const parts of features) size += parts.bytes;
  const bytes = Buffer.allocUnsafeSlow(size);
  head.copy(bytes);
  let offset = head.length;
  for (let i = 0; i < features.length; i++) {
    const parts = features[i]!;
    if (i > 0) bytes[offset++] = 0x2c; // ,
    offset += bytes.write(parts.head, offset, 'utf8');
    offset += bytes.write(parts.live, offset, 'utf8');
    offset += bytes.write(parts.tail, offset, 'utf8');
  }
  bytes[offset++] = 0x5d; // ]
  bytes[offset++] = 0x7d; // }
  if (offset !== size) throw new Error(`the map feed's body is ${offset} bytes, ${size} were counted`);
  const etag = `"${createHash('sha256').update(bytes.subarray(head.length, size - 2)).digest('base64url').slice(0, 27)}"`;
  return { bytes, etag };
}

