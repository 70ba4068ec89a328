import { badRequest } from './errors.js';
import type { Request } from './request.js';
import type { Method } from './router.js';

/**
 * One rule for query parameters on every route of every family: a route declares the names it takes
 * (`query` of its RouteSpec; none when it declares nothing), and the core refuses any other name with a
 * 400 in the family's error format naming it, before authentication and before the handler runs — a
 * misspelt `limt=10` is an error the client sees, never silently ignored.
 *
 * The one exception is {@link CACHE_BUSTER}: `_`, which jQuery (`cache: false`) and other HTTP clients
 * append to GET requests to defeat caches, is accepted and ignored on every GET (and HEAD) route.
 */
export const CACHE_BUSTER = '_';

/** Methods on which the cache-busting parameter is accepted. */
const CACHEABLE = new Set<Method>(['GET', 'HEAD']);

/** The names of a query string, each once, in the order first given. */
function namesOf(req: Request): string[] {
  return [...new Set(req.query.keys())];
}

/**
 * Throws the 400 naming the request's parameters the route does not take (`accepted`: the route's
 * declaration). A request without a query string costs nothing.
 */
export function checkQuery(accepted: readonly string[] | undefined, req: Request): void {
  if (!req.hasQuery) return;
  const names = namesOf(req);
  const unknown = names.filter((name) => !(accepted?.includes(name) ?? false) && !(name === CACHE_BUSTER && CACHEABLE.has(req.method)));
  if (unknown.length === 0) return;
  const takes = accepted === undefined || accepted.length === 0 ? 'this path takes no query parameters' : `this path takes ${accepted.join(', ')}`;
  const listed = unknown.slice(0, MAX_NAMED).map(shown).join(', ') + (unknown.length > MAX_NAMED ? ` and ${unknown.length - MAX_NAMED} more` : '');
  throw badRequest('invalid_parameter', `unknown parameter(s): ${listed}; ${takes}.`);
}

/** How many unknown names a refusal lists (a hostile query string may hold thousands). */
const MAX_NAMED = 10;

/** A parameter name as a message shows it: as sent, cut after 50 characters. */
const shown = (name: string) => (name.length > 50 ? `${name.slice(0, 50)}…` : name);
