import { z } from 'zod';
import { queryNames, queryValue, type QuerySchema } from './query.js';

/**
 * A route's path and query parameters as its document lists them, made from its `params` and `query`
 * schemas (./contract.ts): each field of those schemas is a parameter, its description and example
 * the field's metadata (`.meta()`), so no parameter is written a second time beside the schema the
 * route is checked with.
 *
 * Many routes read their parameters' values themselves, with refusals in their own words (`limit: must
 * be a whole number from 1 to 500.`), and the core checks them as text only (`queryValue`): their
 * metadata then carries `values`, the schema of the values the handler takes, which the document shows.
 */

type Json = Record<string, unknown>;

/** What a parameter's field says of it beside its schema, as its metadata. */
export interface ParameterMeta {
  description: string;
  /** A value to show (the reference page's "Try it out" fills it in): none where that would mislead. */
  example?: unknown;
  /** The values the handler takes, where the core checks the field as text only: the document's schema. */
  values?: z.ZodType;
  /**
   * The name of the document's parameter component it is (`#/components/parameters/{component}`),
   * referred to from each operation that takes it; given inline when absent.
   */
  component?: string;
}

/** A path parameter (`:name`), described; the router has decoded it, the handler checks it. */
export function pathParameter(meta: ParameterMeta): z.ZodString {
  return z.string().meta({ ...meta });
}

/** A query parameter the handler reads itself (optional text at the core), described. */
export function queryParameter(meta: ParameterMeta): z.ZodOptional<z.ZodString> {
  return queryValue().optional().meta({ ...meta });
}

/** The params schema of a path, its `:name` fields taken from `known` (a family's path parameters by name). */
export function pathParams(path: string, known: Readonly<Record<string, z.ZodType>>): z.ZodObject | undefined {
  const names = pathNames(path);
  if (names.length === 0) return undefined;
  return z.object(
    Object.fromEntries(
      names.map((name) => {
        const schema = known[name];
        if (!schema) throw new Error(`the path ${path} has a parameter ${name} none of its family's describes`);
        return [name, schema];
      }),
    ),
  );
}

/** The `:name` segments of a path, in order. */
export const pathNames = (path: string): string[] => [...path.matchAll(/:([A-Za-z0-9_]+)/g)].map((m) => m[1]!);

/** A route as far as its parameters go. */
export interface ParameterSource {
  method: string;
  path: string;
  params?: z.ZodType;
  query?: QuerySchema;
}

/**
 * The Parameter Objects of a route's path and query (path first, each in its schema's order), and the
 * components some of them are (by `component`), for its document. Throws on a parameter without a
 * description.
 */
export function routeParameters(route: ParameterSource): { parameters: Json[]; components: Record<string, Json> } {
  const parameters: Json[] = [];
  const components: Record<string, Json> = {};
  const shape = route.params instanceof z.ZodObject ? (route.params.shape as Record<string, z.ZodType>) : {};
  const fields: [string, 'path' | 'query', z.ZodType | undefined][] = [
    ...pathNames(route.path).map((name): [string, 'path', z.ZodType | undefined] => [name, 'path', shape[name]]),
    ...queryNames(route.query).map((name): [string, 'query', z.ZodType | undefined] => [name, 'query', route.query!.shape[name] as z.ZodType]),
  ];
  for (const [name, location, field] of fields) {
    const meta = field && (z.globalRegistry.get(field) as ParameterMeta | undefined);
    if (!field || typeof meta?.description !== 'string') {
      throw new Error(`OpenAPI: the ${location} parameter ${name} of ${route.method} ${route.path} has no description (its schema's metadata)`);
    }
    const parameter: Json = {
      name,
      in: location,
      required: location === 'path' || !field.safeParse(undefined).success,
      description: meta.description,
      schema: parameterSchema(meta.values ?? field),
      ...(meta.example !== undefined ? { example: meta.example } : {}),
    };
    if (meta.component === undefined) parameters.push(parameter);
    else {
      components[meta.component] = parameter;
      parameters.push({ $ref: `#/components/parameters/${meta.component}` });
    }
  }
  return { parameters, components };
}

/** A parameter's value schema as JSON Schema: without the field's metadata, which the Parameter Object carries. */
function parameterSchema(schema: z.ZodType): Json {
  const json = z.toJSONSchema(schema, {
    io: 'input',
    target: 'draft-2020-12',
    unrepresentable: 'throw',
    metadata: z.registry(),
    override: ({ jsonSchema }) => {
      if (jsonSchema.format === 'date-time') delete jsonSchema.pattern;
    },
  }) as Json;
  delete json.$schema;
  return json;
}
