import type { z } from 'zod';
import { availabilitySchema, pricingSchema, storageSchema, usageSchema } from '../../../domain/import-v2/schemas.js';
import { LIMITS } from '../../../domain/import-v2/limits.js';
import type { Category } from '../../../domain/vocabulary.js';

/** What the import v2 document says of each signal category, and the rules every category shares. */

/** One category: the transmission schema, its component name, and what its endpoint's text says. */
export interface CategoryDoc {
  schema: z.ZodType;
  name: string;
  operationId: string;
  summary: string;
  rules: string;
  /** Names and summaries for the schema's examples, in their order. */
  examples: [string, string][];
}

/** Per category, in the document's order. */
export const CATEGORIES: Record<Category, CategoryDoc> = {
  availability: {
    schema: availabilitySchema,
    name: 'AvailabilityTransmission',
    operationId: 'postAvailability',
    summary: 'Send availability signals',
    examples: [['by_nozzle', 'Per nozzle']],
    rules:
      '- Each nozzle entry carries exactly one of `id` (a nozzle) or `dispenser_id` (every nozzle of that dispenser); ' +
      'both kinds may be mixed if they do not overlap.\n' +
      '- The platform derives the per-fuelling-option status from the nozzles and the layout; a transmission from which ' +
      'no fuelling option can be derived is rejected.\n' +
      '- `station.maintenance: true` or `station.limitedly_available: true` override the per-nozzle picture downstream.',
  },
  usage: {
    schema: usageSchema,
    name: 'UsageTransmission',
    operationId: 'postUsage',
    summary: 'Send usage signals',
    examples: [
      ['by_nozzle', 'Per nozzle'],
      ['by_dispenser', 'Dispenser shorthand: the state of each of its nozzles'],
    ],
    rules:
      '- Each nozzle entry carries exactly one of `id` or `dispenser_id`, as for availability.\n' +
      '- `usage_status` is `free`, `in-use` or `reserved`; blocked sibling nozzles of a dispenser that cannot serve two ' +
      'vehicles at once are reported as `in-use`.',
  },
  'hydrogen-storage': {
    schema: storageSchema,
    name: 'HydrogenStorageTransmission',
    operationId: 'postHydrogenStorage',
    summary: 'Send hydrogen storage signals',
    examples: [
      ['inventory', 'The inventory in kg (the platform derives the flag)'],
      ['flag_only', 'The low-storage flag only'],
    ],
    rules:
      '- Each storage entry carries at least one of `remaining_kg` and `low_h2_storage`.\n' +
      '- The threshold is 100 kg per storage (exactly 100 kg is not low); a `remaining_kg` and a `low_h2_storage` that ' +
      'contradict each other at the threshold are rejected.\n' +
      '- `remaining_kg` is confidential: data users only see the derived flag.',
  },
  pricing: {
    schema: pricingSchema,
    name: 'PricingTransmission',
    operationId: 'postPricing',
    summary: 'Send pricing signals',
    examples: [['prices', 'Gross and net prices of two products']],
    rules:
      '- `id` is a product the station has registered (the `products` of the export station record); one price per ' +
      'station and product.\n' +
      '- Prices are JSON strings, up to 8 digits with 3 decimals, above zero; `net_price` must not exceed `gross_price`.\n' +
      '- All products of one transmission use the same currency (default `EUR`).\n' +
      '- Prices of products the operator removes stop being published at once.',
  },
};

/** The rules of every signal endpoint, before its category's own. */
export const COMMON_RULES =
  '**The request.** A JSON array of transmissions, at most one per station. The whole request is validated before ' +
  'anything is stored: if any transmission fails, the answer is 400 with an array aligned with the request and ' +
  'nothing of the request is applied, valid transmissions included. Every problem of every transmission is reported.\n\n' +
  '**Snapshots.** Each transmission is a full snapshot of its category for its station: it replaces the previous ' +
  'state, and entities it leaves out have no reported state afterwards.\n\n' +
  '**Identifiers** resolve against the station\'s operator-confirmed layout only (an unknown id is a 400 naming it; ' +
  'draft layout is invisible to the API).\n\n' +
  `**Limits.** At most ${LIMITS.transmissions} transmissions per request (a longer array is refused whole, ` +
  `\`{"non_field_errors": ["Ensure this field has no more than ${LIMITS.transmissions} elements."]}\`), at most ` +
  `${LIMITS.entries} entries in each \`nozzles\`, \`storages\` or \`products\` list, JSON nested at most ${LIMITS.depth} levels, ` +
  'no key twice in one object. The first ' +
  `${LIMITS.reportedErrors} error messages are reported; the transmissions after them are not validated and say so ` +
  '(`non_field_errors`), so the error body stays small.\n\n' +
  '**Time window.** `datetime` may be at most 5 minutes old and at most 30 seconds ahead.\n\n' +
  '**Dry runs.** `dry_run: true` validates a transmission end to end without storing or publishing it; a 204 means ' +
  'it would have been accepted. Dry runs count against the rate limit.\n\n' +
  '**Publication** depends on the originator\'s assignment for the station and signal type: `live` signals are ' +
  'published, `testing` ones are validated end to end and not published, signals where the originator is not ' +
  'assigned are accepted for debugging and not published.\n\n' +
  'The trailing slash of the path is required.';
