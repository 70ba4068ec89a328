import { PAGE_WORDS } from '../../domain/page-words.js';
import type { Family } from '../../http/family.js';
import { browserDir, pageFileRoutes, SAME_ORIGIN_PAGE } from '../../http/page-files.js';
import type { HttpServer } from '../../http/server.js';

/**
 * The portal's web page: a page, its ES modules and style sheets from src/browser/portal/ (portal.js the
 * entry; account.js, session.js, tokens.js and value.js: sign-in and personal tokens; webhooks.js,
 * webhook-view.js, webhook-form.js and webhook-common.js: the user's webhook subscriptions; registry.js,
 * stations.js and originators.js: operator staff's and originator managers' views; layout-pane.js and station-events.js: a station's
 * Layout and Events tabs; station-pin.js: the station's pin on a map in its record; zones.js: time zones' clocks; layout-editor.js: the draft layout as a form; timeline.js: a station's
 * signals, timeline and reliability; forecast.js: its forecast; router.js: an address per view) and `vocabulary.js` (the words the
 * domain owns, src/domain/page-words.ts), served by the service itself (no CDN, no build step). The page
 * talks to the portal's JSON API under `/portal/v1/` on the same origin, with the session cookie the
 * browser sends by itself; serving the files needs no session.
 */

const FILES = [
  'index.html', 'portal.js', 'api.js', 'page.js', 'dates.js', 'account.js', 'session.js', 'tokens.js', 'value.js',
  'webhook-common.js', 'webhook-form.js', 'webhooks.js', 'webhook-view.js',
  'registry.js', 'registry-parts.js', 'stations.js', 'originators.js', 'layout-editor.js', 'layout-pane.js', 'station-events.js', 'station-pin.js', 'zones.js', 'timeline.js', 'forecast.js', 'router.js',
  'portal.css', 'registry.css', 'timeline.css', 'webhooks.css',
];

/**
 * Everything the page loads comes from this service; the API it calls is same-origin. The strict
 * policy, widened for the station pin's map only (station-pin.js, MapLibre from `/map/vendor/`): its
 * module worker (`worker-src 'self'`), the images it decodes through blob URLs (`img-src blob:`) and the
 * labels' font files (`font-src 'self'`).
 */
export const PORTAL_PAGE_SECURITY = {
  ...SAME_ORIGIN_PAGE,
  'Content-Security-Policy':
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data: blob:; connect-src 'self'; font-src 'self'; worker-src 'self'; " +
    "base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
};

/** The page's files, public routes of the portal family. */
export function portalPageRoutes(server: HttpServer, family: Family): void {
  pageFileRoutes(server, family, '/portal/', browserDir('portal'), FILES, PAGE_WORDS, PORTAL_PAGE_SECURITY);
}
