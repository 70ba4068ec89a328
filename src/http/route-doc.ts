import type { z } from 'zod';
import type { QuerySchema } from './query.js';
import type { Method } from './router.js';

/**
 * A route as its family's document sees it: its operation and what it answers with. Below the
 * contract (./contract.ts), which declares a route with them, and the document builder
 * (./openapi.ts), which reads them, so that neither imports the other.
 */

type Json = Record<string, unknown>;

/**
 * A route's OpenAPI 3.1 Operation Object, as its family's document shows it. `$ref`s name the
 * components the family's document declares (its `DocDefinition`); the core adds the route's path and
 * query parameters (from its `params` and `query` schemas: ./parameters.ts), the headers every
 * response carries and the 400 for an unknown query parameter.
 */
export interface RouteDoc {
  operationId: string;
  summary: string;
  description: string;
  tags?: string[];
  /** The request headers it reads (`If-Modified-Since`): its path and query parameters come from its schemas. */
  parameters?: HeaderParameter[];
  requestBody?: Json;
  responses: Record<string, Json>;
  /** `[]` exactly on a public route (no credential), absent on the others: the document is checked against the route. */
  security?: Json[];
  deprecated?: boolean;
}

/** A request header an operation reads: a Parameter Object `in: 'header'`, or a reference to one of the document's. */
export type HeaderParameter =
  | { $ref: string }
  | { name: string; in: 'header'; required: boolean; description: string; schema: Json; example?: unknown };

/** A registered route as documents see it: `auth` is the family's name, or `none` for a public route. */
export interface RouteInfo {
  method: Method;
  path: string;
  auth: string;
  /** The query parameters it takes (the keys of its query schema), when it takes any. */
  query?: readonly string[];
  /** Its path parameters' schema, when it declares one: its document's path parameters (./parameters.ts). */
  params?: z.ZodType;
  /** Its query schema, when it takes parameters: its document's query parameters. */
  querySchema?: QuerySchema;
  /** Its operation (see RouteDoc), when it carries one. */
  doc?: RouteDoc;
  /**
   * The schemas of the bodies it answers with, by status, for its document: each is the `schema` of
   * its status's response where the operation gives none. The core does not check what a handler sends.
   */
  response?: Responses;
}

/** Response body schemas by status. */
export type Responses = Readonly<Record<number, z.ZodType>>;
