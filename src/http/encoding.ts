import { brotliCompressSync, constants as zlib, gzipSync } from 'node:zlib';
import { JSON_TYPE } from './errors.js';

/**
 * Whether an `Accept-Encoding` header accepts gzip (RFC 9110 12.5.3): `gzip` or `x-gzip` or `*` with a
 * non-zero weight, unless gzip itself is refused with `q=0`.
 */
export function acceptsGzip(header: string | undefined): boolean {
  return weight(header, ['gzip', 'x-gzip']) > 0;
}

/** The weight (`q`, 0 to 1) an `Accept-Encoding` header gives a coding by one of its names, else `*`'s; 0 when neither is listed. */
function weight(header: string | undefined, names: readonly string[]): number {
  if (!header) return 0;
  let wildcard = 0;
  for (const part of header.split(',')) {
    const [name, ...params] = part.trim().toLowerCase().split(';');
    const q = params.map((p) => p.trim()).find((p) => p.startsWith('q='));
    const given = q === undefined ? 1 : Number(q.slice(2));
    const value = Number.isFinite(given) && given > 0 ? Math.min(given, 1) : 0;
    if (names.includes(name!)) return value;
    if (name === '*') wildcard = value;
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

  /** Text, or bytes already encoded as UTF-8 (kept as they are). */
  constructor(text: string | Buffer) {
    this.identity = typeof text === 'string' ? Buffer.from(text, 'utf8') : text;
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
  // Brotli only where a route offers it (the public map's feed): the other routes' clients were always
  // sent gzip. Between the two the client's weights decide; on equal weights brotli, the smaller.
  const gzip = weight(accepted, ['gzip', 'x-gzip']);
  const brotli = options.brotli ? weight(accepted, ['br']) : 0;
  const encoding = brotli > 0 && brotli >= gzip ? 'br' : gzip > 0 ? 'gzip' : undefined;
  return {
    status: 200,
    headers: { 'Content-Type': contentType, Vary: 'Accept-Encoding', ...headers, ...(encoding ? { 'Content-Encoding': encoding } : {}) },
    body: encoding === 'br' ? body.brotli : encoding === 'gzip' ? body.gzip : body.identity,
  };
}
