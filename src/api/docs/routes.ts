import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { notFound } from '../../http/errors.js';
import type { HttpServer } from '../../http/server.js';
import { serve, staticBody, type Static } from '../../http/static.js';
import type { ReferenceData } from '../../../db/queries/reference.js';
import type { Config } from '../../config/config.js';
import type { Family } from '../../http/family.js';
import { textQuery } from '../../http/query.js';
import { FAVICON_PATH } from '../index-page/shell.js';
import { browserDir } from '../../http/page-files.js';
import { buildDocument, type DocContext, type FamilyDocument, type OpenApiDocument } from '../../http/openapi.js';

/**
 * The machine-readable documents and their interactive reference pages, without a token, for every
 * family that declares a document (`document` of its family value):
 *
 * - `GET {path}/schema`: the OpenAPI 3.1 document (JSON), built once here, at start;
 * - `GET {path}/`: Swagger UI, its assets served from the `swagger-ui-dist` package under
 *   `{path}/assets/` (no CDN: the page works without internet access).
 *
 * Registered after every other route: building a document fails (and so the start) when a route of
 * its family has no description.
 */

/** A documented family and its document, as registered with the server. */
export interface DocSite {
  family: Family;
  document: FamilyDocument;
}

/** The registered families that declare a document, in registration order. */
export function documentSites(server: HttpServer): DocSite[] {
  return server.registeredFamilies().flatMap((family) => (family.document ? [{ family, document: family.document }] : []));
}

const require = createRequire(import.meta.url);

const JS = 'text/javascript; charset=utf-8';
const CSS = 'text/css; charset=utf-8';

/** The Swagger UI files the page uses, read once from the installed package. */
function swaggerUiAssets(): Map<string, Static> {
  const dir = dirname(require.resolve('swagger-ui-dist/package.json'));
  const files: [string, string][] = [
    ['swagger-ui-bundle.js', JS],
    ['swagger-ui.css', CSS],
  ];
  const assets = new Map<string, Static>();
  for (const [name, type] of files) assets.set(name, staticBody(readFileSync(join(dir, name)), type));
  // The page's own module (src/browser/docs/): Swagger UI on the document beside the page.
  assets.set('init.js', staticBody(readFileSync(new URL('init.js', browserDir('docs'))), JS));
  return assets;
}

function page(title: string, assets: Map<string, Static>): string {
  const asset = (name: string) => `assets/${name}?v=${assets.get(name)!.version}`;
  const escape = (text: string) => text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/"/g, '&quot;');
  return `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escape(title)}</title>
<link rel="stylesheet" href="${asset('swagger-ui.css')}">
<link rel="icon" href="${FAVICON_PATH}" type="image/svg+xml">
</head>
<body>
<noscript><p>This reference needs JavaScript. The OpenAPI document itself is at <a href="schema">schema</a>.</p></noscript>
<div id="swagger-ui"></div>
<script src="${asset('swagger-ui-bundle.js')}"></script>
<script type="module" src="${asset('init.js')}"></script>
</body>
</html>
`;
}

/** The page may load only what this service serves (Swagger UI styles inline and uses data: images). */
const PAGE_SECURITY = {
  'Content-Security-Policy':
    "default-src 'none'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; " +
    "connect-src 'self'; font-src 'self' data:; base-uri 'self'; form-action 'self'; frame-ancestors 'none'",
  'X-Content-Type-Options': 'nosniff',
  'Referrer-Policy': 'no-referrer',
};

/** Builds every document from the routes registered so far, by family name; throws when a route lacks a description. */
export function buildDocuments(server: HttpServer, deps: DocDeps): Map<string, OpenApiDocument> {
  const context: DocContext = { config: deps.config, reference: deps.reference, version: serviceVersion() };
  const routes = server.routes();
  return new Map(documentSites(server).map(({ family, document }) => [family.name, buildDocument(document.define(context), routes)]));
}

export interface DocDeps {
  config: Config;
  reference: ReferenceData;
}

export function docRoutes(server: HttpServer, deps: DocDeps): void {
  const documents = buildDocuments(server, deps);
  const assets = swaggerUiAssets();
  for (const { family, document } of documentSites(server)) {
    const schema = staticBody(JSON.stringify(documents.get(family.name)), 'application/json; charset=utf-8');
    const html = staticBody(page(document.title, assets), 'text/html; charset=utf-8');
    const path = document.path;
    // The document and the page change with a deployment: revalidated on every use (ETag, 304).
    server.route({ family, public: true, method: 'GET', path: `${path}/schema`, handler: (req) => serve(req, schema, 'no-cache') });
    server.route({ family, public: true, method: 'GET', path: `${path}/`, handler: (req) => serve(req, html, 'no-cache', PAGE_SECURITY) });
    // Assets are addressed by content hash (`?v=`) from the page: cached for a year, never revalidated.
    server.route({
      family,
      public: true,
      method: 'GET',
      path: `${path}/assets/:name`,
      query: textQuery('v'),
      handler: (req) => {
        const asset = assets.get(req.params.name!);
        if (!asset) throw notFound();
        return serve(req, asset, 'public, max-age=31536000, immutable');
      },
    });
  }
}

let version: string | undefined;

/** The service's version (package.json), the documents' `info.version`. */
export function serviceVersion(): string {
  return (version ??= (JSON.parse(readFileSync(new URL('../../../package.json', import.meta.url), 'utf8')) as { version: string }).version);
}
