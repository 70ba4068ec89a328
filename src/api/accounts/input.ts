import { z } from 'zod';
import { textFault, textFaults } from '../../domain/text.js';
import type { InvalidInput } from '../../http/family.js';
import { HttpError } from '../../http/errors.js';

/**
 * What the portal and the admin API accept as input and how they refuse the rest: JSON bodies through
 * the text rule and their schemas, checked by the HTTP core before a handler runs (each route declares
 * its body), and the refusal in these APIs' words (the families' `invalid`).
 */

/** A field's path as the `detail` of a 400 names it: `dispensers.0.external_id`, `(body)` for the whole body. */
export const fieldName = (path: readonly PropertyKey[]) =>
  path.map((part) => (typeof part === 'string' && textFault(part) ? JSON.stringify(part) : String(part))).join('.') || '(body)';

/**
 * A JSON body of the portal or the admin API as its route declares it (`body: portalBody(schema)`; the
 * core checks it before the handler runs). First every string and key of the body meets the platform's
 * text rule (src/domain/text.ts: no NUL, no unpaired surrogate), whatever field it is in, so nothing
 * the database cannot store faithfully reaches it; then the schema (names not blank, and the rest).
 */
export function portalBody<T extends z.ZodType>(schema: T) {
  return z
    .unknown()
    .superRefine((input, ctx) => {
      for (const fault of textFaults(input)) ctx.addIssue({ code: 'custom', message: fault.problem, path: [...fault.path] });
    })
    .pipe(schema);
}

/**
 * The portal's and the admin API's refusal of a request that does not match its route's schemas: a
 * body is a 400 `invalid_body` with each issue as `field: message`; a path parameter names nothing that
 * exists, a 404 in its schema's words.
 */
export function invalidInput({ part, issues }: InvalidInput): HttpError {
  if (part === 'params') return new HttpError(404, 'not_found', issues[0]?.message ?? 'Not found.');
  return new HttpError(400, part === 'body' ? 'invalid_body' : 'invalid_query', invalidBodyDetail({ issues }));
}

/** The `detail` of a 400 `invalid_body`: each issue as `field: message`, `(body)` for the body as a whole. */
export function invalidBodyDetail(error: { issues: readonly z.core.$ZodIssue[] }): string {
  return error.issues.map((i) => `${fieldName(i.path)}: ${i.message}`).join('; ');
}
