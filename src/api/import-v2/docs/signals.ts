import { z } from 'zod';
import { LIMITS } from '../../../domain/import-v2/limits.js';
import type { Category } from '../../../domain/categories/index.js';
import type { RouteDoc } from '../../../http/contract.js';
import { examplesOf, schemaRef } from '../../../http/openapi.js';
import { signalErrorResponses } from '../../docs/import.js';
import { CATEGORIES, COMMON_RULES, type CategoryDoc } from './categories.js';

/** The signal endpoints' operations, one per category, and their request schemas. */

const categories = () => Object.entries(CATEGORIES) as [Category, CategoryDoc][];

function requestName(name: string): string {
  return name.replace(/Transmission$/, 'Request');
}

/** Each category's transmission schema and its request (an array of them), by component name. */
export function signalSchemas(): Record<string, z.ZodType> {
  const schemas: Record<string, z.ZodType> = {};
  for (const [, c] of categories()) {
    schemas[c.name] = c.schema;
    schemas[requestName(c.name)] = requestArray(c.schema, c.name);
  }
  return schemas;
}

/** The operation of `POST /import/v2/signal/{category}/`. */
export function signalDoc(category: Category): RouteDoc {
  const c = CATEGORIES[category];
  return {
    tags: ['Signals'],
    operationId: c.operationId,
    summary: c.summary,
    description: `${COMMON_RULES}\n\n**${category}:**\n\n${c.rules}`,
    requestBody: {
      required: true,
      description: `A JSON array of ${category} transmissions, at most one per station.`,
      content: { 'application/json': { schema: schemaRef(requestName(c.name)), examples: requestExamples(c.schema, c.examples) } },
    },
    responses: {
      '204': { description: 'Every transmission accepted (or, for dry runs, validated). Never a 200 with a body.' },
      ...signalErrorResponses(),
    },
  };
}

/** The request examples of a category: each transmission example as a one-station request, and a dry run. */
function requestExamples(schema: z.ZodType, names: [string, string][]): Record<string, { summary: string; value: unknown }> {
  const examples = Object.values(examplesOf(schema)) as { value: Record<string, unknown> }[];
  if (examples.length !== names.length) throw new Error(`OpenAPI: ${examples.length} examples, ${names.length} names`);
  const out: Record<string, { summary: string; value: unknown }> = {};
  examples.forEach(({ value }, i) => (out[names[i]![0]] = { summary: names[i]![1], value: [value] }));
  out.dry_run = { summary: 'A dry run: validated end to end, neither stored nor published', value: [{ ...examples[0]!.value, dry_run: true }] };
  return out;
}

/** The request body of a category: a non-empty array of its transmissions (metadata only; validate.ts checks the array). */
function requestArray(schema: z.ZodType, name: string): z.ZodType {
  const title = name.replace(/([a-z])([A-Z])/g, '$1 $2').replace(/ Transmission$/, ' request');
  return z
    .array(schema)
    .min(1)
    .max(LIMITS.transmissions)
    .meta({ title, description: `A non-empty JSON array of transmissions, at most one per station and at most ${LIMITS.transmissions}.` });
}
