import { brotliCompressSync, constants as zlib, gzipSync } from 'node:zlib';
import { JSON_TYPE } from './errors.js';

/**
 * Whether an `Accept-Encoding` header accepts gzip (RFC 9110 12.5.3): `gzip` or `x-gzip` or `*` with a
 * non-zero weight, unless gzip itself is refused with `q=0`.
 */
export function acceptsGzip(header: string | undefined): boolean {
  return accepts(header, ['gzip', 'x-gzip']);
}

/** Whether an `Accept-Encoding` header accepts brotli (`br`, or `*`), by the same rules as gzip. */
export function acceptsBrotli(header: string | undefined): boolean {
  return accepts(header, ['br']);
}

function accepts(header: string | undefined, names: readonly string[]): boolean {
  if (!header) return false;
  let wildcard = false;
  for (const part of header.split(',')) {
    const [name, ...params] = part.trim().toLowerCase().split(';');
    const q = params.map((p) => p.trim()).find((p) => p.startsWith('q='));
    const weight = q === undefined ? 1 : Number(q.slice(2));
    const accepted = Number.isFinite(weight) && weight > 0;
    if (names.includes(name!)) return accepted;
    if (name === '*') wildcard = accepted;
  }
  return wildcard;
}

/**
 * A response body kept in every encoding it may be sent in: the identity bytes, and gzip and brotli
 * each made on the first request that accepts it (gzip level 1: large JSON shrinks tenfold or more at
 * a few milliseconds; brotli quality 5: a fifth smaller again than gzip at a similar cost).
 */
export class EncodedBody {
  private gzipped: Buffer | undefined;
  private brotlied: Buffer | undefined;
  readonly identity: Buffer;

  constructor(text: string) {
    this.identity = Buffer.from(text, 'utf8');
  }

  get gzip(): Buffer {
    return (this.gzipped ??= gzipSync(this.identity, { level: 1 }));
  }

  get brotli(): Buffer {
    return (this.brotlied ??= brotliCompressSync(this.identity, {
      params: { [zlib.BROTLI_PARAM_QUALITY]: 5, [zlib.BROTLI_PARAM_MODE]: zlib.BROTLI_MODE_TEXT, [zlib.BROTLI_PARAM_SIZE_HINT]: this.identity.length },
    }));
  }
}

/** A 200 with a kept JSON body, gzip-encoded when the client accepts it (`Vary: Accept-Encoding`). */
export function encodedJson(req: { headers: Readonly<Record<string, string>> }, body: EncodedBody): { status: number; headers: Record<string, string>; body: Buffer } {
  return encodedBody(req, body, JSON_TYPE);
}

/**
 * A 200 with a kept body of the given type (and headers), gzip-encoded when the client accepts it, or
 * brotli-encoded when the route offers it (`options.brotli`) and the client accepts it (`Vary: Accept-Encoding`).
 */
export function encodedBody(
  req: { headers: Readonly<Record<string, string>> },
  body: EncodedBody,
  contentType: string,
  headers: Record<string, string> = {},
  options: { brotli?: boolean } = {},
): { status: number; headers: Record<string, string>; body: Buffer } {
  const accepted = req.headers['accept-encoding'];
  // Brotli only where a route offers it (the public map's feed): the other routes' clients were always sent gzip.
  const encoding = options.brotli && acceptsBrotli(accepted) ? 'br' : acceptsGzip(accepted) ? 'gzip' : undefined;
  return {
    status: 200,
    headers: { 'Content-Type': contentType, Vary: 'Accept-Encoding', ...headers, ...(encoding ? { 'Content-Encoding': encoding } : {}) },
    body: encoding === 'br' ? body.brotli : encoding === 'gzip' ? body.gzip : body.identity,
  };
}
