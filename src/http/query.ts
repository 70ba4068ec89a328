import { z } from 'zod';
import { boundedString } from '../domain/text.js';
import { badRequest } from './errors.js';
import type { Request } from './request.js';
import type { Method } from './router.js';

/**
 * One rule for query parameters on every route of every family: a route declares the names it takes
 * (the keys of the `query` schema of its RouteSpec; none when it declares none), and the core refuses any other name with a
 * 400 in the family's error format naming it, before authentication and before the handler runs — a
 * misspelt `limt=10` is an error the client sees, never silently ignored.
 *
 * The one exception is {@link CACHE_BUSTER}: `_`, which jQuery (`cache: false`) and other HTTP clients
 * append to GET requests to defeat caches, is accepted and ignored on every GET (and HEAD) route.
 */
export const CACHE_BUSTER = '_';

/**
 * The longest value a query parameter takes (a station id, a date-time, a bounding box, a page's
 * cursor are all far shorter): a longer one is refused with a 400 naming the parameter before anything
 * reads it.
 */
export const QUERY_VALUE_MAX_LENGTH = 1000;

/** A query parameter's value as the core checks it: text of at most {@link QUERY_VALUE_MAX_LENGTH} characters. */
export const queryValue = () => boundedString(QUERY_VALUE_MAX_LENGTH);

/** A query schema: its keys are the parameters the route takes (./contract.ts checks their values). */
export type QuerySchema = z.ZodObject;

/**
 * The query schema of a route that reads its parameters' values itself (from `req.query`): each
 * name optional text. The names are still all it takes.
 */
export function textQuery(...names: string[]): QuerySchema {
  return z.object(Object.fromEntries(names.map((name) => [name, queryValue().optional()])));
}

/**
 * The query schema of a route that passes its query string on as it came (a redirect): any name is
 * taken, none is read.
 */
export const ANY_QUERY: QuerySchema = z.object({}).catchall(queryValue());

/** The names a query schema takes, in its order. */
export const queryNames = (schema: QuerySchema | undefined): string[] => (schema ? Object.keys(schema.shape) : []);

/** Methods on which the cache-busting parameter is accepted. */
const CACHEABLE = new Set<Method>(['GET', 'HEAD']);

/** The names of a query string, each once, in the order first given. */
function namesOf(req: Request): string[] {
  return [...new Set(req.query.keys())];
}

/**
 * Throws the 400 naming the request's parameters the route does not take (`schema`: the route's
 * declaration). A request without a query string costs nothing.
 */
export function checkQuery(schema: QuerySchema | undefined, req: Request): void {
  if (!req.hasQuery || schema === ANY_QUERY) return;
  const accepted = queryNames(schema);
  const names = namesOf(req);
  const unknown = names.filter((name) => !accepted.includes(name) && !(name === CACHE_BUSTER && CACHEABLE.has(req.method)));
  if (unknown.length === 0) return;
  const takes = accepted.length === 0 ? 'this path takes no query parameters' : `this path takes ${accepted.join(', ')}`;
  const listed = unknown.slice(0, MAX_NAMED).map(shown).join(', ') + (unknown.length > MAX_NAMED ? ` and ${unknown.length - MAX_NAMED} more` : '');
  throw badRequest('invalid_parameter', `unknown parameter(s): ${listed}; ${takes}.`);
}

/** How many unknown names a refusal lists (a hostile query string may hold thousands). */
const MAX_NAMED = 10;

/** A parameter name as a message shows it: as sent, cut after 50 characters. */
const shown = (name: string) => (name.length > 50 ? `${name.slice(0, 50)}…` : name);
