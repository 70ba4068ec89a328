import { z } from 'zod';

/**
 * The call-log job: what one recorded API call becomes on the queue. Shared by the producer (the
 * API process enqueues it) and the processor (the worker validates it again and writes it), so both
 * read the same schema and limits.
 */

/** One API call as a request handler describes it, once its response status is known. */
export interface CallLogEntry {
  /** The originator whose token authenticated the call. */
  originator: string;
  /** When the platform received the request (`Request.receivedAt`). */
  requestTime: Date;
  /** Method and route path, e.g. `POST /import/v2/signal/usage/`. */
  endpoint: string;
  /** The stations (`hrs_id`) the request named, as far as they could be read; empty if none. */
  stationIds: readonly string[];
  /** The response status sent. */
  status: number;
  /** The request body as received; stored for every recorded call (capped). */
  requestBody: Buffer | string | undefined;
  /** The response body sent; stored for failed calls only (capped). */
  responseBody?: Buffer | string | undefined;
  /** What went wrong, any JSON value (error code, validation issues, …); stored for failed calls only. */
  errorDetails?: unknown;
  /** The `X-Request-Id` the response carried. */
  requestId: string;
  /** The client's address (`Request.clientAddress`: the peer, or what a trusted proxy forwarded). */
  clientAddress?: string;
}

/** Bodies are stored up to this many bytes of UTF-8, then cut at a character boundary with a marker. */
export const MAX_STORED_BODY_BYTES = 64 * 1024;
/** Error details whose JSON is longer are replaced by a truncated preview. */
export const MAX_ERROR_DETAILS_CHARS = 64 * 1024;
const MAX_STATION_IDS = 1000;
const MAX_STATION_ID_CHARS = 100;
// Room for the marker a cut body ends with.
const MARKER_ROOM = 200;

const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g;

/** PostgreSQL text and jsonb refuse U+0000 and unpaired surrogates; both become U+FFFD. */
export function storable(text: string): string {
  return text.replace(/\0/g, '\uFFFD').replace(LONE_SURROGATE, '\uFFFD');
}

function storableJson(value: z.core.util.JSONType): z.core.util.JSONType {
  if (typeof value === 'string') return storable(value);
  if (Array.isArray(value)) return value.map(storableJson);
  if (value !== null && typeof value === 'object') {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [storable(k), storableJson(v)]));
  }
  return value;
}

const text = (max: number) => z.string().max(max).transform(storable);

/**
 * A call-log job: one row of `call_logs`. Parsing makes every string storable, so the recorder and
 * the worker (which validates again) agree and no entry can make a whole batch fail.
 */
export const callLogJobSchema = z.strictObject({
  originator: z.string().regex(/^[a-z0-9][a-z0-9._-]{0,63}$/),
  request_time: z.iso.datetime({ offset: true }),
  endpoint: text(300).pipe(z.string().min(1)),
  station_ids: z.array(text(MAX_STATION_ID_CHARS)).max(MAX_STATION_IDS),
  status: z.number().int().min(100).max(599),
  request_body: text(MAX_STORED_BODY_BYTES + MARKER_ROOM),
  response_body: text(MAX_STORED_BODY_BYTES + MARKER_ROOM).nullable(),
  error_details: z.json().transform(storableJson).nullable(),
  request_id: text(200).pipe(z.string().min(1)),
  // Absent from jobs queued before it was recorded.
  client_address: text(100).nullable().default(null),
});
export type CallLogJob = z.output<typeof callLogJobSchema>;

/** A body as received, decoded as UTF-8 and cut to `maxBytes` with a marker saying how much came. */
export function capBody(body: Buffer | string | undefined | null, maxBytes = MAX_STORED_BODY_BYTES): string {
  if (body === undefined || body === null) return '';
  if (typeof body === 'string' && body.length * 3 <= maxBytes) return body;
  const bytes = typeof body === 'string' ? Buffer.from(body, 'utf8') : body;
  if (bytes.length <= maxBytes) return typeof body === 'string' ? body : bytes.toString('utf8');
  let end = maxBytes;
  // Back off to the start of a UTF-8 sequence, so no character is cut in half.
  while (end > 0 && (bytes[end]! & 0xc0) === 0x80) end--;
  return `${bytes.subarray(0, end).toString('utf8')}\n[truncated: ${bytes.length} bytes received, the first ${end} stored]`;
}

/** Error details as plain, bounded JSON; something that is not JSON-serialisable is described instead. */
function errorDetailsJson(details: unknown): unknown {
  if (details === undefined || details === null) return null;
  let json: string | undefined;
  try {
    json = JSON.stringify(details);
  } catch (err) {
    return { unserializable: err instanceof Error ? err.message : String(err) };
  }
  if (json === undefined) return null;
  if (json.length > MAX_ERROR_DETAILS_CHARS) {
    return { truncated: true, json_chars: json.length, preview: json.slice(0, MAX_ERROR_DETAILS_CHARS) };
  }
  return JSON.parse(json);
}

/** The job payload for an entry: failed calls keep their response body and error details. */
export function callLogPayload(entry: CallLogEntry): unknown {
  const failed = entry.status >= 400;
  return {
    originator: entry.originator,
    request_time: entry.requestTime.toISOString(),
    endpoint: entry.endpoint,
    station_ids: entry.stationIds.slice(0, MAX_STATION_IDS).map((id) => String(id).slice(0, MAX_STATION_ID_CHARS)),
    status: entry.status,
    request_body: capBody(entry.requestBody),
    response_body: failed ? capBody(entry.responseBody) : null,
    error_details: failed ? errorDetailsJson(entry.errorDetails) : null,
    request_id: entry.requestId,
    client_address: entry.clientAddress ?? null,
  };
}

