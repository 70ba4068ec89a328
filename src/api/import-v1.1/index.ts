import type { ReferenceData } from '../../../db/queries/reference.js';
import { DRF_ERRORS } from '../../http/errors.js';
import type { Family } from '../../http/family.js';
import type { HttpServer } from '../../http/server.js';
import { tokenAuth, type TokenFinder } from '../auth.js';
import { fuellingOptions } from '../reference.js';

/** import v1.1: the legacy import API with fuelling options (import v1/v1.1 tokens). */
export function importV11Family(tokens: TokenFinder): Family {
  return { name: 'import_v1.1', prefix: '/import/v1.1/', auth: tokenAuth(tokens, { label: 'import v1.1', accepts: 'import_v1' }), errors: DRF_ERRORS };
}

/** The import v1.1 family and its routes. */
export function importV11Api(server: HttpServer, deps: { tokens: TokenFinder; reference: ReferenceData }): Family {
  const family = importV11Family(deps.tokens);
  const list = fuellingOptions(deps.reference);
  server.route({ family, method: 'GET', path: '/import/v1.1/fuel-type', handler: () => list });
  return family;
}
