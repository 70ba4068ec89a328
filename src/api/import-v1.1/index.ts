import type { ReferenceData } from '../../../db/queries/reference.js';
import { DRF_ERRORS } from '../../http/errors.js';
import type { Family } from '../../http/family.js';
import type { HttpServer } from '../../http/server.js';
import type { TokenFinder } from '../auth.js';
import { fuellingOptions, referenceApi, type ReferenceFamily } from '../reference.js';

/** import v1.1: the legacy import API with fuelling options (import v1/v1.1 tokens). */
export const IMPORT_V11: ReferenceFamily = {
  name: 'import_v1.1',
  prefix: '/import/v1.1/',
  label: 'import v1.1',
  accepts: 'import_v1',
  errors: DRF_ERRORS,
  lists: (reference) => ({ '/import/v1.1/fuel-type': fuellingOptions(reference) }),
};

/** The import v1.1 family and its routes. */
export function importV11Api(server: HttpServer, deps: { tokens: TokenFinder; reference: ReferenceData }): Family {
  return referenceApi(server, IMPORT_V11, deps);
}
