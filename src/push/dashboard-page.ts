import { PAGE_WORDS } from '../domain/page-words.js';
import type { Family } from '../http/family.js';
import { browserDir, pageFileRoutes } from '../http/page-files.js';
import type { HttpServer } from '../http/server.js';

/**
 * The admins' live dashboard: a page, its ES modules and style sheets from src/browser/dashboard/, and
 * `vocabulary.js` (the words the domain owns), served by the service itself (no CDN, no build step). The page asks for the admin token and uses it only on the
 * live feed's WebSocket (`/admin/v1/live`, first message); serving the files needs no token.
 */

const FILES = ['index.html', 'cells.js', 'rows.js', 'dashboard.js', 'stations.js', 'tail.js', 'filters.js', 'originators.js', 'expiring.js', 'dashboard.css', 'stations.css', 'panels.css'];

/** The page's files, public routes of the admin family (the feed is a same-origin WebSocket). */
export function dashboardRoutes(server: HttpServer, family: Family): void {
  pageFileRoutes(server, family, '/admin/', browserDir('dashboard'), FILES, PAGE_WORDS);
}
