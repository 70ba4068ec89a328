import { isUtf8 } from 'node:buffer';
import type { HttpRequest, HttpResponse } from 'uWebSockets.js';
import type { Logger } from 'pino';
import { HttpError, badRequest, type CloseConnection } from './errors.js';
import { isStorableText, type Method } from './router.js';
import { clientAddress, type TrustProxy } from './client-address.js';
import { utf8Fault, utf8FaultText } from '../domain/text.js';

/** Who a request acts for, as far as the core needs to know it (the access log). */
export interface Principal {
  readonly kind: string;
  readonly id?: string;
  readonly tokenId?: string;
}

/** Everything a handler may know about a request, copied out of uWS before the first await. */
export interface Request {
  readonly id: string;
  readonly method: Method;
  readonly path: string;
  /**
   * The query string's parameters (parsed on first use). A name or value holding a NUL or a lone
   * surrogate, which no stored text can match, throws a 400 naming the parameter at first use.
   */
  readonly query: URLSearchParams;
  /** Whether the request has a (non-empty) query string: known without parsing it. */
  readonly hasQuery: boolean;
  readonly headers: Readonly<Record<string, string>>;
  /**
   * The client's address, read from the connection on first use (a system call, so only when wanted);
   * first use must come before the response is written. The access log reads it when enabled.
   */
  readonly remoteAddress: string;
  /**
   * The client's address: the peer's, or, when the peer is a trusted proxy (TRUST_PROXY), the address
   * it forwarded (./client-address.ts). Per-address limits and logs use it. Read as `remoteAddress`.
   */
  readonly clientAddress: string;
  /** When the platform received the request. */
  readonly receivedAt: Date;
  params: Record<string, string>;
  /** The route's path pattern (`/v2/hrs/:hrs_id`) once a route took the request. */
  route: string | undefined;
  principal: Principal | undefined;
  body: Buffer | undefined;
  /** Headers added to whatever response the request gets, errors included (rate-limit state, say). */
  readonly responseHeaders: Record<string, string>;
  /** Whether the client went away; see {@link Abort}. */
  readonly abort: Abort;
  /** A child logger carrying `req_id`, made on first use. */
  readonly log: Logger;
}

/**
 * The method as the platform's own string (`UNKNOWN` for any other): a literal, whose hash V8 keeps, so
 * the maps keyed by method (the router's, the metrics') do not hash uWS's fresh copy on every request.
 */
function knownMethod(method: string): Method {
  switch (method) {
    case 'GET':
      return 'GET';
    case 'POST':
      return 'POST';
    case 'HEAD':
      return 'HEAD';
    case 'PUT':
      return 'PUT';
    case 'PATCH':
      return 'PATCH';
    case 'DELETE':
      return 'DELETE';
    case 'OPTIONS':
      return 'OPTIONS';
    case 'TRACE':
      return 'TRACE';
    default:
      return 'UNKNOWN' as Method;
  }
}

let sequence = 0;

/**
 * A request's abort state: set once when uWS reports the client gone, with callbacks run then. A
 * plain object rather than an AbortController, which costs an event target per request.
 */
export class Abort {
  aborted = false;
  private callbacks: (() => void)[] | undefined;

  onAbort(callback: () => void): void {
    if (this.aborted) callback();
    else (this.callbacks ??= []).push(callback);
  }

  fire(): void {
    if (this.aborted) return;
    this.aborted = true;
    for (const callback of this.callbacks ?? []) callback();
    this.callbacks = undefined;
  }
}

export function copyRequest(req: HttpRequest, res: HttpResponse, abort: Abort, log: Logger, trust?: TrustProxy): Request {
  // Methods are case-sensitive (RFC 9110 9.1): `get` is not GET, and is answered 501 as unknown.
  const method = req.getCaseSensitiveMethod();
  const headers: Record<string, string> = {};
  req.forEach((name, value) => {
    headers[name] = headers[name] === undefined ? value : `${headers[name]}, ${value}`;
  });
  const given = headers['x-request-id'];
  const id = given !== undefined && /^[\w.-]{1,100}$/.test(given) ? given : `${PID}-${(++sequence).toString(36)}`;
  return new CopiedRequest(
    id,
    knownMethod(method),
    req.getUrl(),
    req.getQuery() ?? '',
    headers,
    res,
    abort,
    log,
    trust,
  );
}

const PID = process.pid.toString(36);

/**
 * A request copied out of uWS: plain fields, and the parts made only when wanted (query, remote
 * address, child logger) behind getters on the prototype, so a request costs one object, not a
 * closure per lazy part.
 */
class CopiedRequest implements Request {
  /** When it was received (epoch ms); the Date only when asked for. */
  private readonly receivedMs = Date.now();
  private received: Date | undefined = undefined;
  params: Record<string, string> = {};
  route: string | undefined = undefined;
  principal: Request['principal'] = undefined;
  body: Buffer | undefined = undefined;
  readonly responseHeaders: Record<string, string> = {};
  private queryParsed: URLSearchParams | undefined = undefined;
  private address: string | undefined = undefined;
  private client: string | undefined = undefined;
  private child: Logger | undefined = undefined;

