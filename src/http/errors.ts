import { STATUS_CODES } from 'node:http';

/**
 * How an API family shapes its error bodies:
 * - `drf`: the import APIs' bodies from the spec: `{"detail": "..."}`, or a body given by the error
 *   (validation arrays, `non_field_errors`);
 * - `problem`: RFC 9457 `application/problem+json` (export and everything else public).
 */
export type ErrorStyle = 'drf' | 'problem';

/** An error that is a value: a stable code, an HTTP status, a human detail, optional headers. */
export class HttpError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    readonly detail: string,
    readonly options: { headers?: Record<string, string>; body?: unknown; closeConnection?: boolean } = {},
  ) {
    super(detail);
  }
}

export const notFound = (detail = 'Not found.') => new HttpError(404, 'not_found', detail);
export const unauthorized = (detail: string) =>
  new HttpError(401, 'not_authenticated', detail, { headers: { 'WWW-Authenticate': 'Bearer' } });
export const badRequest = (code: string, detail: string, body?: unknown) =>
  new HttpError(400, code, detail, body === undefined ? {} : { body });

export interface Reply {
  status: number;
  headers?: Record<string, string>;
  body?: string | Buffer;
  closeConnection?: boolean;
}

export const JSON_TYPE = 'application/json; charset=utf-8';
export const PROBLEM_TYPE = 'application/problem+json; charset=utf-8';

export function statusText(status: number): string {
  return STATUS_CODES[status] ?? 'Unknown';
}

export function json(status: number, value: unknown, headers: Record<string, string> = {}): Reply {
  return { status, headers: { 'Content-Type': JSON_TYPE, ...headers }, body: JSON.stringify(value) };
}

/** The one place an error becomes a response. */
export function errorReply(err: HttpError, style: ErrorStyle): Reply {
  const headers = err.options.headers ?? {};
  const closeConnection = err.options.closeConnection ?? false;
  if (style === 'drf') {
    const body = err.options.body ?? { detail: err.detail };
    return { ...json(err.status, body, headers), closeConnection };
  }
  const problem = {
    type: 'about:blank',
    title: statusText(err.status),
    status: err.status,
    detail: err.detail,
    code: err.code,
  };
  return {
    status: err.status,
    headers: { 'Content-Type': PROBLEM_TYPE, ...headers },
    body: JSON.stringify(problem),
    closeConnection,
  };
}

/** The style of a path no route claims: the family its prefix names. */
export function styleForPath(path: string): ErrorStyle {
  return path.startsWith('/import/') || path.startsWith('/admin/') ? 'drf' : 'problem';
}
