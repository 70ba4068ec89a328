/**
 * A station's coordinates in the forms registry files give them: `lat`/`lon` at the top level of its
 * details, `latitude`/`longitude`, or a `coordinates` object with either pair; numbers or numeric
 * strings. The time zone found at a station's coordinates and the DATEX II location read them alike.
 */

/** A coordinate given as a number or a numeric string. */
function coordinate(value: unknown): number | undefined {
  if (typeof value === 'number') return Number.isFinite(value) ? value : undefined;
  if (typeof value === 'string' && /^\s*-?\d+(\.\d+)?\s*$/.test(value)) return Number(value);
  return undefined;
}

/** The pair an object holds (`lat`/`lon` or `latitude`/`longitude`), else undefined. */
export function pointOf(value: unknown): { lat: number; lon: number } | undefined {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return undefined;
  const o = value as Record<string, unknown>;
  const lat = coordinate(o.lat ?? o.latitude);
  const lon = coordinate(o.lon ?? o.longitude);
  return lat !== undefined && lon !== undefined ? { lat, lon } : undefined;
}

/** The station's coordinates: its `coordinates` object's, else those at the top level of its details. */
export function coordinatesOf(details: Record<string, unknown>): { lat: number; lon: number } | undefined {
  return pointOf(details.coordinates) ?? pointOf(details);
}
