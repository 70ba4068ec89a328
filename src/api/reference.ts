import { json } from '../http/errors.js';
import type { HttpServer } from '../http/server.js';
import type { Services } from '../services.js';

/**
 * Reference lists of every generation: v1 fuel types, the v1.1/v2 fuelling options, EU vehicle
 * categories. Import v1 publishes the authoritative fuel-type list at `/import/v1/fuel-type`.
 */
export function referenceRoutes(server: HttpServer, { reference }: Services): void {
  // Replies are values: each list is serialised once, at start.
  const v1 = json(200, reference.v1FuelTypes.map(({ code, description }) => ({ code, description })));
  const options = json(200, reference.fuellingOptions.map(({ code, description }) => ({ code, description })));
  const optionsV2 = json(200, reference.fuellingOptions.map((o) => ({ ...o })));
  const vehicles = json(200, reference.vehicleCategories.map(({ code, name }) => ({ code, name })));

  server.route({ method: 'GET', path: '/import/v1/fuel-type', auth: 'import_v1', handler: () => v1 });
  server.route({ method: 'GET', path: '/import/v1.1/fuel-type', auth: 'import_v1.1', handler: () => options });
  server.route({ method: 'GET', path: '/v1/fuel-type', auth: 'export_v1', handler: () => v1 });
  server.route({ method: 'GET', path: '/v1.1/fuel-type', auth: 'export_v1.1', handler: () => options });
  server.route({ method: 'GET', path: '/v1.1/vehicle-type', auth: 'export_v1.1', handler: () => vehicles });
  server.route({ method: 'GET', path: '/v2/fuel-type', auth: 'export_v2', handler: () => optionsV2 });
  server.route({ method: 'GET', path: '/v2/vehicle-type', auth: 'export_v2', handler: () => vehicles });
}
