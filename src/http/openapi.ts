import { z } from 'zod';
import { isDeepStrictEqual } from 'node:util';
import { routeParameters } from './parameters.js';
import type { RouteDoc, RouteInfo } from './route-doc.js';

/**
 * A family's OpenAPI 3.1 document, generated from the routes registered for it (each carries its
 * operation, `doc` of its RouteSpec) and what the family declares next to its family value (its
 * DocDefinition: info, tags, security scheme, component schemas, shared responses and headers).
 * Component schemas come from the zod schemas the code validates with and describes its responses
 * with: `z.toJSONSchema` turns them into the document's JSON Schemas (2020-12, the dialect of
 * OpenAPI 3.1), so there is no hand-written copy of a schema to drift.
 *
 * A document lists exactly the routes the server has for its family: building it fails when a route
 * of the family has no description. The documents are built once, at start (src/api/docs/routes.ts).
 */

type Json = Record<string, unknown>;

export type Route = RouteInfo;

/**
 * What the document builder is handed besides the routes, from the composition root (the service's
 * version here): families' definitions read what they need of it. Extended where the service's
 * context is known (src/api/docs/context.ts), as a fastify plugin extends the instance's type.
 */
export interface DocContext {
  version: string;
}

/** A family's document as its family value declares it (`document` of a Family). */
export interface FamilyDocument {
  /** Where the document (`{path}/schema`) and its reference page (`{path}/`) are served: `/import/v2/doc`. */
  path: string;
  /** The reference page's title. */
  title: string;
  /** What the service's index (`GET /`) calls the reference: `Export API v1 (legacy, frozen)`. */
  listed: string;
  define(context: DocContext): DocDefinition;
}

/** What a document definition is made of; see src/api/import-v2/docs/document.ts. */
export interface DocDefinition {
  /** The family whose routes are the document's operations (its name). */
  family: string;
  /**
   * Public routes (no credential) under this path are operations of the document too, and must be
   * described like the family's others, with `security: []`: the portal's sign-in, the use of its
   * link and the reveal link (`/portal/v1/`). Public routes elsewhere (pages, their files) and the
   * document's own (`{publicPrefix}doc/…`, src/api/docs/routes.ts) are not. Without it, only the
   * family's authenticated routes are.
   */
  publicPrefix?: string;
  /** Other families whose authenticated routes this document covers too (export v2's: the DATEX II publications, same tokens). */
  alsoFamilies?: readonly string[];
  /**
   * Public routes (no credential) of other families under these paths are operations of the document
   * too, described with `security: []` (export v2's: the public map's feed, `/map/v1/stations`…).
   */
  alsoPublic?: readonly string[];
  info: Json;
  tags: Json[];
  securitySchemes: Record<string, Json>;
  /** Request bodies: converted as zod input types (what a client may send). */
  requestSchemas: Record<string, z.ZodType>;
  /** Response bodies: converted as zod output types (what the service sends). */
  responseSchemas: Record<string, z.ZodType>;
  /**
   * The request headers operations refer to (`If-Modified-Since`). Path and query parameters are no
   * part of it: each route's come from its `params` and `query` schemas (./parameters.ts).
   */
  parameters?: Record<string, Json>;
  headers: Record<string, Json>;
  responses: Record<string, Json>;
  /**
   * Headers every response of an operation carries (`X-Request-Id`), and those every response after
   * authentication carries (`RateLimit-*`; not on 401 and 413): added to each response by name, so
   * none is forgotten.
   */
  everyResponseHeaders: string[];
  afterAuthenticationHeaders: string[];
  /**
   * Requests the service makes to its users' endpoints (OpenAPI 3.1 `webhooks`: Path Item Objects by
   * name), described beside the operations; none when absent.
   */
  webhooks?: Record<string, Json>;
}

export type OpenApiDocument = Json & {
  openapi: string;
  paths: Record<string, Record<string, Json>>;
  components: Json & { schemas: Record<string, Json> };
};

/** `/v2/hrs/:hrs_id/status` → `/v2/hrs/{hrs_id}/status` */
export function openApiPath(path: string): string {
  return path.replace(/:([A-Za-z0-9_]+)/g, '{$1}');
}

export const schemaRef = (name: string) => ({ $ref: `#/components/schemas/${name}` });
export const responseRef = (name: string) => ({ $ref: `#/components/responses/${name}` });
export const parameterRef = (name: string) => ({ $ref: `#/components/parameters/${name}` });
export const headerRef = (name: string) => ({ $ref: `#/components/headers/${name}` });

