import type { RouteDoc } from '../../../http/contract.js';
import type { DocContext } from '../../../http/openapi.js';
import { COMMON, jsonExamples } from '../../export/docs.js';

/** The reference lists' operations; their examples are the lists the service holds (read from the database at start). */

/** `GET /v2/fuel-type`: the fuelling options. */
export function fuelTypesDoc(reference: DocContext['reference']): RouteDoc {
  const fuelTypes = reference.fuellingOptions.map((o) => ({ ...o }));
  return {
    tags: ['Reference'],
    operationId: 'listFuelTypes',
    summary: 'Fuelling options',
    description: 'The fuelling options (`700ld`, `350ld`, `700hd`, `350hd`) that `nozzles[].fuelling_options` use.',
    responses: {
      '200': {
        description: 'Every fuelling option, in a fixed order.',
        content: jsonExamples({ all: { value: fuelTypes } }),
      },
      ...COMMON,
    },
  };
}

/** `GET /v2/vehicle-type`: the EU vehicle categories. */
export function vehicleTypesDoc(reference: DocContext['reference']): RouteDoc {
  const vehicleTypes = reference.vehicleCategories.map(({ code, name }) => ({ code, name }));
  return {
    tags: ['Reference'],
    operationId: 'listVehicleTypes',
    summary: 'EU vehicle categories',
    description: 'The EU vehicle categories that resolve the `vehicle_types` codes of the station details.',
    responses: {
      '200': {
        description: 'Every vehicle category, in a fixed order.',
        content: jsonExamples({ all: { value: vehicleTypes } }),
      },
      ...COMMON,
    },
  };
}
