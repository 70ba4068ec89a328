import { readFileSync } from 'node:fs';
import { extname } from 'node:path';
import type { Family } from './family.js';
import type { HttpServer } from './server.js';
import { serve, staticBody, type Static } from './static.js';

/**
 * The service's own web pages (the portal's, the admins' dashboard, the public map): each a folder of
 * src/browser/ (its ES modules, style sheets and HTML) served as they are by routes of its family,
 * under the strict policy below. No CDN, no build step. The words a page shows that the platform
 * owns (categories, states, kinds: src/domain/page-words.ts) come as one more module, `vocabulary.js`,
 * made at start from the values its family hands over.
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

/** The folder of src/browser/ holding a page's files (`portal`, `dashboard`, `map`, `shared`). */
export function browserDir(page: string): URL {
  return new URL(`../browser/${page}/`, import.meta.url);
}

/** An ES module exporting each of `values` as a constant (JSON-serialisable values only). */
export function constantsModule(values: Record<string, unknown>): string {
  const lines = Object.entries(values).map(([name, value]) => `export const ${name} = ${JSON.stringify(value)};`);
  return `// Made by the server at start: the words the pages show that the platform owns.\n${lines.join('\n')}\n`;
}

/**
 * The `files` of the folder `dir`, read once, served under `prefix` (`index.html` as the prefix
 * itself), revalidated on every use (`no-cache`); with `vocabulary`, that module as `{prefix}vocabulary.js`;
 * under `security` (the strict same-origin policy unless a page needs more).
 */
export function pageFileRoutes(
  server: HttpServer, family: Family, prefix: string, dir: URL, files: readonly string[], vocabulary?: Record<string, unknown>,
  security: Record<string, string> = SAME_ORIGIN_PAGE,
): void {
  const route = (path: string, body: Static) =>
    server.route({ family, public: true, method: 'GET', path, handler: (req) => serve(req, body, 'no-cache', security) });
  for (const file of files) route(file === 'index.html' ? prefix : `${prefix}${file}`, staticBody(readFileSync(new URL(file, dir)), TYPES[extname(file)]!));
  if (vocabulary) route(`${prefix}vocabulary.js`, staticBody(constantsModule(vocabulary), TYPES['.js']!));
}
