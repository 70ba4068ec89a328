import type { ReferenceData } from '../../db/queries/reference.js';
import { json, type Reply } from '../http/errors.js';

/**
 * The reference lists every generation publishes, as replies made once at start (the lists change
 * only with a migration): v1 fuel types, the v1.1/v2 fuelling options, EU vehicle categories. Each
 * family's folder registers the ones it serves.
 */

/** `[{code, description}]` of the v1 fuel types (`700car`, `350car`, `350bus`). */
export const v1FuelTypes = (reference: ReferenceData): Reply =>
  json(200, reference.v1FuelTypes.map(({ code, description }) => ({ code, description })));

/** `[{code, description}]` of the four fuelling options (v1.1). */
export const fuellingOptions = (reference: ReferenceData): Reply =>
  json(200, reference.fuellingOptions.map(({ code, description }) => ({ code, description })));

/** The fuelling options with `pressure_stage` and `vehicle_class` (v2). */
export const fuellingOptionsV2 = (reference: ReferenceData): Reply => json(200, reference.fuellingOptions.map((o) => ({ ...o })));

/** `[{code, name}]` of the EU vehicle categories M1–M3, N1–N3. */
export const vehicleTypes = (reference: ReferenceData): Reply =>
  json(200, reference.vehicleCategories.map(({ code, name }) => ({ code, name })));
