import { STATUS_CODES } from 'node:http';

/** An error that is a value: a stable code, an HTTP status, a human detail, optional headers. */
export class HttpError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    readonly detail: string,
    readonly options: {
      headers?: Record<string, string>;
      body?: unknown;
      /** Members a problem body (PROBLEM_ERRORS) carries beside the standard ones (RFC 9457 extension members). */
      extensions?: Record<string, unknown>;
      closeConnection?: CloseConnection;
      /**
       * A 5xx that is the platform working as configured or as designed (webhooks without their key,
       * a stream refused while the server shuts down), not a failure: its request line is an info line.
       */
      asConfigured?: boolean;
    } = {},
  ) {
    super(detail);
  }
}

export const notFound = (detail = 'Not found.') => new HttpError(404, 'not_found', detail);
export const unauthorized = (detail: string) =>
  new HttpError(401, 'not_authenticated', detail, { headers: { 'WWW-Authenticate': 'Bearer' } });
export const badRequest = (code: string, detail: string, body?: unknown) =>
  new HttpError(400, code, detail, body === undefined ? {} : { body });

/**
 * Whether the connection ends with this answer. `true`: the answer says `Connection: close` and the
 * rest of the request's body is still read and discarded (a lingering close), so a client that is
 * still sending reads the answer rather than a reset; the client closes, or the server does once the
 * body is over and the connection idle. `'at-once'`: closed as soon as the answer is written.
 */
export type CloseConnection = boolean | 'at-once';

export interface Reply {
  status: number;
  headers?: Record<string, string>;
  body?: string | Buffer;
  closeConnection?: CloseConnection;
  /** A 5xx that is the platform working as configured or as designed (see HttpError's option): its request line is an info line. */
  asConfigured?: boolean;
}

export const JSON_TYPE = 'application/json; charset=utf-8';
export const PROBLEM_TYPE = 'application/problem+json; charset=utf-8';

export function statusText(status: number): string {
  return STATUS_CODES[status] ?? 'Unknown';
}

export function json(status: number, value: unknown, headers: Record<string, string> = {}): Reply {
  return { status, headers: { 'Content-Type': JSON_TYPE, ...headers }, body: JSON.stringify(value) };
}

/**
 * How a family shapes its error bodies and words its refusals; the HTTP core applies the style of the
 * family a response belongs to. Two styles exist: {@link DRF_ERRORS} and {@link PROBLEM_ERRORS}.
 */
export interface ErrorStyle {
  readonly name: string;
  /** The one place an error becomes a response in this style. */
  reply(err: HttpError): Reply;
  /** The `detail` of a 429: `description` names the limit, `wait` how long to wait. */
  throttled(description: string, wait: string): string;
}

/**
 * The import APIs' bodies from the spec: `{"detail": "..."}`, or a body given by the error
 * (validation arrays, `non_field_errors`).
 */
export const DRF_ERRORS: ErrorStyle = {
  name: 'drf',
  reply(err) {
    const body = err.options.body ?? { detail: err.detail };
    return { ...json(err.status, body, err.options.headers ?? {}), closeConnection: err.options.closeConnection ?? false };
  },
  throttled: (description, wait) => `Request was throttled: ${description}. Expected available in ${wait}.`,
};

/** RFC 9457 `application/problem+json` (export, and everything else public). */
export const PROBLEM_ERRORS: ErrorStyle = {
  name: 'problem',
  reply(err) {
    const standard = { type: 'about:blank', title: statusText(err.status), status: err.status, detail: err.detail, code: err.code };
    // Extension members after the standard ones, never replacing one of them.
    const problem = { ...standard, ...err.options.extensions, ...standard };
    return {
      status: err.status,
      headers: { 'Content-Type': PROBLEM_TYPE, ...(err.options.headers ?? {}) },
      body: JSON.stringify(problem),
      closeConnection: err.options.closeConnection ?? false,
    };
  },
  throttled: (description, wait) => `Rate limit exceeded: ${description}. Retry in ${wait}.`,
};

/** The error every unexpected failure becomes: nothing of it reaches the client. */
export const internalError = () => new HttpError(500, 'internal_error', 'Unexpected platform error; please report it.');
