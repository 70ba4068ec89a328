/**
 * A route's contract (src/http/contract.ts): the core checks path parameters, query and body against
 * the route's schemas after authentication and before the handler, which gets the parsed values; a
 * mismatch is refused in the family's words (its `invalid` hook) or the core's default; the family's
 * document is built from the routes' own `doc`, their path and query parameters from their schemas.
 */
import t from 'tap';
import { z } from 'zod';
import { bearerToken } from '../../src/http/auth.js';
import { badRequest, DRF_ERRORS, json, PROBLEM_ERRORS, unauthorized } from '../../src/http/errors.js';
import type { Family } from '../../src/http/family.js';
import { buildDocument } from '../../src/http/openapi.js';
import { HttpServer } from '../../src/http/server.js';
import { createLogger } from '../../src/config/log.js';

const auth: Family['auth'] = (header) => {
  if (bearerToken(header) !== 'token') throw unauthorized('Not a token.');
  return { kind: 'maker', id: 'acme', tokenId: '1' };
};

/** A family with its own words for a refused input. */
const SPROCKETS: Family = {
  name: 'sprockets',
  prefix: '/sprockets/',
  auth,
  errors: DRF_ERRORS,
  invalid: ({ part, issues }) => badRequest('invalid', `${part}: ${issues.length} problem(s)`, { [part]: issues.map((i) => i.path.join('.')) }),
};
/** A family with the core's default refusal. */
const COGS: Family = { name: 'cogs', prefix: '/cogs/', auth, errors: PROBLEM_ERRORS };

const doc = (operationId: string) => ({ operationId, summary: operationId, description: operationId, responses: { '200': { description: 'OK.' } } });
const order = z.object({ teeth: z.number().int().min(3), colour: z.enum(['red', 'blue']).optional() });

const server = new HttpServer({ log: createLogger('silent'), maxBodyBytes: 1024, fallback: { name: 'root', prefix: '/', errors: PROBLEM_ERRORS } });
for (const family of [SPROCKETS, COGS]) {
  const base = family.prefix;
  server.route({
    family,
    method: 'GET',
    path: `${base}:id`,
    params: z.object({ id: z.string().regex(/^\d+$/).transform(Number).meta({ description: 'The part\'s number.', example: '42' }) }),
    query: z.object({ size: z.coerce.number().int().positive().optional().meta({ description: 'Its size, in millimetres.' }) }),
    doc: doc(`get${family.name}`),
    handler: (_req, { params, query }) => json(200, { id: params.id, size: query.size ?? null }),
  });
  server.route({
    family,
    method: 'POST',
    path: base,
    body: order,
    doc: doc(`post${family.name}`),
    handler: (_req, { body }) => json(200, { teeth: body!.teeth, colour: body!.colour ?? 'red' }),
  });
}
const port = await server.listen('127.0.0.1', 0);
t.teardown(() => server.closeConnections());
const url = `http://127.0.0.1:${port}`;
const call = async (path: string, init: RequestInit = {}) => {
  const res = await fetch(`${url}${path}`, { ...init, headers: { Authorization: 'Bearer token', 'Content-Type': 'application/json', ...init.headers } });
  return { status: res.status, body: (await res.json()) as unknown };
};

t.test('the handler gets the parsed values', async (t) => {
  t.same(await call('/sprockets/42?size=7'), { status: 200, body: { id: 42, size: 7 } }, 'params and query parsed (a number each)');
  t.same(await call('/cogs/5'), { status: 200, body: { id: 5, size: null } });
  t.same(await call('/cogs/', { method: 'POST', body: JSON.stringify({ teeth: 12 }) }), { status: 200, body: { teeth: 12, colour: 'red' } });
});

