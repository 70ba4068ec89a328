import { readFileSync } from 'node:fs';
import type { Family } from '../http/family.js';
import type { HttpServer } from '../http/server.js';
import { serve, staticBody } from '../http/static.js';

/**
 * The admins' live dashboard: a page, its scripts and a style sheet from ./dashboard/, served by the
 * service itself (no CDN, no build step). The page asks for the admin token and uses it only on the
 * live feed's WebSocket (`/admin/v1/live`, first message); serving the files needs no token.
 */

const FILES = [
  { path: '/admin/', file: 'index.html', type: 'text/html; charset=utf-8' },
  { path: '/admin/dashboard.js', file: 'dashboard.js', type: 'text/javascript; charset=utf-8' },
  { path: '/admin/originators.js', file: 'originators.js', type: 'text/javascript; charset=utf-8' },
  { path: '/admin/expiring.js', file: 'expiring.js', type: 'text/javascript; charset=utf-8' },
  { path: '/admin/dashboard.css', file: 'dashboard.css', type: 'text/css; charset=utf-8' },
] as const;

/** Everything the page loads comes from this service; the feed is a same-origin WebSocket. */
const PAGE_SECURITY = {
  'Content-Security-Policy':
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; " +
    "base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
  'Referrer-Policy': 'no-referrer',
};

/** The page's files, public routes of the admin family. */
export function dashboardRoutes(server: HttpServer, family: Family): void {
  for (const { path, file, type } of FILES) {
    const body = staticBody(readFileSync(new URL(`./dashboard/${file}`, import.meta.url)), type);
    server.route({ family, public: true, method: 'GET', path, handler: (req) => serve(req, body, 'no-cache', PAGE_SECURITY) });
  }
}
