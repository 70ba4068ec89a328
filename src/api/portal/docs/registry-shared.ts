import { operatorDenial, originatorDenial } from '../../../domain/portal/roles.js';
import type { RouteDoc } from '../../../http/contract.js';
import type { Method } from '../../../http/router.js';
import { examplesOf, headerRef, schemaRef } from '../../../http/openapi.js';
import type { z } from 'zod';
import { originExamples } from './components.js';
import { BODY_ERRORS, parseErrorExample, problem, problemExample, SESSION_ERRORS, type Examples } from './shared.js';

/**
 * What the operations of operator staff and originator managers share (./stations.ts,
 * ./originators.ts, ./history.ts): the 403 that names the missing membership (or the Origin rule), the
 * 404 of a station or originator that does not exist, and a builder that gives every operation the
 * responses each of its kind must have.
 */

export const ROLE_NOTE =
  'Operator staff of the station\'s operator and admins may use it; anyone else gets 403 naming the membership that is missing.';
export const MANAGER_NOTE = 'Managers of the originator and admins may use it; anyone else gets 403 naming the membership that is missing.';

/** The denials of an operator's station or of an originator, as the service words them. */
export const denials = {
  station: () => problemExample(403, 'forbidden', operatorDenial({ admin: false, operators: new Set(), originators: new Set() }, 'north-h2', 'This station')!, 'Staff of another operator'),
  operator: () => problemExample(403, 'forbidden', operatorDenial({ admin: false, operators: new Set(), originators: new Set() }, 'north-h2', 'This')!, 'Staff of another operator'),
  originator: () => problemExample(403, 'forbidden', originatorDenial({ admin: false, operators: new Set(), originators: new Set() }, 'mon-2')!, 'Not a manager of the originator'),
};

export interface RegistryOperation {
  /** The route's method: any but GET changes something (the Origin rule, no `Cache-Control` on its answer). */
  method: Method;
  tag: string;
  id: string;
  summary: string;
  description: string;
  /** The role a 403 names: the station's operator, an operator named in the path, an originator. */
  role: 'station' | 'operator' | 'originator';
  /** A JSON request body: its component schema, the zod schema behind it and examples of valid and invalid ones. */
  body?: { schema: string; zod: z.ZodType; required?: boolean; invalid: Examples };
  /** A raw body (the photo). */
  rawBody?: Record<string, unknown>;
  ok: { status: '200' | '201' | '204'; description: string; schema?: string; zod?: z.ZodType; headers?: Record<string, unknown> };
  /** Further responses (404, 409, 413, 415, 422) by status. */
  more?: Record<string, unknown>;
}

/** The operation, with 401, 429 and 500 always, 403 (role, and the Origin rule when it changes something), 400/413/415 for a body. */
export function registryOperation(op: RegistryOperation): RouteDoc {
  const changes = op.method !== 'GET';
  const forbidden = problem(
    changes
      ? 'The account lacks the membership this needs (`forbidden`), or the request\'s `Origin` is not the service\'s own (`forbidden_origin`). Nothing is changed.'
      : 'The account lacks the membership this needs.',
    { missing_role: denials[op.role](), ...(changes ? originExamples() : {}) },
  );
  const ok = op.ok.schema
    ? {
        description: op.ok.description,
        headers: { 'Cache-Control': headerRef('Cache-Control'), ...op.ok.headers },
        content: { 'application/json': { schema: schemaRef(op.ok.schema), examples: examplesOf(op.ok.zod!) } },
      }
    : { description: op.ok.description, ...(op.ok.headers ? { headers: op.ok.headers } : {}) };
  if (op.ok.schema && op.method !== 'GET') delete (ok.headers as Record<string, unknown>)['Cache-Control'];
  return {
    tags: [op.tag],
    operationId: op.id,
    summary: op.summary,
    description: `${op.description} ${op.role === 'originator' ? MANAGER_NOTE : ROLE_NOTE}${changes ? ' Needs `Origin`.' : ''}`,
    ...(op.body
      ? {
          requestBody: {
            required: op.body.required ?? true,
            content: { 'application/json': { schema: schemaRef(op.body.schema), examples: examplesOf(op.body.zod) } },
          },
        }
      : {}),
    ...(op.rawBody ? { requestBody: op.rawBody } : {}),
    responses: {
      [op.ok.status]: ok,
      ...(op.body
        ? { '400': problem('The body is not JSON or does not fit its schema; each problem names its field.', { ...op.body.invalid, ...parseErrorExample() }), ...BODY_ERRORS }
        : {}),
      '403': forbidden,
      ...op.more,
      ...SESSION_ERRORS,
    },
  };
}

export const notFound = (what: string, detail: string) => problem(what, { not_found: problemExample(404, 'not_found', detail) });
export const noStation = () => notFound('No station has this id.', 'No station "BERLX".');
export const badPage = () => ({ bad_limit: problemExample(400, 'invalid_query', 'limit: must be a whole number from 1 to 500', 'A limit out of range') });
