import { createHash } from 'node:crypto';
import { gzipSync } from 'node:zlib';
import { acceptsGzip } from './encoding.js';
import type { Reply } from './errors.js';
import type { Request } from './request.js';

/** Files served as they are (documents, reference pages, the dashboard): validators, gzip, 304s. */

/** Bytes served as they are, gzip-encoded on the first request that accepts it (text only). */
export class Bytes {
  private gzipped: Buffer | undefined;
  constructor(readonly identity: Buffer) {}
  get gzip(): Buffer {
    return (this.gzipped ??= gzipSync(this.identity));
  }
}

/** A body served as is: its bytes, type, validator. */
export interface Static {
  type: string;
  body: Bytes;
  compressible: boolean;
  etag: string;
  /** A short content hash, for cache-busting asset URLs. */
  version: string;
}

export function staticBody(content: string | Buffer, type: string): Static {
  const bytes = typeof content === 'string' ? Buffer.from(content, 'utf8') : content;
  const body = new Bytes(bytes);
  const hash = createHash('sha256').update(bytes).digest('base64url');
  return { type, body, compressible: !type.startsWith('image/'), etag: `"${hash.slice(0, 27)}"`, version: hash.slice(0, 12) };
}

/** Whether `If-None-Match` names this ETag (weak comparison, as RFC 9110 13.1.2 asks for GET). */
export function notModified(req: Request, etag: string): boolean {
  const header = req.headers['if-none-match'];
  if (header === undefined) return false;
  return header.split(',').some((tag) => {
    const t = tag.trim();
    return t === '*' || t.replace(/^W\//, '') === etag;
  });
}

export function serve(req: Request, item: Static, cacheControl: string, extra: Record<string, string> = {}): Reply {
  const headers: Record<string, string> = { 'Cache-Control': cacheControl, ETag: item.etag, ...extra };
  if (item.compressible) headers.Vary = 'Accept-Encoding';
  if (notModified(req, item.etag)) return { status: 304, headers };
  const gzip = item.compressible && acceptsGzip(req.headers['accept-encoding']);
  if (gzip) headers['Content-Encoding'] = 'gzip';
  return { status: 200, headers: { 'Content-Type': item.type, 'X-Content-Type-Options': 'nosniff', ...headers }, body: gzip ? item.body.gzip : item.body.identity };
}

