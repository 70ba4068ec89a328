import { z } from 'zod';

/**
 * The one rule for repeated values in a list a client sends, in every family and in registry files: a
 * value twice in one list is refused (400 in the family's format, or the registry file's problem list),
 * naming the list and the repeated value, and nothing is written. A list's order and its values are
 * stored as sent, so a repeat never means anything a reader could see: a station's `vehicle_types`,
 * `amenities`, `payment_methods`, `authorisation_methods` and `v1_fuel_types`, a layout's fuelling
 * options and references, an event broadcast's `hrs_ids`, an account's role lists, a webhook's `kinds`
 * and `hrs_ids`. The OpenAPI documents say it with `uniqueItems: true` (the schemas' metadata).
 */

/** `list` refusing a value it holds twice, each repeat at its own index: `duplicate fuel type "700car"`. */
export function uniqueItems<T extends z.ZodArray<z.ZodType>>(list: T, what: string): T {
  return list
    .superRefine((values, ctx) => {
      const seen = new Set<unknown>();
      values.forEach((value, index) => {
        if (seen.has(value)) ctx.addIssue({ code: 'custom', path: [index], message: `duplicate ${what} "${String(value)}"` });
        seen.add(value);
      });
    })
    .meta({ uniqueItems: true }) as T;
}

/** The values `values` holds more than once, each once, in the order of their first repeat. */
export function repeatedValues<T>(values: readonly T[]): T[] {
  const seen = new Set<T>();
  const twice = new Set<T>();
  for (const value of values) (seen.has(value) ? twice : seen).add(value);
  return [...twice];
}