/** The examples a schema carries in its metadata, as OpenAPI Example Objects. */
export function examplesOf(schema: z.ZodType, names: string[] = []): Record<string, Json> {
  const examples = (z.globalRegistry.get(schema)?.examples ?? []) as unknown[];
  return Object.fromEntries(examples.map((value, i) => [names[i] ?? (i === 0 ? 'example' : `example${i + 1}`), { value }]));
}

/**
 * The component schemas: each registered under its name in a registry of its own, so references
 * between them become `#/components/schemas/Name`; descriptions and examples come from the schemas'
 * metadata. `$schema` and `$id` are dropped (the document's dialect applies; an `$id` with a fragment
 * is not allowed).
 */
export function componentSchemas(schemas: Record<string, z.ZodType>, io: 'input' | 'output'): Record<string, Json> {
  // The same schemas give the same JSON Schemas: converted once per process (a platform builds its
  // documents at every start, and the conversion was a fifth of a start's CPU), then copied per document.
  const key = `${io} ${Object.keys(schemas).join(' ')}`;
  const known = converted.get(key)?.find((entry) => Object.entries(schemas).every(([id, schema]) => entry.schemas[id] === schema));
  if (known) return structuredClone(known.out);
  const out = convertSchemas(schemas, io);
  converted.set(key, [...(converted.get(key) ?? []), { schemas: { ...schemas }, out: structuredClone(out) }]);
  return out;
}

/** What componentSchemas converted, by io and names. */
const converted = new Map<string, { schemas: Record<string, z.ZodType>; out: Record<string, Json> }[]>();

function convertSchemas(schemas: Record<string, z.ZodType>, io: 'input' | 'output'): Record<string, Json> {
  const registry = z.registry<{ id: string }>();
  for (const [id, schema] of Object.entries(schemas)) registry.add(schema, { id });
  const { schemas: out } = z.toJSONSchema(registry, {
    io,
    target: 'draft-2020-12',
    uri: (id) => `#/components/schemas/${id}`,
    unrepresentable: 'throw',
    // `format: date-time` says it; the regex zod checks with adds nothing a reader can use.
    override: ({ jsonSchema }) => {
      if (jsonSchema.format === 'date-time') delete jsonSchema.pattern;
    },
  }) as { schemas: Record<string, Json> };
  if ('__shared' in out) {
    throw new Error(`OpenAPI: schemas shared outside the components (${Object.keys(out.__shared ?? {}).join(', ')}); register them by name`);
  }
  for (const schema of Object.values(out)) {
    delete schema.$schema;
    delete schema.$id;
  }
  return out;
}

/** Statuses given before authentication finished (401; 413 on the declared length or while reading): no rate-limit headers. */
const BEFORE_AUTHENTICATION = new Set(['401', '413']);

function operationKey(method: string, path: string): string {
  return `${method} ${path}`;
}

/**
 * The document for one family, covering exactly the family's registered routes. Throws when a route
 * has no description, when a description is given twice, or when a `$ref` points nowhere.
 */
export function buildDocument(definition: DocDefinition, routes: readonly Route[]): OpenApiDocument {
  const familyRoutes = documentedRoutes(definition, routes);
  const described = describedOperations(definition, familyRoutes);
  const { paths, responses, parameters } = pathsWithHeaders(definition, familyRoutes, described);
  const schemas = {
    ...componentSchemas(definition.requestSchemas, 'input'),
    ...componentSchemas(definition.responseSchemas, 'output'),
  };
  const document: OpenApiDocument = {
    openapi: '3.1.1',
    info: { ...definition.info, description: `${String(definition.info.description ?? '').trimEnd()}\n\n${QUERY_PARAMETERS_RULE}` },
    jsonSchemaDialect: 'https://spec.openapis.org/oas/3.1/dialect/base',
    servers: [{ url: '/', description: 'This service (the origin this document was served from).' }],
    security: Object.keys(definition.securitySchemes).map((name) => ({ [name]: [] })),
    // Only tags some listed operation has: an endpoint not (yet) served leaves no empty section behind.
    tags: definition.tags.filter((tag) =>
      Object.values(paths).some((item) => Object.values(item).some((op) => (op.tags as string[] | undefined)?.includes(tag.name as string))),
    ),
    paths,
    ...(definition.webhooks ? { webhooks: definition.webhooks } : {}),
    components: {
      schemas,
      responses,
      ...(Object.keys(parameters).length > 0 ? { parameters } : {}),
      headers: definition.headers,
      securitySchemes: definition.securitySchemes,
    },
  };
  pruneComponents(document);
  checkReferences(document);
  return document;
}