  constructor(
    readonly id: string,
    readonly method: Method,
    readonly path: string,
    private readonly queryText: string,
    readonly headers: Readonly<Record<string, string>>,
    private readonly res: HttpResponse,
    readonly abort: Abort,
    private readonly parentLog: Logger,
    private readonly trust: TrustProxy | undefined,
  ) {}

  get receivedAt(): Date {
    return (this.received ??= new Date(this.receivedMs));
  }

  get query(): URLSearchParams {
    return (this.queryParsed ??= checkedQuery(this.queryText));
  }

  get hasQuery(): boolean {
    return this.queryText !== '';
  }

  get remoteAddress(): string {
    return (this.address ??= Buffer.from(this.res.getRemoteAddressAsText()).toString());
  }

  get clientAddress(): string {
    return (this.client ??= clientAddress(this.remoteAddress, this.headers, this.trust));
  }

  get log(): Logger {
    return (this.child ??= this.parentLog.child({ req_id: this.id }));
  }
}

/** The query string parsed, or a 400 naming the first parameter whose name or value cannot be stored text. */
function checkedQuery(text: string): URLSearchParams {
  const query = new URLSearchParams(text);
  for (const [name, value] of query) {
    if (isStorableText(name) && isStorableText(value)) continue;
    throw badRequest(
      'invalid_parameter',
      `Query parameter ${JSON.stringify(name)}: must not contain a NUL character or a lone surrogate.`,
    );
  }
  return query;
}

/**
 * Raised when a body grows (or is declared) past the cap. The connection is closed after the answer:
 * by default once the client had the chance to read it (see CloseConnection in ./errors.ts).
 */
export const tooLarge = (max: number, close: CloseConnection = true) =>
  new HttpError(413, 'payload_too_large', `Request body exceeds the limit of ${max} bytes.`, {
    closeConnection: close,
  });

/**
 * Starts reading the body at once (uWS drops data that arrives before a handler is attached) and
 * enforces the cap while reading. The promise rejects with 413 past the cap and on abort.
 */
export function readBody(res: HttpResponse, max: number, abort: Abort): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let done = false;
    abort.onAbort(() => {
      if (!done) reject(new Error('request aborted'));
      done = true;
    });
    res.onData((chunk, isLast) => {
      if (done) return;
      size += chunk.byteLength;
      if (size > max) {
        done = true;
        reject(tooLarge(max));
        return;
      }
      chunks.push(Buffer.from(chunk.slice(0)));
      if (isLast) {
        done = true;
        resolve(chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, size));
      }
    });
  });
}

/** What {@link parseJson} refuses beyond malformed JSON; a family picks what its spec asks for. */
export interface JsonOptions {
  /** A body without `Content-Type` is a 415 rather than read as JSON. */
  requireContentType?: boolean;
  /** An object with the same key twice is a 400 rather than keeping the last value. */
  rejectDuplicateKeys?: boolean;
  /** Arrays and objects nested deeper than this are a 400. */
  maxDepth?: number;
  /** A body that is an array of more than `max` items is refused with `error()`, before it is parsed. */
  maxItems?: { max: number; error: () => HttpError };
}

/**
 * Parses a JSON body; a parse error is a 400 in the caller's style, never a crash or `{}`. With
 * options, also refuses a missing media type, duplicate keys, deep nesting and long arrays (see
 * {@link JsonOptions}): those are found by one pass over the text before it is parsed, which stops
 * at the first problem, so an oversized body costs next to nothing.
 */
export function parseJson(req: Request, options: JsonOptions = {}): unknown {
  const type = req.headers['content-type'];
  if (type === undefined && options.requireContentType) {
    throw new HttpError(415, 'unsupported_media_type', 'Unsupported media type "" in request. Send "Content-Type: application/json".');
  }
  if (type !== undefined && !/^application\/([\w.+-]*\+)?json\s*(;|$)/i.test(type)) {
    throw new HttpError(415, 'unsupported_media_type', `Unsupported media type "${type}" in request.`);
  }
  const text = req.body === undefined ? '' : utf8Text(req.body);
  if (text.trim() === '') throw badRequest('parse_error', 'JSON parse error - the request body is empty.');
  if (options.rejectDuplicateKeys || options.maxDepth !== undefined || options.maxItems) {
    const problem = structureProblem(text, {
      duplicates: options.rejectDuplicateKeys ?? false,
      maxDepth: options.maxDepth ?? Infinity,
      maxItems: options.maxItems?.max ?? Infinity,
    });
    if (problem === TOO_MANY_ITEMS) throw options.maxItems!.error();
    if (problem) throw badRequest('parse_error', `JSON parse error - ${problem}`);
  }
  try {
    return JSON.parse(text);
  } catch (err) {
    throw badRequest('parse_error', `JSON parse error - ${(err as Error).message}`);
  }
}

