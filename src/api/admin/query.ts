import { CACHE_BUSTER, textQuery, type QuerySchema } from '../../http/query.js';
import type { z } from 'zod';
import { badRequest } from '../../http/errors.js';
import type { Request } from '../../http/request.js';

/**
 * A route's `query` declaration: the names a query schema takes (their values are read after
 * authentication by parseQuery, in the admin's words).
 */
export const queryNames = (schema: z.ZodObject): QuerySchema => textQuery(...Object.keys(schema.shape));

/** An admin endpoint's query string through its schema; any problem is one 400 naming each parameter. */
export function parseQuery<T extends z.ZodType>(schema: T, req: Request): z.output<T> {
  // The cache-buster passes the route's declaration (src/http/query.ts) and means nothing here.
  const query = schema.safeParse(Object.fromEntries([...req.query].filter(([name]) => name !== CACHE_BUSTER)));
  if (query.success) return query.data;
  const problems = query.error.issues.map((i) =>
    i.code === 'unrecognized_keys' ? `unknown parameter(s): ${i.keys.join(', ')}` : `${i.path.join('.')}: ${i.message}`,
  );
  throw badRequest('invalid_query', problems.join('; '));
}
