/**
 * A refused import call as the admins' live feed shows it: who, which endpoint, the answer's status,
 * the stations the request named and the first error of the answer's body (the import APIs' bodies: an
 * array aligned with the request, `non_field_errors`, or `{detail}`), so an admin sees what went wrong
 * without opening the call log.
 */
export interface Rejection {
  originator_id: string;
  /** Method and path, e.g. `POST /import/v2/signal/availability/`. */
  endpoint: string;
  status: number;
  hrs_ids: string[];
  /** The first error message and where it points (`[1].nozzles[0].id`; empty for the whole request). */
  error: { path: string; message: string } | null;
  /** When the request arrived (ISO 8601). */
  at: string;
}

const MAX_MESSAGE = 300;

/** The first error message in an import error body, depth first, with its path; null when there is none. */
export function firstError(body: unknown): Rejection['error'] {
  let value = body;
  if (typeof value === 'string' || value instanceof Uint8Array) {
    try {
      value = JSON.parse(typeof value === 'string' ? value : Buffer.from(value).toString('utf8'));
    } catch {
      return null;
    }
  }
  const found = walk(value, '', 0);
  return found === null ? null : { path: found.path, message: found.message.slice(0, MAX_MESSAGE) };
}

function walk(value: unknown, path: string, depth: number): { path: string; message: string } | null {
  if (depth > 12) return null;
  if (typeof value === 'string') return { path, message: value };
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      const found = walk(value[i], typeof value[i] === 'string' ? path : `${path}[${i}]`, depth + 1);
      if (found) return found;
    }
    return null;
  }
  if (value !== null && typeof value === 'object') {
    for (const [key, inner] of Object.entries(value)) {
      // `non_field_errors` and `detail` speak of the object they are in.
      const here = key === 'non_field_errors' || key === 'detail' ? path : path === '' ? key : `${path}.${key}`;
      const found = walk(inner, here, depth + 1);
      if (found) return found;
    }
  }
  return null;
}
