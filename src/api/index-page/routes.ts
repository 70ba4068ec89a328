import { json, type Reply } from '../../http/errors.js';
import type { Family } from '../../http/family.js';
import type { Request } from '../../http/request.js';
import type { HttpServer } from '../../http/server.js';
import { SAME_ORIGIN_PAGE } from '../../http/page-files.js';
import { FAVICON_PATH, shellRoutes } from './shell.js';
import { documentSites, type DocSite } from '../docs/routes.js';

/**
 * `GET /`: a small index of the service's pages, so whoever opens the root finds the documents, the
 * dashboard, health and metrics. JSON by default (a contract: its bytes do not change with the map);
 * HTML when the client prefers `text/html` (a browser): the public map when it is served (`mapPage`),
 * else the "For developers" page, which is always at `/developers/` too, styled like the portal.
 */

export interface IndexDeps {
  /** The absolute base of links (BASE_URL, or the address listened on). */
  baseUrl: () => string;
  version: string;
  /** The data users' status stream (a WebSocket). */
  streamPath: string;
  /** The public map's page, a browser's answer at `/` (absent with PUBLIC_MAP=false). */
  mapPage?: (req: Request) => Reply;
}

/** Where the "For developers" page is. */
export const DEVELOPERS_PATH = '/developers/';

/** One page of the index: a stable name, where it is, what it is, and what it takes. */
export interface IndexPage {
  rel: string;
  href: string;
  title: string;
  auth: string;
}

/** A row of the index before its link is made absolute: its path, or the stream's. */
type IndexRow = Omit<IndexPage, 'href'> & { path: string };

/**
 * The rows before the references and after them: each with its own name, words and credential. The
 * references come between them, one per registered document (../docs/routes.ts), in registration order.
 */
const BEFORE_REFERENCES: readonly IndexRow[] = [
  { rel: 'portal', path: '/portal/', title: 'Portal: API tokens, stations and originators', auth: 'a sign-in link e-mailed to a portal account' },
];
const AFTER_REFERENCES: readonly IndexRow[] = [
  { rel: 'admin', path: '/admin/', title: 'Admins\' live dashboard', auth: 'ADMIN_TOKEN' },
  { rel: 'healthz', path: '/healthz', title: 'Liveness: the process answers', auth: 'none' },
  { rel: 'readyz', path: '/readyz', title: 'Readiness: PostgreSQL and Redis answer and the instance is not stopping', auth: 'none' },
  { rel: 'metrics', path: '/metrics', title: 'Prometheus metrics', auth: 'METRICS_TOKEN or ADMIN_TOKEN' },
];
const STATUS_STREAM = { rel: 'status_stream', title: 'Live status stream (WebSocket)', auth: 'export v2 token' };

/** A registered document's row: its reference page, under the family's name. */
const referenceRow = ({ family, document }: DocSite): IndexRow => ({
  rel: `${family.name}_doc`,
  path: `${document.path}/`,
  title: `${document.listed}: reference (OpenAPI document at ${document.path}/schema)`,
  auth: 'none',
});

/** Registers `GET /` on a family of public routes (the root's), with the icon and the pages' redirects (./shell.ts). */
export function indexRoutes(server: HttpServer, family: Family, deps: IndexDeps): void {
  // The documents are registered after these routes (last of all): their rows are read on the first answer.
  let rows: IndexRow[] | undefined;
  const pages = () => indexPages(deps, (rows ??= [...BEFORE_REFERENCES, ...documentSites(server).map(referenceRow), ...AFTER_REFERENCES]));
  server.route({ family, public: true, method: 'GET', path: '/', handler: (req) => indexReply(req, deps, pages()) });
  server.route({ family, public: true, method: 'GET', path: DEVELOPERS_PATH, handler: () => developersReply(deps, pages(), {}) });
  shellRoutes(server, family);
}

/** The pages with absolute links, the status stream last; its link is its `ws:`/`wss:` URL. */
function indexPages(deps: IndexDeps, rows: readonly IndexRow[]): IndexPage[] {
  const base = deps.baseUrl().replace(/\/+$/, '');
  const socketBase = base.replace(/^http/, 'ws');
  return [...rows.map(({ path, ...page }) => ({ ...page, href: `${base}${path}` })), { ...STATUS_STREAM, href: `${socketBase}${deps.streamPath}` }];
}

function indexReply(req: Request, deps: IndexDeps, pages: IndexPage[]): Reply {
  const headers = { Vary: 'Accept', 'Cache-Control': 'no-cache' };
  if (!prefersHtml(req.headers.accept)) return json(200, { service: 'HRS signal platform', version: deps.version, pages }, headers);
  if (deps.mapPage) return deps.mapPage(req);
  return developersReply(deps, pages, headers);
}

/** The "For developers" page: the index as HTML, under the portal's style sheet and policy. */
function developersReply(deps: IndexDeps, pages: IndexPage[], headers: Record<string, string>): Reply {
  const body = html(pages, deps.version, deps.mapPage !== undefined);
  return { status: 200, headers: { 'Cache-Control': 'no-cache', ...headers, ...SAME_ORIGIN_PAGE, 'Content-Type': 'text/html; charset=utf-8' }, body };
}

/** Whether `Accept` ranks `text/html` above `application/json` (equal, `*∕*` or absent: JSON). */
export function prefersHtml(accept: string | undefined): boolean {
  if (!accept) return false;
  const quality = (type: string): number => {
    let best = 0;
    let bestSpecificity = -1;
    for (const part of accept.split(',')) {
      const [range = '', ...params] = part.trim().toLowerCase().split(';');
      const q = Number(params.map((p) => p.trim()).find((p) => p.startsWith('q='))?.slice(2) ?? '1');
      const [main, sub] = range.trim().split('/');
      const specificity = range.trim() === type ? 2 : sub === '*' && main === type.split('/')[0] ? 1 : range.trim() === '*/*' ? 0 : -1;
      if (specificity > bestSpecificity && Number.isFinite(q)) [best, bestSpecificity] = [q, specificity];
    }
    return best;
  };
  return quality('text/html') > quality('application/json');
}

function html(pages: IndexPage[], version: string, withMap: boolean): string {
  // The title is the link's text (what a screen reader lists); the address follows it as text.
  const items = pages
    .map((p) => `<li class="card"><a href="${escape(p.href)}">${escape(p.title)}</a> <small class="muted">(auth: ${escape(p.auth)})</small><br><code class="mono">${escape(p.href)}</code></li>`)
    .join('\n');
  const mapLink = withMap ? '<nav class="workspaces" aria-label="Pages"><a class="button button-ghost" href="/">Station map</a></nav>' : '';
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><title>For developers: HRS signal platform</title><link rel="icon" href="${FAVICON_PATH}" type="image/svg+xml"><link rel="stylesheet" href="/portal/portal.css"></head>
<body><header class="topbar"><div class="brand"><span class="brand-mark" aria-hidden="true">H₂</span><div><p class="brand-title">HRS signal platform</p><p class="subtitle">For developers</p></div></div>${mapLink}</header>
<main id="main" class="developers"><h1>HRS signal platform <small>${escape(version)}</small></h1>
<p class="muted">The service's pages, API references and machine endpoints.</p>
<ul class="index-list">
${items}
</ul></main></body></html>
`;
}

function escape(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}
