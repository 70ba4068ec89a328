import { readFileSync } from 'node:fs';
import type { Reply } from '../../http/errors.js';
import type { Family } from '../../http/family.js';
import type { Request } from '../../http/request.js';
import type { HttpServer } from '../../http/server.js';
import { ANY_QUERY } from '../../http/query.js';
import { serve, staticBody } from '../../http/static.js';
import { browserDir } from '../../http/page-files.js';

/**
 * What a browser asks of the service beside its pages: the icon every page names
 * (`<link rel="icon" href="/favicon.svg">`), `/favicon.ico` (asked for by browsers on their own: the
 * same icon), and the pages' folders typed without their slash (`/portal`, `/admin`), redirected to
 * the page with a 308 that keeps the query string.
 */

/** Where the icon is served; the pages' heads name it. */
export const FAVICON_PATH = '/favicon.svg';

const ICON = staticBody(readFileSync(new URL('favicon.svg', browserDir('shared'))), 'image/svg+xml');

/** The pages whose folder a browser may be given without its trailing slash. */
export const PAGE_FOLDERS = ['/portal', '/admin', '/developers'] as const;

/** The icon is the same for every release of a page: cached for a day, revalidated after. */
const ICON_CACHE = 'public, max-age=86400';

export function shellRoutes(server: HttpServer, family: Family): void {
  for (const path of [FAVICON_PATH, '/favicon.ico']) {
    server.route({ family, public: true, method: 'GET', path, handler: (req) => serve(req, ICON, ICON_CACHE) });
  }
  for (const folder of PAGE_FOLDERS) {
    server.route({ family, public: true, method: 'GET', path: folder, query: ANY_QUERY, handler: (req) => toFolder(req, `${folder}/`) });
  }
}

/** A permanent redirect to the page's folder, the query string kept as it came. */
function toFolder(req: Request, folder: string): Reply {
  const query = req.hasQuery ? `?${req.query.toString()}` : '';
  return { status: 308, headers: { Location: `${folder}${query}`, 'Cache-Control': 'no-cache' } };
}