/**
 * The body as text, decoded strictly: bytes that are not UTF-8 (`FF`, an encoded surrogate `ED A0 80`,
 * an overlong form, a cut sequence) are a 400 `parse_error` naming the first one's byte offset, in the
 * family's format like any malformed body, and nothing reads the body further. Decoding with
 * replacement would store U+FFFD in place of what the client sent, without a word.
 */
function utf8Text(body: Buffer): string {
  if (!isUtf8(body)) {
    const fault = utf8Fault(body);
    if (fault) throw badRequest('parse_error', `JSON parse error - the request body is not valid UTF-8: ${utf8FaultText(fault)}.`);
  }
  return body.toString('utf8');
}

const QUOTE = 0x22, BACKSLASH = 0x5c, COMMA = 0x2c;
const OPEN_OBJECT = 0x7b, CLOSE_OBJECT = 0x7d, OPEN_ARRAY = 0x5b, CLOSE_ARRAY = 0x5d;
/** What {@link structureProblem} returns for a top-level array longer than allowed. */
export const TOO_MANY_ITEMS = 'too many items';

/** A key as a message shows it: JSON-quoted, cut after 50 characters. */
const shown = (key: string) => JSON.stringify(key.length > 50 ? `${key.slice(0, 50)}…` : key);

/**
 * One pass over a JSON text: the first key repeated within one object, the first container deeper
 * than `maxDepth` (messages with the place, `$[0].station`), or {@link TOO_MANY_ITEMS} for a
 * top-level array of more than `maxItems`; undefined when none of these. Linear in the text (each
 * character looked at once, a key with escapes decoded once) and safe on malformed text, which it
 * leaves to JSON.parse. Keys are compared decoded: `"a"` and `"\u0061"` are the same key.
 */
export function structureProblem(text: string, limits: { duplicates: boolean; maxDepth: number; maxItems: number }): string | undefined {
  // Per open container: the keys seen (objects: a list, a Set past LIST_KEYS), or null (arrays).
  const keys: (Set<string> | string[] | undefined | null)[] = [];
  // Per open container: the current key or index, for the message.
  const place: (string | number)[] = [];
  let expectKey = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === QUOTE) {
      const start = i;
      let escaped = false;
      for (i++; i < text.length && text.charCodeAt(i) !== QUOTE; i++) {
        if (text.charCodeAt(i) === BACKSLASH) (escaped = true), i++;
      }
      if (!expectKey || i >= text.length) continue;
      expectKey = false;
      const key = escaped ? decodeKey(text.slice(start, i + 1)) : text.slice(start + 1, i);
      const top = keys.length - 1;
      if (key === undefined) return undefined; // a bad escape: JSON.parse says what is wrong
      place[top] = key;
      if (limits.duplicates && repeated(keys, top, key)) return `duplicate key ${shown(key)} at ${pathText(place, top)}.`;
    } else if (c === OPEN_OBJECT || c === OPEN_ARRAY) {
      if (keys.length >= limits.maxDepth) return `nesting deeper than ${limits.maxDepth} levels at ${pathText(place, keys.length)}.`;
      keys.push(c === OPEN_OBJECT ? undefined : null);
      place.push(0);
      expectKey = c === OPEN_OBJECT;
    } else if (c === CLOSE_OBJECT || c === CLOSE_ARRAY) {
      keys.pop();
      place.pop();
      expectKey = false;
    } else if (c === COMMA && keys.length > 0) {
      const top = keys.length - 1;
      expectKey = keys[top] !== null;
      if (expectKey) continue;
      place[top] = (place[top] as number) + 1;
      if (top === 0 && (place[0] as number) >= limits.maxItems) return TOO_MANY_ITEMS;
    }
  }
  return undefined;
}

/** Keys of one object kept in a list up to this many (a linear look is cheaper than a Set), then in a Set. */
const LIST_KEYS = 8;

/** Whether the object at `level` already has `key`; records it otherwise. */
function repeated(keys: (Set<string> | string[] | undefined | null)[], level: number, key: string): boolean {
  const seen = keys[level];
  if (seen === undefined) keys[level] = [key];
  else if (Array.isArray(seen)) {
    if (seen.includes(key)) return true;
    if (seen.length < LIST_KEYS) seen.push(key);
    else keys[level] = new Set([...seen, key]);
  } else if (seen !== null) {
    if (seen.has(key)) return true;
    seen.add(key);
  }
  return false;
}

function decodeKey(quoted: string): string | undefined {
  try {
    return JSON.parse(quoted) as string;
  } catch {
    return undefined;
  }
}

/** `$`, then `[index]` or `.key` per level, up to (not including) level `end`. */
function pathText(place: (string | number)[], end: number): string {
  let out = '$';
  for (let level = 0; level < end; level++) {
    const at = place[level]!;
    out += typeof at === 'number' ? `[${at}]` : /^[A-Za-z_][\w-]*$/.test(at) ? `.${at}` : `[${shown(at)}]`;
  }
  return out;
}
