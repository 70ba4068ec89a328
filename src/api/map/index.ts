import type { HttpServer } from '../../http/server.js';
import { mapFamily } from './family.js';
import { mapPageRoutes } from './page.js';

/**
 * The public map and its feed (`/map/…`, and the map page at `/`): served unless PUBLIC_MAP=false.
 */
export interface MapDeps {
  enabled: boolean;
  styleUrl: string | undefined;
}

export function mapApi(server: HttpServer, deps: MapDeps): void {
  if (!deps.enabled) return;
  const family = mapFamily();
  server.family(family);
  mapPageRoutes(server, family, { styleUrl: deps.styleUrl });
}
