import type { HttpRequest, HttpResponse } from 'uWebSockets.js';
import type { Logger } from 'pino';
import type { Principal } from './auth.js';
import { HttpError, badRequest } from './errors.js';
import { isStorableText, type Method } from './router.js';

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
  readonly headers: Readonly<Record<string, string>>;
  /**
   * The client's address, read from the connection on first use (a system call, so only when wanted);
   * first use must come before the response is written. The access log reads it when enabled.
   */
  readonly remoteAddress: string;
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

const KNOWN_METHODS = new Set<string>(['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS', 'TRACE']);

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

export function copyRequest(req: HttpRequest, res: HttpResponse, abort: Abort, log: Logger): Request {
  const method = req.getMethod().toUpperCase();
  const headers: Record<string, string> = {};
  req.forEach((name, value) => {
    headers[name] = headers[name] === undefined ? value : `${headers[name]}, ${value}`;
  });
  const id = headers['x-request-id'] && /^[\w.-]{1,100}$/.test(headers['x-request-id'])
    ? headers['x-request-id']
    : `${process.pid.toString(36)}-${(++sequence).toString(36)}`;
  const path = req.getUrl();
  const queryText = req.getQuery() ?? '';
  let child: Logger | undefined;
  let query: URLSearchParams | undefined;
  let remoteAddress: string | undefined;
  return {
    id,
    method: (KNOWN_METHODS.has(method) ? method : 'UNKNOWN') as Method,
    path,
    get query() {
      return (query ??= checkedQuery(queryText));
    },
    headers,
    get remoteAddress() {
      return (remoteAddress ??= Buffer.from(res.getRemoteAddressAsText()).toString());
    },
    receivedAt: new Date(),
    params: {},
    route: undefined,
    principal: undefined,
    body: undefined,
    responseHeaders: {},
    abort,
    get log() {
      return (child ??= log.child({ req_id: id }));
    },
  };
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

/** Raised (and the connection closed) when a body grows past the cap. */
export const tooLarge = (max: number) =>
  new HttpError(413, 'payload_too_large', `Request body exceeds the limit of ${max} bytes.`, {
    closeConnection: true,
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

/** Parses a JSON body; a parse error is a 400 in the caller's style, never a crash or `{}`. */
export function parseJson(req: Request): unknown {
  const type = req.headers['content-type'];
  if (type !== undefined && !/^application\/([\w.+-]*\+)?json\s*(;|$)/i.test(type)) {
    throw new HttpError(415, 'unsupported_media_type', `Unsupported media type "${type}" in request.`);
  }
  const text = req.body?.toString('utf8') ?? '';
  if (text.trim() === '') throw badRequest('parse_error', 'JSON parse error - the request body is empty.');
  try {
    return JSON.parse(text);
  } catch (err) {
    throw badRequest('parse_error', `JSON parse error - ${(err as Error).message}`);
  }
}
