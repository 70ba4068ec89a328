import { z } from 'zod';
import { badRequest, notFound, type HttpError, type Reply } from './errors.js';
import type { Family, InputPart, InvalidInput } from './family.js';
import { CACHE_BUSTER, queryNames, type QuerySchema } from './query.js';
import { parseJson, type Request } from './request.js';
import type { Method } from './router.js';
import type { Responses, RouteDoc } from './route-doc.js';

/**
 * A route's contract, as a fastify route's `schema` declares it: what its path parameters, query
 * string and body must be (zod schemas the core checks before the handler runs, handing the handler
 * the parsed values), and its OpenAPI operation (`doc`), from which its family's document is built
 * (./openapi.ts). A route and its description cannot drift apart: they are one value.
 */

export type { Responses, RouteDoc, RouteInfo } from './route-doc.js';

/**
 * A route and its contract: the schemas its path parameters, query and body must
 * match, checked before the handler runs, which gets the parsed values; and its operation in its
 * family's document.
 */
export interface RouteSpec<P extends z.ZodType = z.ZodType<Record<string, string>>, Q extends QuerySchema = QuerySchema, B extends z.ZodType = z.ZodType> {
  /** The family the route belongs to: its authentication, guards, error style and policy apply. */
  family: Family;
  method: Method;
  path: string;
  /** Public routes take no credential (documents, pages, health): the family's guards and observers skip them. */
  public?: boolean;
  /**
   * The path parameters (`:name` segments) as the handler gets them; values that do not match are
   * refused. Each field is described by its metadata (./parameters.ts): the route's document lists it.
   */
  params?: P;
  /**
   * The query parameters the route takes, the keys of this schema; any other is refused with a 400
   * naming it, before authentication (./query.ts; `_`, a client's cache-buster, passes on GET and
   * HEAD). None by default. The values are checked after authentication, like the body. Each field is
   * described by its metadata (./parameters.ts): the route's document lists it.
   */
  query?: Q;
  /**
   * The body: `true` when the handler reads it itself (`req.body`; its checks are the domain's), a
   * schema when the core parses it as JSON and checks it (an optional schema: an empty body is none,
   * `undefined`). None when absent or false.
   */
  body?: boolean | B;
  /**
   * The refusal of a path parameter, query or body that does not match, when the route words it
   * otherwise than its family (`invalid` of the family, or `defaultInvalid`).
   */
  invalid?: (problem: InvalidInput) => HttpError;
  /** The route's own cap on its body, when it takes more than MAX_BODY_BYTES (a photo upload). */
  maxBodyBytes?: number;
  /** What it answers with, by status: see RouteInfo. */
  response?: Responses;
  /**
   * Its operation in its family's OpenAPI document: building the document (and so the start) fails
   * when a route of a documented family has none.
   */
  doc?: RouteDoc;
  handler: (req: Request, input: RouteInput<P, Q, B>) => Promise<Reply> | Reply;
}

/** Any route, as the server keeps it. */
export type AnyRoute = RouteSpec<any, any, any>;

/**
 * The refusal of a family without an `invalid` hook: a path parameter that is not a valid value
 * names no resource (404); a query or body that does not match is a 400 listing each problem.
 */
export function defaultInvalid({ part, issues }: InvalidInput): HttpError {
  if (part === 'params') return notFound();
  const problems = issues.map((i) => (i.path.length > 0 ? `${i.path.join('.')}: ${i.message}` : i.message)).join('; ');
  return badRequest(part === 'query' ? 'invalid_parameter' : 'invalid', problems);
}

/** The values a handler gets, parsed by the route's schemas (the raw ones where it declares none). */
export interface RouteInput<P extends z.ZodType, Q extends QuerySchema, B extends z.ZodType> {
  params: z.output<P>;
  query: z.output<Q>;
  body: z.output<B> | undefined;
}

/** The schemas of a route, as the core checks them. */
export type Contract = Pick<RouteSpec<z.ZodType, QuerySchema, z.ZodType>, 'params' | 'query' | 'body' | 'invalid'>;

/**
 * Checks a request against its route's schemas, after authentication and once the body is read:
 * the parsed values, or the refusal of the first part that does not match: the route's own (`invalid`
 * of its contract), else its family's (`familyInvalid`).
 */
export function checkInput(contract: Contract, req: Request, familyInvalid: (problem: InvalidInput) => HttpError): { params: unknown; query: unknown; body: unknown } {
  const invalid = contract.invalid ?? familyInvalid;
  const parse = (part: InputPart, schema: z.ZodType, value: unknown) => {
    const parsed = schema.safeParse(value);
    if (!parsed.success) throw invalid({ part, issues: parsed.error.issues });
    return parsed.data;
  };
  const params = contract.params ? checkedParams(contract.params, req.params, parse) : req.params;
  const query = contract.query ? parse('query', contract.query, queryValues(contract.query, req)) : {};
  const body = contract.body instanceof z.ZodType ? parse('body', contract.body, bodyValue(contract.body, req)) : undefined;
  return { params, query, body };
}

/**
 * Path parameters the router shares between the requests of one path (frozen: see Router) with what a
 * route's schema made of them: a path asked for again is not checked again.
 */
const checked = new WeakMap<object, { schema: z.ZodType; data: unknown }>();

function checkedParams(schema: z.ZodType, value: Readonly<Record<string, string>>, parse: (part: InputPart, schema: z.ZodType, value: unknown) => unknown): unknown {
  const shared = Object.isFrozen(value);
  if (shared) {
    const known = checked.get(value);
    if (known?.schema === schema) return known.data;
  }
  const data = parse('params', schema, value);
  if (shared) checked.set(value, { schema, data: Object.freeze(data) });
  return data;
}

/**
 * The body as JSON, or none (`undefined`, no media type checked) when it is empty and its schema is
 * optional (`body: schema.optional()`): a body that may be left out.
 */
function bodyValue(schema: z.ZodType, req: Request): unknown {
  if (schema instanceof z.ZodOptional && (req.body === undefined || req.body.length === 0)) return undefined;
  return parseJson(req);
}

/**
 * The query's values by the schema's names (every name given, for a schema that takes any), each name's
 * first value (the cache-buster is no value of the route's).
 */
function queryValues(schema: QuerySchema, req: Request): Record<string, string> {
  const values: Record<string, string> = {};
  if (!req.hasQuery) return values;
  const names = schema.def.catchall === undefined ? queryNames(schema) : [...new Set(req.query.keys())];
  for (const name of names) {
    const value = name === CACHE_BUSTER ? null : req.query.get(name);
    if (value !== null) values[name] = value;
  }
  return values;
}