/** The routes a definition documents: its family's authenticated ones, and the public ones under its `publicPrefix` or `alsoPublic` paths. */
export function documentedRoutes(definition: Pick<DocDefinition, 'family' | 'publicPrefix' | 'alsoFamilies' | 'alsoPublic'>, routes: readonly Route[]): Route[] {
  const prefix = definition.publicPrefix;
  const isPublicOperation = (r: Route) =>
    r.auth === 'none' &&
    ((prefix !== undefined && r.path.startsWith(prefix) && !r.path.startsWith(`${prefix}doc/`)) || definition.alsoPublic?.some((path) => r.path.startsWith(path)) === true);
  return routes.filter((r) => r.auth === definition.family || definition.alsoFamilies?.includes(r.auth) === true || isPublicOperation(r));
}

/**
 * The operations by route, each route's own `doc`: throws on a route of the family not described, or
 * an operation whose `security` does not say what its route takes (`[]` exactly for a public route).
 * There is no other list of operations, so none can describe a route that is not served.
 */
function describedOperations(definition: DocDefinition, familyRoutes: readonly Route[]): Map<string, RouteDoc> {
  const described = new Map<string, RouteDoc>();
  for (const route of familyRoutes) if (route.doc) described.set(operationKey(route.method, route.path), route.doc);
  const missing = familyRoutes.filter((r) => !described.has(operationKey(r.method, r.path)));
  if (missing.length > 0) {
    throw new Error(
      `OpenAPI: the ${definition.family} document has no description of ${missing.map((r) => `${r.method} ${r.path}`).join(', ')} ` +
        '(give the route its `doc`)',
    );
  }
  for (const route of familyRoutes) {
    const { security } = described.get(operationKey(route.method, route.path))!;
    const saysPublic = Array.isArray(security) && security.length === 0;
    if (saysPublic !== (route.auth === 'none')) {
      throw new Error(
        `OpenAPI: ${route.method} ${route.path} ${route.auth === 'none' ? 'takes no credential: its operation must say `security: []`' : 'takes a credential: its operation must not say `security: []`'}`,
      );
    }
  }
  return described;
}

/**
 * The paths of the registered routes and the shared responses, with the headers every response
 * carries added to each by name: the operations' own, and the shared ones (which may not carry the
 * rate-limit headers when some operation gives them before authentication).
 */
function pathsWithHeaders(definition: DocDefinition, familyRoutes: readonly Route[], described: Map<string, RouteDoc>) {
  const headersOf = (status: string) => [
    ...definition.everyResponseHeaders,
    ...(BEFORE_AUTHENTICATION.has(status) ? [] : definition.afterAuthenticationHeaders),
  ];
  const sharedStatuses = new Map<string, Set<string>>();
  const paths: OpenApiDocument['paths'] = {};
  const parameters: Record<string, Json> = { ...definition.parameters };
  for (const route of familyRoutes) {
    const operation = described.get(operationKey(route.method, route.path))!;
    const own = routeParameters({ method: route.method, path: route.path, params: route.params, query: route.querySchema });
    for (const [name, parameter] of Object.entries(own.components)) {
      if (parameters[name] !== undefined && !isDeepStrictEqual(parameters[name], parameter)) {
        throw new Error(`OpenAPI: the ${definition.family} document's parameter ${name} is described twice, differently (${route.method} ${route.path})`);
      }
      parameters[name] = parameter;
    }
    const headers = (operation.parameters ?? []).map((parameter) => ('$ref' in parameter ? parameters[parameter.$ref.replace('#/components/parameters/', '')] : parameter));
    if (headers.some((parameter) => parameter !== undefined && parameter.in !== 'header')) {
      throw new Error(`OpenAPI: ${route.method} ${route.path} describes a path or query parameter by hand: they come from its params and query schemas`);
    }
    const operationParameters = [...own.parameters, ...(operation.parameters ?? [])];
    const responses = structuredClone(operation.responses as Record<string, Json>);
    for (const [status, response] of Object.entries(responses)) {
      if (typeof response.$ref === 'string') {
        const name = response.$ref.replace('#/components/responses/', '');
        sharedStatuses.set(name, (sharedStatuses.get(name) ?? new Set()).add(status));
      } else {
        addHeaders(response, headersOf(status));
        addSchema(definition, route, status, response);
      }
    }
    // The core refuses a parameter the route does not take (./query.ts), before authentication.
    responses['400'] ??= unknownParameterResponse(definition, route, definition.everyResponseHeaders);
    const { parameters: _given, ...rest } = operation;
    (paths[openApiPath(route.path)] ??= {})[route.method.toLowerCase()] = {
      ...rest,
      ...(operationParameters.length > 0 ? { parameters: operationParameters } : {}),
      responses,
    };
  }
  const responses = structuredClone(definition.responses);
  for (const [name, statuses] of sharedStatuses) {
    const response = responses[name];
    if (!response) continue; // checkReferences names it
    addHeaders(response, [...statuses].map(headersOf).reduce((common, list) => common.filter((header) => list.includes(header))));
  }
  return { paths, responses, parameters };
}

