import type { HttpResponse } from 'uWebSockets.js';
import type { Logger } from 'pino';
import { principalFields } from './auth.js';
import { HttpError, internalError, statusText, type ErrorStyle, type Reply } from './errors.js';
import { decorate, headerBlock, keepsPolicyHeaders, type CompiledPolicy } from './policy.js';
import type { Request } from './request.js';

/**
 * The one way a response leaves: the family's policy applied, status, headers and body written in one
 * `cork`, then the access-log line. Routes and refused WebSocket upgrades both answer through it.
 */

/** What a response needs of the family it belongs to. */
export interface Answering {
  policy: CompiledPolicy | undefined;
  errors: ErrorStyle;
}

/** Writes a reply with its family's policy applied, then logs the request. */
export function respond(log: Logger, res: HttpResponse, req: Request, reply: Reply, family: Answering, started: number): void {
  // The connection is gone from uWS once answered: read what the access log wants first.
  const remoteAddress = log.isLevelEnabled('info') || reply.status >= 500 ? req.clientAddress : undefined;
  const policy = family.policy;
  if (!policy) write(res, req, reply, '', family.errors);
  else if (keepsPolicyHeaders(reply, policy)) write(res, req, reply, policy.block, family.errors);
  else write(res, req, decorate(reply, policy), '', family.errors);
  logRequest(log, req, reply.status, started, remoteAddress, reply.asConfigured === true);
}

/** The reply with the headers the request gathered on its way (rate-limit state, say) under its own. */
export function withRequestHeaders(reply: Reply, req: Request): Reply {
  const gathered = req.responseHeaders;
  let any = false;
  for (const _ in gathered) {
    any = true;
    break;
  }
  if (!any) return reply;
  if (reply.headers === undefined) return { ...reply, headers: gathered };
  // The gathered headers first, the reply's own after them (and over them).
  for (const name in reply.headers) gathered[name] = reply.headers[name]!;
  return { ...reply, headers: gathered };
}

/**
 * Writes a reply and, after its own headers, `extra` (pre-rendered header lines, see `headerBlock`).
 * Every header goes out in one `writeHeader` call: uWS writes a value as it is given, so the
 * request id's value carries the further lines. One call instead of one per header is a measurable
 * share of a small response's cost.
 */
function write(res: HttpResponse, req: Request, reply: Reply, extra: string, errors: ErrorStyle): void {
  let head: string;
  try {
    head = req.id + (reply.headers ? headerBlock(reply.headers) : '') + extra;
  } catch (err) {
    req.log.error({ err }, 'response not sent as built');
    reply = errors.reply(internalError());
    head = req.id + headerBlock(reply.headers ?? {}) + extra;
  }
  res.cork(() => {
    res.writeStatus(statusLine(reply.status));
    res.writeHeader('X-Request-Id', head);
    if (reply.status === 204 || reply.status === 304) {
      // No Content-Length on these (RFC 9110 8.6); uWS omits it only when called without arguments.
      res.endWithoutBody();
    } else if (req.method === 'HEAD') {
      const length = reply.body === undefined ? 0 : Buffer.byteLength(reply.body);
      if (reply.closeConnection) res.endWithoutBody(length, true);
      else {
        // Given a length, this uWS build closes the connection after the response, and a keep-alive
        // client's next request on it fails: write the length, end without arguments.
        res.writeHeader('Content-Length', String(length));
        res.endWithoutBody();
      }
    } else if (reply.closeConnection === true) {
      // A lingering close: said, not done. uWS reads and discards the rest of the body after the
      // answer (closing the connection now would reset it under a client still sending, which then
      // never reads the answer); the client closes as told, or uWS once the connection is idle.
      res.writeHeader('Connection', 'close');
      res.end(reply.body ?? '');
    } else if (reply.closeConnection !== 'at-once' && reply.body !== undefined && reply.body.length >= STREAMED_FROM) {
      endInParts(res, req, typeof reply.body === 'string' ? Buffer.from(reply.body) : reply.body);
    } else {
      res.end(reply.body ?? '', reply.closeConnection === 'at-once');
    }
  });
}

/** `200 OK`, made once per status code. */
function statusLine(status: number): string {
  return (STATUS_LINES[status] ??= `${status} ${statusText(status)}`);
}

/** By status code (every code an answer can have is below 600): a packed array, not a sparse one. */
const STATUS_LINES: (string | undefined)[] = Array.from({ length: 600 }, () => undefined);

/**
 * Bodies from this size (bytes, or characters of a string) go out as the connection takes them
 * (`endInParts`); smaller ones in one `end`.
 */
export const STREAMED_FROM = 256 * 1024;

/**
 * Ends the response with a large body, written as the connection takes it: what the socket does not
 * take at once is written from `body` itself when the connection can take more (`onWritable`), never
 * copied. `end` would copy the rest into the connection's own buffer: a second copy of the public
 * map's 60 MB feed for as long as the client takes to read it. A client gone (aborted) stops it.
 */
function endInParts(res: HttpResponse, req: Request, body: Buffer): void {
  const total = body.length;
  const [ok, done] = res.tryEnd(body, total);
  if (ok || done) return;
  res.onWritable((offset) => {
    if (req.abort.aborted) return true;
    return res.tryEnd(body.subarray(offset), total)[0];
  });
}

/**
 * One line per request (`method`, `path`, `status`, `duration_ms`, who); a 5xx at error, the rest at
 * info, as is a 5xx that is the platform working as configured (`asConfigured`: webhooks without their
 * key, readiness while not ready).
 */
export function logRequest(log: Logger, req: Request, status: number, started: number, remoteAddress: string | undefined, asConfigured = false): void {
  const failed = status >= 500 && !asConfigured;
  if (!failed && !log.isLevelEnabled('info')) return;
  const entry = {
    method: req.method,
    path: req.path,
    status,
    remote_address: remoteAddress,
    duration_ms: Math.round((performance.now() - started) * 100) / 100,
    ...(req.principal ? principalFields(req.principal) : {}),
  };
  if (failed) req.log.error(entry, 'request');
  else req.log.info(entry, 'request');
}

/**
 * What an error that is not an HttpError stands for, when it is known (a dependency unreachable: 503
 * with Retry-After, say); undefined: an unexpected failure.
 */
export type ErrorClassifier = (err: unknown) => HttpError | undefined;

/**
 * An error as the family answers it: an HttpError as it is, an error the classifier knows as what it
 * says, anything else a 500 that says nothing of its cause.
 */
export function failure(err: unknown, family: Answering, req: Request, classify?: ErrorClassifier): Reply {
  if (err instanceof HttpError) {
    const reply = family.errors.reply(err);
    return err.options.asConfigured ? { ...reply, asConfigured: true } : reply;
  }
  const known = classify?.(err);
  if (known) {
    if (!req.abort.aborted) req.log.warn({ err, status: known.status, code: known.code }, 'request refused: dependency unavailable');
    return family.errors.reply(known);
  }
  if (!req.abort.aborted) req.log.error({ err }, 'request failed');
  return family.errors.reply(internalError());
}
