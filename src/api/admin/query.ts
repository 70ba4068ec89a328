import type { z } from 'zod';
import { badRequest } from '../../http/errors.js';
import type { Request } from '../../http/request.js';

/** An admin endpoint's query string through its schema; any problem is one 400 naming each parameter. */
export function parseQuery<T extends z.ZodType>(schema: T, req: Request): z.output<T> {
  const query = schema.safeParse(Object.fromEntries(req.query));
  if (query.success) return query.data;
  const problems = query.error.issues.map((i) =>
    i.code === 'unrecognized_keys' ? `unknown parameter(s): ${i.keys.join(', ')}` : `${i.path.join('.')}: ${i.message}`,
  );
  throw badRequest('invalid_query', problems.join('; '));
}
