import { readFileSync } from 'node:fs';
import type { Family } from '../../http/family.js';
import type { HttpServer } from '../../http/server.js';
import { serve, staticBody } from '../../http/static.js';

/**
 * The portal's web page: a page, its scripts (portal.js: sign-in and personal tokens; registry.js:
 * operator staff's and originator managers' views; layout-editor.js: the draft layout as a form;
 * timeline.js: a station's signals, timeline and reliability) and style sheets from ./page/, served by the service
 * itself (no CDN, no build step). The page talks to the portal's JSON API under `/portal/v1/` on the
 * same origin, with the session cookie the browser sends by itself; serving the files needs no session.
 */

const FILES = [
  { path: '/portal/', file: 'index.html', type: 'text/html; charset=utf-8' },
  { path: '/portal/portal.js', file: 'portal.js', type: 'text/javascript; charset=utf-8' },
  { path: '/portal/registry.js', file: 'registry.js', type: 'text/javascript; charset=utf-8' },
  { path: '/portal/layout-editor.js', file: 'layout-editor.js', type: 'text/javascript; charset=utf-8' },
  { path: '/portal/timeline.js', file: 'timeline.js', type: 'text/javascript; charset=utf-8' },
  { path: '/portal/portal.css', file: 'portal.css', type: 'text/css; charset=utf-8' },
  { path: '/portal/registry.css', file: 'registry.css', type: 'text/css; charset=utf-8' },
  { path: '/portal/timeline.css', file: 'timeline.css', type: 'text/css; charset=utf-8' },
] as const;

/** Everything the page loads comes from this service; the API it calls is same-origin. */
export const PORTAL_PAGE_SECURITY = {
  'Content-Security-Policy':
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; " +
    "base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
  'Referrer-Policy': 'no-referrer',
};

/** The page's files, public routes of the portal family. */
export function portalPageRoutes(server: HttpServer, family: Family): void {
  for (const { path, file, type } of FILES) {
    const body = staticBody(readFileSync(new URL(`./page/${file}`, import.meta.url)), type);
    server.route({ family, public: true, method: 'GET', path, handler: (req) => serve(req, body, 'no-cache', PORTAL_PAGE_SECURITY) });
  }
}
