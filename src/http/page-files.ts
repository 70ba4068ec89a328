import { readFileSync } from 'node:fs';
import { extname } from 'node:path';
import type { Family } from './family.js';
import type { HttpServer } from './server.js';
import { serve, staticBody } from './static.js';

/**
 * The service's own web pages (the portal's, the admins' dashboard): each a folder of files served
 * as they are, public routes of its family, under the strict policy below. No CDN, no build step.
 */

/** Everything a page loads comes from this service; what it calls (API, WebSocket) is same-origin. */
export const SAME_ORIGIN_PAGE = {
  'Content-Security-Policy':
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; " +
    "base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
  'Referrer-Policy': 'no-referrer',
};

const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
};

/**
 * The `files` of the folder `dir`, read once, served under `prefix` (`index.html` as the prefix
 * itself), revalidated on every use (`no-cache`).
 */
export function pageFileRoutes(server: HttpServer, family: Family, prefix: string, dir: URL, files: readonly string[]): void {
  for (const file of files) {
    const body = staticBody(readFileSync(new URL(file, dir)), TYPES[extname(file)]!);
    const path = file === 'index.html' ? prefix : `${prefix}${file}`;
    server.route({ family, public: true, method: 'GET', path, handler: (req) => serve(req, body, 'no-cache', SAME_ORIGIN_PAGE) });
  }
}
