import { documentSites } from '../../src/api/docs/routes.js';
import type { HttpServer } from '../../src/http/server.js';

/** Where each documented family's document is served, and its page's title, as the family values declare them. */
export interface DocSite {
  family: string;
  prefix: string;
  title: string;
}

/** The documented families of a started platform (its server), in registration order. */
export function docSites(server: HttpServer): DocSite[] {
  return documentSites(server).map(({ family, document }) => ({ family: family.name, prefix: document.path, title: document.title }));
}
