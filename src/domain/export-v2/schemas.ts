import { z } from 'zod';
import { bySectionKey, type CategoryDefinition } from '../categories/index.js';
import { hrsIdSchema } from './fields.js';

/**
 * The response bodies of export v2, as zod schemas. The handlers serialise what they hold directly;
 * these schemas describe those bodies for the OpenAPI document (src/http/openapi.ts generates the
 * document's JSON Schemas from them), and the tests check real responses against them, so the document
 * and the code cannot drift apart. Objects are strict: a field the code adds without documenting it
 * fails those tests. Each category's status section is with its category (src/domain/categories/).
 */

/** The station records, reference lists and problem details (./stations.ts), exported from here as before the split. */
export { hrsIdSchema };
export * from './stations.js';
export * from './delta.js';
import { distanceKm } from './stations.js';

const section = (definition: CategoryDefinition) =>
  definition.section.schema.nullable().meta({ description: `Null when ${definition.section.nullWhen}. Treat it as optional.` });

/** A station with nothing published. */
const NOTHING = { hrs_id: 'HAMBG', ...bySectionKey(() => null) };

export const stationStatusSchema = z
  .strictObject({
    distance_km: distanceKm.optional(),
    hrs_id: hrsIdSchema,
    ...bySectionKey(section),
  })
  .meta({
    title: 'Station status',
    description: 'The real-time status of one station: four sections, each an object or null; all four can be null.',
    examples: [{ hrs_id: 'BERLA', ...bySectionKey((d) => d.section.example) }, NOTHING],
  });

export const stationStatusListSchema = z
  .strictObject({
    stations: z.array(stationStatusSchema).meta({
      description: 'Every registered station, sorted by `hrs_id` (with `bbox`: those in the box; with `near`: those in the circle, by `distance_km`, then `hrs_id`).',
    }),
  })
  .meta({
    title: 'Station status list',
    examples: [{ stations: [NOTHING] }],
  });
