import type { DocContext } from '../../../http/openapi.js';
import type { RouteDoc } from '../../../http/contract.js';
import { COMMON, jsonExamples } from '../../export/docs.js';
import { legacyDoc, words, type ExportDialectDoc } from './dialects.js';

/** The export v1 / v1.1 reference lists' operations; their examples are the lists the service holds (read from the database at start). */

/** `GET {prefix}fuel-type`: the v1 fuel types, or the fuelling options (v1.1). */
export function fuelTypeDoc(d: ExportDialectDoc, reference: DocContext['reference']): RouteDoc {
  const list =
    d.dialect === 'v1'
      ? reference.v1FuelTypes.map(({ code, description }) => ({ code, description }))
      : reference.fuellingOptions.map(({ code, description }) => ({ code, description }));
  return legacyDoc(d, {
    tags: ['Reference'],
    operationId: 'listFuelTypes',
    summary: d.dialect === 'v1' ? 'v1 fuel types' : 'Fuelling options',
    description:
      d.dialect === 'v1'
        ? 'The v1 fuel types (`700car`, `350car`, `350bus`) the records and the summary of v1 use. Heavy-duty 700 bar has no v1 code.'
        : 'The four fuelling options (`700ld`, `350ld`, `700hd`, `350hd`) the records and the summary of v1.1 use.',
    responses: {
      '200': { description: `Every ${words(d)}, in a fixed order.`, content: jsonExamples({ all: { value: list } }) },
      ...COMMON,
    },
  });
}

/** `GET /v1.1/vehicle-type`: the EU vehicle categories. */
export function vehicleTypeDoc(d: ExportDialectDoc, reference: DocContext['reference']): RouteDoc {
  return legacyDoc(d, {
    tags: ['Reference'],
    operationId: 'listVehicleTypes',
    summary: 'EU vehicle categories',
    description: 'The EU vehicle categories (M1–M3, N1–N3) that resolve the `vehicle_types` codes of the station records.',
    responses: {
      '200': {
        description: 'Every vehicle category, in a fixed order.',
        content: jsonExamples({ all: { value: reference.vehicleCategories.map(({ code, name }) => ({ code, name })) } }),
      },
      ...COMMON,
    },
  });
}
