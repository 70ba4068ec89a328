import type { Family } from '../../http/family.js';
import type { HttpServer } from '../../http/server.js';
import type { LegacyImport } from '../legacy-import/declaration.js';
import { legacyImportApi, type LegacyImportDeps } from '../legacy-import/index.js';
import { deprecatedPolicy } from '../deprecation.js';
import { v1FuelTypes } from '../reference.js';

/**
 * import v1: the legacy import API, deprecated and still served: signals per v1 fuel type (`700car`,
 * `350car`, `350bus`; it cannot carry the heavy-duty `700hd`) and the authoritative fuel-type list.
 */
export const IMPORT_V1: LegacyImport = {
  name: 'import_v1',
  prefix: '/import/v1/',
  label: 'import v1',
  accepts: 'import_v1',
  dialect: 'v1',
  fuelTypes: v1FuelTypes,
  activeStations: false,
  listed: 'Import API v1 (legacy, deprecated)',
  // Deprecated: every response says so and links v1.1's reference.
  policy: deprecatedPolicy('/import/v1.1/doc/'),
};

export function importV1Api(server: HttpServer, deps: LegacyImportDeps): Family {
  return legacyImportApi(server, IMPORT_V1, deps);
}
