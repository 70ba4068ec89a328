import { createRequire } from 'node:module';
import { coordinatesOf } from '../domain/coordinates.js';

const require = createRequire(import.meta.url);
/** geo-tz, loaded when first asked (not by every process that imports the registry: 70 ms at its start). */
let findZones: typeof import('geo-tz/all').find | undefined;
const find = (lat: number, lon: number): string[] => (findZones ??= (require('geo-tz/all') as typeof import('geo-tz/all')).find)(lat, lon);

/**
 * A station's time zone from where it is, for stations whose registry entry names none. The lookup
 * uses geo-tz's full data set (the timezone-boundary-builder polygons, shipped with the package and
 * read from its files on first use of each area, so it works offline): it names the zone as the time
 * zone database does for that place (Europe/Copenhagen, not a zone merged with it since 1970).
 */

/**
 * The IANA time zone at a point, or undefined for coordinates out of range. Where zones overlap
 * (disputed areas) the first named zone; at sea the nautical `Etc/GMT±N` zone; at a pole, where every
 * nautical zone meets, undefined.
 */
export function timeZoneAt(lat: number, lon: number): string | undefined {
  if (!Number.isFinite(lat) || !Number.isFinite(lon) || Math.abs(lat) > 90 || Math.abs(lon) > 180) return undefined;
  const zones = find(lat, lon);
  const named = zones.find((zone) => !zone.startsWith('Etc/'));
  if (named !== undefined) return named;
  return zones.length === 1 ? zones[0] : undefined;
}

/** The zone a station's hours are read in: the one its entry names, else the one at its coordinates, else null. */
export function stationTimeZone(explicit: string | null, details: Record<string, unknown>): string | null {
  if (explicit !== null) return explicit;
  const where = coordinatesOf(details);
  return (where && timeZoneAt(where.lat, where.lon)) ?? null;
}
