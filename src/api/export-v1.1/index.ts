import type { ReferenceData } from '../../../db/queries/reference.js';
import { PROBLEM_ERRORS } from '../../http/errors.js';
import type { Family } from '../../http/family.js';
import type { HttpServer } from '../../http/server.js';
import { tokenAuth, type TokenFinder } from '../auth.js';
import { fuellingOptions, vehicleTypes } from '../reference.js';

/** export v1.1: the legacy export API with fuelling options and vehicle types (export v1/v1.1 tokens). */
export function exportV11Family(tokens: TokenFinder): Family {
  return { name: 'export_v1.1', prefix: '/v1.1/', auth: tokenAuth(tokens, { label: 'export v1.1', accepts: 'export_v1' }), errors: PROBLEM_ERRORS };
}

/** The export v1.1 family and its routes. */
export function exportV11Api(server: HttpServer, deps: { tokens: TokenFinder; reference: ReferenceData }): Family {
  const family = exportV11Family(deps.tokens);
  const options = fuellingOptions(deps.reference);
  const vehicles = vehicleTypes(deps.reference);
  server.route({ family, method: 'GET', path: '/v1.1/fuel-type', handler: () => options });
  server.route({ family, method: 'GET', path: '/v1.1/vehicle-type', handler: () => vehicles });
  return family;
}
