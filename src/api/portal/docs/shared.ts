import type { z } from 'zod';
import { HttpError, PROBLEM_ERRORS } from '../../../http/errors.js';
import { invalidBodyDetail } from '../../accounts/input.js';
import { responseRef, schemaRef } from '../../../http/openapi.js';

/** What the portal document's parts share: the security scheme's name, problem responses and bodies, example values. */

export const SECURITY = 'portalSession';
const PROBLEM = 'application/problem+json';

/** The origin the examples use for the service (a real one is BASE_URL's). */
export const EXAMPLE_ORIGIN = 'https://hrs.example';
/** A secret as links and sessions hold them (43 base64url characters): an example, never a real one. */
export { EXAMPLE_SECRET } from '../../../domain/portal/schemas.js';

export type Examples = Record<string, { summary?: string; value: unknown }>;

/** What an authenticated request can get whatever it asks. */
export const SESSION_ERRORS = {
  '401': responseRef('Unauthorized'),
  '429': responseRef('TooManyFailures'),
  '500': responseRef('InternalError'),
};

/** The answers every request with a JSON body can get before its handler has used it. */
export const BODY_ERRORS = {
  '413': responseRef('PayloadTooLarge'),
  '415': responseRef('UnsupportedMediaType'),
};

/** A JSON body of one of the document's schemas, with its examples. */
export const json = (schema: string, examples: Record<string, unknown>) => ({ 'application/json': { schema: schemaRef(schema), examples } });

/** A response with a problem details body (RFC 9457) and its examples. */
export const problem = (description: string, examples: Examples, headers?: Record<string, unknown>) => ({
  description,
  ...(headers ? { headers } : {}),
  content: { [PROBLEM]: { schema: schemaRef('Problem'), examples } },
});

/** The body the service sends for an error, as src/http/errors.ts makes it for the portal. */
export function problemOf(err: HttpError): Record<string, unknown> {
  return JSON.parse(String(PROBLEM_ERRORS.reply(err).body)) as Record<string, unknown>;
}

/** One example of a problem body, built as the service builds it. */
export const problemExample = (status: number, code: string, detail: string, summary?: string) => ({
  ...(summary ? { summary } : {}),
  value: problemOf(new HttpError(status, code, detail)),
});

/** The 400 a body gets that the schema refuses, in the API's own words (the schema is the API's). */
export function invalidBody(schema: z.ZodType, input: unknown, summary?: string) {
  const parsed = schema.safeParse(input);
  if (parsed.success) throw new Error(`OpenAPI: the invalid-body example ${JSON.stringify(input)} is valid`);
  return problemExample(400, 'invalid_body', invalidBodyDetail(parsed.error), summary);
}

/** The message JSON.parse gives for a body cut short, as this Node.js words it (the service answers it). */
export function parseErrorExample() {
  let message = 'Unexpected end of JSON input';
  try {
    JSON.parse('{"name": ');
  } catch (err) {
    message = (err as Error).message;
  }
  return {
    empty: problemExample(400, 'parse_error', 'JSON parse error - the request body is empty.', 'No body'),
    malformed: problemExample(400, 'parse_error', `JSON parse error - ${message}`, 'A body that is not JSON'),
  };
}
