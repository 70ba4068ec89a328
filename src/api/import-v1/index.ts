import type { ReferenceData } from '../../../db/queries/reference.js';
import { DRF_ERRORS } from '../../http/errors.js';
import type { Family } from '../../http/family.js';
import type { HttpServer } from '../../http/server.js';
import { tokenAuth, type TokenFinder } from '../auth.js';
import { v1FuelTypes } from '../reference.js';

/** import v1: the legacy import API; it publishes the authoritative v1 fuel-type list. */
export function importV1Family(tokens: TokenFinder): Family {
  return { name: 'import_v1', prefix: '/import/v1/', auth: tokenAuth(tokens, { label: 'import v1', accepts: 'import_v1' }), errors: DRF_ERRORS };
}

/** The import v1 family and its routes. */
export function importV1Api(server: HttpServer, deps: { tokens: TokenFinder; reference: ReferenceData }): Family {
  const family = importV1Family(deps.tokens);
  const list = v1FuelTypes(deps.reference);
  server.route({ family, method: 'GET', path: '/import/v1/fuel-type', handler: () => list });
  return family;
}
