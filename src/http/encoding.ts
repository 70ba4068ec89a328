import { gzipSync } from 'node:zlib';
import { JSON_TYPE } from './errors.js';

/**
 * Whether an `Accept-Encoding` header accepts gzip (RFC 9110 12.5.3): `gzip` or `x-gzip` or `*` with a
 * non-zero weight, unless gzip itself is refused with `q=0`.
 */
export function acceptsGzip(header: string | undefined): boolean {
  if (!header) return false;
  let wildcard = false;
  for (const part of header.split(',')) {
    const [name, ...params] = part.trim().toLowerCase().split(';');
    const q = params.map((p) => p.trim()).find((p) => p.startsWith('q='));
    const weight = q === undefined ? 1 : Number(q.slice(2));
    const accepted = Number.isFinite(weight) && weight > 0;
    if (name === 'gzip' || name === 'x-gzip') return accepted;
    if (name === '*') wildcard = accepted;
  }
  return wildcard;
}

/**
 * A response body kept in both encodings it may be sent in: the identity bytes, and gzip made on the
 * first request that accepts it (level 1: large JSON shrinks tenfold or more at a few milliseconds).
 */
export class EncodedBody {
  private gzipped: Buffer | undefined;
  readonly identity: Buffer;

  constructor(text: string) {
    this.identity = Buffer.from(text, 'utf8');
  }

  get gzip(): Buffer {
    return (this.gzipped ??= gzipSync(this.identity, { level: 1 }));
  }
}

/** A 200 with a kept JSON body, gzip-encoded when the client accepts it (`Vary: Accept-Encoding`). */
export function encodedJson(req: { headers: Readonly<Record<string, string>> }, body: EncodedBody): { status: number; headers: Record<string, string>; body: Buffer } {
  return encodedBody(req, body, JSON_TYPE);
}

/** A 200 with a kept body of the given type (and headers), gzip-encoded when the client accepts it (`Vary: Accept-Encoding`). */
export function encodedBody(
  req: { headers: Readonly<Record<string, string>> },
  body: EncodedBody,
  contentType: string,
  headers: Record<string, string> = {},
): { status: number; headers: Record<string, string>; body: Buffer } {
  const gzip = acceptsGzip(req.headers['accept-encoding']);
  return {
    status: 200,
    headers: { 'Content-Type': contentType, Vary: 'Accept-Encoding', ...headers, ...(gzip ? { 'Content-Encoding': 'gzip' } : {}) },
    body: gzip ? body.gzip : body.identity,
  };
}
