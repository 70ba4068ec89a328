import type { ReferenceData } from '../../../db/queries/reference.js';
import { DRF_ERRORS } from '../../http/errors.js';
import type { Family } from '../../http/family.js';
import type { HttpServer } from '../../http/server.js';
import type { TokenFinder } from '../auth.js';
import { v1FuelTypes, referenceApi, type ReferenceFamily } from '../reference.js';

/** import v1: the legacy import API; it publishes the authoritative v1 fuel-type list. */
export const IMPORT_V1: ReferenceFamily = {
  name: 'import_v1',
  prefix: '/import/v1/',
  label: 'import v1',
  accepts: 'import_v1',
  errors: DRF_ERRORS,
  lists: (reference) => ({ '/import/v1/fuel-type': v1FuelTypes(reference) }),
};

/** The import v1 family and its routes. */
export function importV1Api(server: HttpServer, deps: { tokens: TokenFinder; reference: ReferenceData }): Family {
  return referenceApi(server, IMPORT_V1, deps);
}
