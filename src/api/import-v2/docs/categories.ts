import type { z } from 'zod';
import { byCategory, type Category } from '../../../domain/categories/index.js';
import { LIMITS } from '../../../domain/import-v2/limits.js';

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

/** Per category, in the document's order: each category's words are with it (src/domain/categories/). */
export const CATEGORIES: Record<Category, CategoryDoc> = byCategory(({ transmission, docs }) => ({
  schema: transmission,
  name: docs.component,
  operationId: docs.operationId,
  summary: docs.summary,
  rules: docs.rules,
  examples: docs.examples,
}));

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