/**
 * The rule for query parameters (./query.ts), as every document states it in its guide: the
 * operations' parameters are all a request may carry.
 */
export const QUERY_PARAMETERS_RULE =
  '## Query parameters\n\nUnknown query parameters are refused: a parameter an operation does not list gets a 400 in this ' +
  'API\'s error format naming it (`unknown parameter(s): limt; this path takes limit, offset.`), before authentication, ' +
  'so a misspelt parameter is never silently ignored. The one exception is `_`, the cache-busting parameter some HTTP ' +
  'clients (jQuery\'s `cache: false`, say) add to GET requests: it is accepted and ignored on every `GET` and `HEAD`.';

/** The 400 an operation without one of its own answers to a parameter it does not take. */
function unknownParameterResponse(definition: DocDefinition, route: Route, headers: string[]): Json {
  const takes = route.query?.length ? `this path takes ${route.query.join(', ')}` : 'this path takes no query parameters';
  const detail = `unknown parameter(s): x; ${takes}.`;
  const problem = 'Problem' in definition.responseSchemas;
  const value = problem ? { type: 'about:blank', title: 'Bad Request', status: 400, detail, code: 'invalid_parameter' } : { detail };
  const response: Json = {
    description: 'A query parameter the operation does not take (see "Query parameters" above): nothing is processed.',
    content: {
      [problem ? 'application/problem+json' : 'application/json']: {
        schema: schemaRef(problem ? 'Problem' : 'Detail'),
        examples: { unknown_parameter: { summary: 'An unknown query parameter `x`', value } },
      },
    },
  };
  addHeaders(response, headers);
  return response;
}

/**
 * Gives a response's media types without a `schema` the route's schema for its status (`response` of
 * its RouteSpec), by reference: it must be one of the definition's response schemas, under its name.
 */
function addSchema(definition: DocDefinition, route: Route, status: string, response: Json): void {
  const schema = route.response?.[Number(status)];
  if (!schema) return;
  const name = Object.entries(definition.responseSchemas).find(([, known]) => known === schema)?.[0];
  if (!name) throw new Error(`OpenAPI: the ${status} of ${route.method} ${route.path} has a schema that is none of the document's response schemas`);
  const content = (response.content ?? {}) as Record<string, Json>;
  for (const [type, media] of Object.entries(content)) content[type] = { schema: schemaRef(name), ...media };
}

/** Adds a reference to each named header a response does not describe itself. */
function addHeaders(response: Json, names: string[]): void {
  const headers: Json = { ...((response.headers as Json | undefined) ?? {}) };
  for (const name of names) headers[name] ??= headerRef(name);
  response.headers = headers;
}

/**
 * Drops shared responses, parameters and headers no operation uses (a route not registered, say), so
 * the document holds nothing about endpoints the server does not have. Schemas stay: they are small,
 * and a client may want every shape.
 */
function pruneComponents(document: OpenApiDocument): void {
  for (const kind of ['responses', 'parameters', 'headers'] as const) {
    const section = document.components[kind] as Record<string, Json> | undefined;
    if (!section) continue;
    // Repeat: a used response may be what uses a header.
    let used = referenced(document);
    for (;;) {
      const unused = Object.keys(section).filter((name) => !used.has(`#/components/${kind}/${name}`));
      if (unused.length === 0) break;
      for (const name of unused) delete section[name];
      used = referenced(document);
    }
  }
}

function referenced(value: unknown, into = new Set<string>()): Set<string> {
  if (Array.isArray(value)) for (const item of value) referenced(item, into);
  else if (value !== null && typeof value === 'object') {
    for (const [key, item] of Object.entries(value)) {
      if (key === '$ref' && typeof item === 'string') into.add(item);
      else referenced(item, into);
    }
  }
  return into;
}

/** Every `$ref` names something the document has (a typo in a definition fails at start, not in a client). */
function checkReferences(document: OpenApiDocument): void {
  for (const ref of referenced(document)) {
    if (!ref.startsWith('#/')) throw new Error(`OpenAPI: external reference ${ref}`);
    let at: unknown = document;
    for (const part of ref.slice(2).split('/')) {
      const key = part.replace(/~1/g, '/').replace(/~0/g, '~');
      at = at !== null && typeof at === 'object' ? (at as Json)[key] : undefined;
    }
    if (at === undefined) throw new Error(`OpenAPI: ${ref} does not exist`);
  }
}
