import type { Sql } from '../connect.js';

export interface ReferenceData {
  v1FuelTypes: { code: string; description: string }[];
  fuellingOptions: { code: string; description: string; pressure_stage: number; vehicle_class: string }[];
  vehicleCategories: { code: string; name: string }[];
}

/** Reference lists change only with a migration, so they are read once at start. */
export async function readReferenceData(sql: Sql): Promise<ReferenceData> {
  const [v1FuelTypes, fuellingOptions, vehicleCategories] = await Promise.all([
    sql<ReferenceData['v1FuelTypes']>`SELECT code, description FROM v1_fuel_types ORDER BY position`,
    sql<ReferenceData['fuellingOptions']>`
      SELECT code, description, pressure_stage, vehicle_class FROM fuelling_options ORDER BY position`,
    sql<ReferenceData['vehicleCategories']>`SELECT code, name FROM vehicle_categories ORDER BY position`,
  ]);
  return { v1FuelTypes: [...v1FuelTypes], fuellingOptions: [...fuellingOptions], vehicleCategories: [...vehicleCategories] };
}