t.test('a mismatch is refused in the family\'s words, or the core\'s', async (t) => {
  t.same(await call('/sprockets/x'), { status: 400, body: { params: ['id'] } }, 'the family hook (DRF: the body it gives)');
  t.same(await call('/sprockets/', { method: 'POST', body: JSON.stringify({ teeth: 1, colour: 'green' }) }), {
    status: 400,
    body: { body: ['teeth', 'colour'] },
  });
  t.match(await call('/cogs/x'), { status: 404, body: { status: 404, code: 'not_found' } }, 'default: a bad path parameter names nothing');
  t.match(await call('/cogs/1?size=-1'), { status: 400, body: { code: 'invalid_parameter', detail: /^size: / } }, 'default: a bad query value');
  t.match(await call('/cogs/', { method: 'POST', body: '{"teeth": "many"}' }), { status: 400, body: { code: 'invalid', detail: /^teeth: / } }, 'default: a bad body');
  t.match(await call('/cogs/', { method: 'POST', body: '{' }), { status: 400, body: { code: 'parse_error' } }, 'a body that is not JSON');
  t.match(await call('/cogs/1?sise=1'), { status: 400, body: { detail: 'unknown parameter(s): sise; this path takes size.' } }, 'an unknown name: the query rule');
});

t.test('checked after authentication', async (t) => {
  const res = await fetch(`${url}/sprockets/x`);
  t.equal(res.status, 401, 'no credential: 401 before the parameters are looked at');
  await res.arrayBuffer();
});

t.test('the document is made of the routes\' own operations', async (t) => {
  const definition = {
    family: 'cogs',
    info: { title: 'Cogs', version: '1' },
    tags: [],
    securitySchemes: { cogsToken: { type: 'http', scheme: 'bearer' } },
    requestSchemas: {},
    responseSchemas: { Problem: z.object({ detail: z.string() }) },
    headers: { 'X-Request-Id': { schema: { type: 'string' } } },
    responses: {},
    everyResponseHeaders: ['X-Request-Id'],
    afterAuthenticationHeaders: [],
  };
  const document = buildDocument(definition, server.routes());
  t.same(Object.keys(document.paths), ['/cogs/{id}', '/cogs/'], 'the family\'s routes, in order');
  t.equal(document.paths['/cogs/{id}']!.get!.operationId, 'getcogs');
  t.ok(document.paths['/cogs/{id}']!.get!.responses, 'with the 400 of an unknown parameter added');
  t.throws(() => buildDocument(definition, [...server.routes(), { method: 'GET', path: '/cogs/bare', auth: 'cogs' }]), /no description of GET \/cogs\/bare/);

  const { parameters } = document.paths['/cogs/{id}']!.get! as { parameters: Record<string, unknown>[] };
  t.match(parameters, [
    { name: 'id', in: 'path', required: true, description: 'The part\'s number.', schema: { type: 'string', pattern: '^\\d+$' }, example: '42' },
    { name: 'size', in: 'query', required: false, description: 'Its size, in millimetres.', schema: { type: 'integer', exclusiveMinimum: 0 } },
  ], 'the parameters are the params and query schemas\' fields, described by their metadata');
  t.equal(parameters.length, 2);
  t.notOk('parameters' in document.paths['/cogs/']!.post!, 'none where the route takes none');

  const route = (extra: object) => ({ method: 'GET' as const, path: '/cogs/:serial/teeth', auth: 'cogs', doc: doc('teeth'), ...extra });
  const serial = z.object({ serial: z.string().meta({ description: 'The serial number.', component: 'serial' }) });
  const shared = buildDocument(definition, [route({ params: serial })]);
  t.same(shared.paths['/cogs/{serial}/teeth']!.get!.parameters, [{ $ref: '#/components/parameters/serial' }], 'a component by its metadata\'s name');
  t.same((shared.components.parameters as Record<string, unknown>).serial, { name: 'serial', in: 'path', required: true, description: 'The serial number.', schema: { type: 'string' } });
  t.throws(() => buildDocument(definition, [route({})]), /path parameter serial of GET \/cogs\/:serial\/teeth has no description/, 'a path parameter without a schema');
  t.throws(
    () => buildDocument(definition, [route({ params: serial, querySchema: z.object({ bare: z.string().optional() }) })]),
    /query parameter bare of GET \/cogs\/:serial\/teeth has no description/,
    'a query parameter without a description',
  );
  const byHand = { ...doc('teeth'), parameters: [{ name: 'serial', in: 'path', required: true, description: 'By hand.', schema: {} }] };
  t.throws(() => buildDocument(definition, [route({ params: serial, doc: byHand })]), /describes a path or query parameter by hand/, 'the operation may list request headers only');
});
