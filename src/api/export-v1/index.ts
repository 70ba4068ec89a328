import type { ReferenceData } from '../../../db/queries/reference.js';
import { PROBLEM_ERRORS } from '../../http/errors.js';
import type { Family } from '../../http/family.js';
import type { HttpServer } from '../../http/server.js';
import { tokenAuth, type TokenFinder } from '../auth.js';
import { v1FuelTypes } from '../reference.js';

/** export v1: the legacy export API (export v1/v1.1 tokens). */
export function exportV1Family(tokens: TokenFinder): Family {
  return { name: 'export_v1', prefix: '/v1/', auth: tokenAuth(tokens, { label: 'export v1', accepts: 'export_v1' }), errors: PROBLEM_ERRORS };
}

/** The export v1 family and its routes. */
export function exportV1Api(server: HttpServer, deps: { tokens: TokenFinder; reference: ReferenceData }): Family {
  const family = exportV1Family(deps.tokens);
  const list = v1FuelTypes(deps.reference);
  server.route({ family, method: 'GET', path: '/v1/fuel-type', handler: () => list });
  return family;
}
