import type { Family } from '../../http/family.js';
import type { HttpServer } from '../../http/server.js';
import type { LegacyImport } from '../legacy-import/declaration.js';
import { legacyImportApi, type LegacyImportDeps } from '../legacy-import/index.js';
import { fuellingOptions } from '../reference.js';

/**
 * import v1.1: the legacy import API with the four fuelling options (`700ld`, `350ld`, `700hd`,
 * `350hd`), import v1/v1.1 tokens, and the stations the token's originator reports on.
 */
export const IMPORT_V11: LegacyImport = {
  name: 'import_v1.1',
  prefix: '/import/v1.1/',
  label: 'import v1.1',
  accepts: 'import_v1',
  dialect: 'v1.1',
  fuelTypes: fuellingOptions,
  activeStations: true,
  listed: 'Import API v1.1 (legacy)',
};

export function importV11Api(server: HttpServer, deps: LegacyImportDeps): Family {
  return legacyImportApi(server, IMPORT_V11, deps);
}
