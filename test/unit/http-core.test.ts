/**
 * The HTTP core without a database: the router, route contracts, families, WebSocket upgrades, the summary cache and the ordered stop.
 *
 * One file, one process: its parts share the loaded platform code. Each part is a subtest named after
 * what it covers.
 */
import t from 'tap';
import { deadlineTimer, LATE_MS, MAX_GRACE } from '../../src/domain/late-timer.js';
import { z } from 'zod';
import { type SummaryDeps, summaryRoutes } from '../../src/api/export-legacy/status.js';
import { createLogger } from '../../src/config/log.js';
import { positionOf, syncToken } from '../../src/domain/export-v2/delta.js';
import type { StationEntry } from '../../src/domain/stations.js';
import { bearerToken } from '../../src/http/auth.js';
import { answerBodies, BodyPool } from '../../src/http/body-pool.js';
import { badRequest, DRF_ERRORS, HttpError, json, PROBLEM_ERRORS, type Reply, unauthorized } from '../../src/http/errors.js';
import type { Family } from '../../src/http/family.js';
import { httpDate } from '../../src/http/dates.js';
import { buildDocument } from '../../src/http/openapi.js';
import { textQuery } from '../../src/http/query.js';
import type { Request } from '../../src/http/request.js';
import { Router } from '../../src/http/router.js';
import { HttpServer } from '../../src/http/server.js';
import { Closers } from '../../src/platform-closers.js';
import { logCapture } from '../helpers/platform.js';
import { WsClient } from '../helpers/ws.js';

t.test('router', async (t) => {
  t.test('static, parameter and trailing-slash matching', async (t) => {
    const r = new Router<string>();
    r.add('GET', '/v2/hrs', 'list');
    r.add('GET', '/v2/hrs/status', 'all-status');
    r.add('GET', '/v2/hrs/:hrs_id', 'one');
    r.add('POST', '/import/v2/signal/usage/', 'usage');
    t.match(r.match('GET', '/v2/hrs'), { kind: 'found', route: 'list' });
    t.match(r.match('GET', '/v2/hrs/status'), { kind: 'found', route: 'all-status' });
    t.match(r.match('GET', '/v2/hrs/BERLA'), { kind: 'found', route: 'one', params: { hrs_id: 'BERLA' } });
    t.match(r.match('HEAD', '/v2/hrs/BERLA'), { kind: 'found', route: 'one' });
    t.same(r.match('DELETE', '/v2/hrs/BERLA'), { kind: 'method-not-allowed', allow: ['GET', 'HEAD', 'OPTIONS'] });
    t.same(r.match('GET', '/import/v2/signal/usage/'), { kind: 'method-not-allowed', allow: ['POST', 'OPTIONS'] });
    t.same(r.match('POST', '/import/v2/signal/usage'), { kind: 'not-found', suggestion: '/import/v2/signal/usage/' });
    t.same(r.match('GET', '/v2/hrs/'), { kind: 'not-found', suggestion: '/v2/hrs' });
    t.same(r.match('GET', '/nothing'), { kind: 'not-found' });
    t.throws(() => r.add('GET', '/v2/hrs', 'again'), /registered twice/);
  });

  t.test('a parameter that cannot be an id matches nothing: NUL, lone surrogate, invalid percent-encoding', async (t) => {
    const r = new Router<string>();
    r.add('GET', '/v2/hrs/:hrs_id', 'one');
    r.add('GET', '/v2/hrs/:hrs_id/events', 'events');
    for (const bad of ['BERLA%00', '%00', 'BER%00LA', '%ED%A0%80', 'A%E0%A4%A', '%zz', 'a%', '\u0000', 'a\ud800b', '\udfff']) {
      t.same(r.match('GET', `/v2/hrs/${bad}`), { kind: 'not-found' }, `/v2/hrs/${JSON.stringify(bad)}`);
      t.same(r.match('GET', `/v2/hrs/${bad}/events`), { kind: 'not-found' }, `/v2/hrs/${JSON.stringify(bad)}/events`);
    }
    t.match(r.match('GET', '/v2/hrs/%F0%9F%98%80'), { kind: 'found', params: { hrs_id: '\u{1f600}' } }, 'a surrogate pair is fine');
    t.match(r.match('GET', '/v2/hrs/caf%C3%A9'), { kind: 'found', params: { hrs_id: 'café' } });
  });

  t.test('a path matched again shares its frozen parameters; a route added later is matched at once', async (t) => {
    const r = new Router<string>();
    r.add('GET', '/a/:x/:y', 'two');
    const first = r.match('GET', '/a/b/c');
    t.match(first, { kind: 'found', route: 'two', params: { x: 'b', y: 'c' } });
    const again = r.match('GET', '/a/b/c');
    t.equal(again.kind === 'found' && again.params, first.kind === 'found' && first.params, 'the same parameters, kept for the path');
    t.ok(first.kind === 'found' && Object.isFrozen(first.params), 'frozen: no request can change another\'s');
    t.match(r.match('POST', '/a/b/c'), { kind: 'method-not-allowed', allow: ['GET', 'HEAD', 'OPTIONS'] }, 'another method of a kept path');
    r.add('GET', '/a/b/:y', 'one');
    t.match(r.match('GET', '/a/b/c'), { kind: 'found', route: 'one', params: { y: 'c' } }, 'fewer parameters win, also for a path kept before');
    r.add('POST', '/a/:x/:y', 'posted');
    t.match(r.match('POST', '/a/q/c'), { kind: 'found', route: 'posted', params: { x: 'q', y: 'c' } });
    let wrong = 0;
    for (let i = 0; i < 10_050; i++) {
      const m = r.match('GET', `/a/z${i}/c`);
      if (m.kind !== 'found' || m.route !== 'two' || m.params.x !== `z${i}`) wrong++;
    }
    t.equal(wrong, 0, 'more paths than are kept: each matched as it should be');
    t.match(r.match('GET', '/a/b/c'), { kind: 'found', route: 'one', params: { y: 'c' } }, 'past the paths kept: matched again as before');
  });

  t.test('TRACE is known and never routed: 405 with Allow where the path exists', async (t) => {
    const r = new Router<string>();
    r.add('GET', '/v2/hrs', 'list');
    t.same(r.match('TRACE', '/v2/hrs'), { kind: 'method-not-allowed', allow: ['GET', 'HEAD', 'OPTIONS'] });
    t.same(r.match('TRACE', '/v2/nothing'), { kind: 'not-found' });
  });
});

t.test('route-contract', async (t) => {
  /**
   * A route's contract (src/http/contract.ts): the core checks path parameters, query and body against
   * the route's schemas after authentication and before the handler, which gets the parsed values; a
   * mismatch is refused in the family's words (its `invalid` hook) or the core's default; the family's
   * document is built from the routes' own `doc`, their path and query parameters from their schemas.
   */
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
    t.same(await call('/sprockets/42'), { status: 200, body: { id: 42, size: null } }, 'the same path again: its parameters as checked the first time');
    t.same(await call('/cogs/42'), { status: 200, body: { id: 42, size: null } }, 'another route\'s parameters of the same value: its own schema');
    t.same(await call('/cogs/5'), { status: 200, body: { id: 5, size: null } });
    t.same(await call('/cogs/', { method: 'POST', body: JSON.stringify({ teeth: 12 }) }), { status: 200, body: { teeth: 12, colour: 'red' } });
  });

  t.test('a mismatch is refused in the family\'s words, or the core\'s', async (t) => {
    t.same(await call('/sprockets/x'), { status: 400, body: { params: ['id'] } }, 'the family hook (DRF: the body it gives)');
    t.same(await call('/sprockets/x'), { status: 400, body: { params: ['id'] } }, 'and again: a refusal is not kept as a check passed');
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
});

t.test('http-families', async (t) => {
  /**
   * The HTTP core on its own, with families it has never heard of: authentication, guards, observers,
   * error styles and policies are values handed to it with the routes, so a new API family is a value,
   * not a change to src/http/.
   */
  const seen: { path: string; status: number }[] = [];

  const WIDGETS: Family = {
    name: 'widgets',
    prefix: '/widgets/',
    auth: (header) => {
      if (bearerToken(header) !== 'w-token') throw unauthorized('Not a widget token.');
      return { kind: 'maker', id: 'acme', tokenId: '7' };
    },
    errors: DRF_ERRORS,
    policy: { headers: { 'X-Widget-Policy': 'on' } },
    guards: [
      (req) => {
        req.responseHeaders['X-Guarded'] = 'yes';
        if (req.query.get('refuse') === '1') throw new HttpError(429, 'throttled', DRF_ERRORS.throttled('at most 0 requests', '1 second'));
      },
    ],
    observers: [(req, reply: Reply) => seen.push({ path: req.path, status: reply.status })],
  };

  const GADGETS: Family = { name: 'gadgets', prefix: '/gadgets/', errors: PROBLEM_ERRORS };
  const ROOT: Family = { name: 'root', prefix: '/', errors: PROBLEM_ERRORS };

  t.test('families as values: auth, guards, observers, error styles, policies, public routes', async (t) => {
    const server = new HttpServer({ log: createLogger('silent'), maxBodyBytes: 1024, fallback: ROOT });
    const refuse = textQuery('refuse');
    server.route({ family: WIDGETS, method: 'GET', path: '/widgets/mine', query: refuse, handler: (req) => json(200, { who: req.principal?.id }) });
    server.route({ family: GADGETS, public: true, method: 'GET', path: '/gadgets/catalogue', handler: () => json(200, { gadgets: [] }) });
    t.throws(
      () => server.route({ family: GADGETS, method: 'GET', path: '/gadgets/secret', handler: () => json(200, {}) }),
      /family gadgets has no authentication/,
      'a route needing a credential on a family without authentication is refused at registration',
    );
    t.same(server.routes(), [
      { method: 'GET', path: '/widgets/mine', auth: 'widgets', query: ['refuse'], querySchema: refuse },
      { method: 'GET', path: '/gadgets/catalogue', auth: 'none' },
    ]);
    const port = await server.listen('127.0.0.1', 0);
    t.teardown(() => server.closeConnections());
    const url = `http://127.0.0.1:${port}`;
    const get = (path: string, token?: string) => fetch(`${url}${path}`, { headers: token ? { Authorization: `Bearer ${token}` } : {} });

    let res = await get('/widgets/mine', 'w-token');
    t.equal(res.status, 200);
    t.same(await res.json(), { who: 'acme' });
    t.equal(res.headers.get('x-widget-policy'), 'on', 'the family policy');
    t.equal(res.headers.get('x-guarded'), 'yes', 'the family guard ran');

    res = await get('/widgets/mine', 'other');
    t.equal(res.status, 401);
    t.same(await res.json(), { detail: 'Not a widget token.' }, 'the family error style');
    t.equal(res.headers.get('x-widget-policy'), 'on', 'the policy on errors too');

    res = await get('/widgets/mine?refuse=1', 'w-token');
    t.equal(res.status, 429);
    t.same(await res.json(), { detail: 'Request was throttled: at most 0 requests. Expected available in 1 second.' });

    res = await get('/widgets/nothing');
    t.same([res.status, await res.json()], [404, { detail: 'Not found.' }], 'an unknown path under the prefix is the family\'s');
    res = await get('/gadgets/catalogue');
    t.equal(res.status, 200, 'a public route needs no credential');
    res = await get('/gadgets/nothing');
    t.equal(res.headers.get('content-type'), 'application/problem+json; charset=utf-8');
    res = await get('/elsewhere');
    t.match(await res.json(), { status: 404, title: 'Not Found' }, 'the fallback family answers the rest');
    t.equal(res.headers.get('x-widget-policy'), null);

    t.same(seen, [
      { path: '/widgets/mine', status: 200 },
      { path: '/widgets/mine', status: 401 },
      { path: '/widgets/mine', status: 429 },
    ], 'observers see every answer of the family\'s credentialed routes, refusals included; not 404s or public routes');
  });

  t.test('hooks: a classifier for known failures, and every answer told to onAnswered', async (t) => {
    class Unreachable extends Error {}
    const answered: { status: number; family: string; route: string | undefined }[] = [];
    const server = new HttpServer({
      log: createLogger('silent'),
      maxBodyBytes: 1024,
      fallback: ROOT,
      classify: (err) => (err instanceof Unreachable ? new HttpError(503, 'unavailable', 'Try again soon.', { headers: { 'Retry-After': '2' } }) : undefined),
      onAnswered: (a) => answered.push({ status: a.status, family: a.family.name, route: a.route }),
    });
    server.route({ family: GADGETS, public: true, method: 'GET', path: '/gadgets/:id', handler: () => { throw new Unreachable('db down'); } });
    server.route({ family: GADGETS, public: true, method: 'GET', path: '/gadgets/boom/now', handler: () => { throw new Error('bug'); } });
    const port = await server.listen('127.0.0.1', 0);
    t.teardown(() => server.closeConnections());
    let res = await fetch(`http://127.0.0.1:${port}/gadgets/7`);
    t.equal(res.status, 503);
    t.equal(res.headers.get('retry-after'), '2');
    t.match(await res.json(), { status: 503, code: 'unavailable', detail: 'Try again soon.' });
    res = await fetch(`http://127.0.0.1:${port}/gadgets/boom/now`);
    t.equal(res.status, 500, 'what the classifier does not know stays a 500');
    await res.arrayBuffer();
    res = await fetch(`http://127.0.0.1:${port}/nowhere`);
    await res.arrayBuffer();
    t.same(answered, [
      { status: 503, family: 'gadgets', route: '/gadgets/:id' },
      { status: 500, family: 'gadgets', route: '/gadgets/boom/now' },
      { status: 404, family: 'root', route: undefined },
    ]);
  });

  t.test('a family without authentication may run its guards on its public routes and sockets (guardsOnPublicRoutes)', async (t) => {
    const counted: string[] = [];
    const guard = (req: { path: string; query: URLSearchParams }) => {
      counted.push(req.path);
      if (req.query.get('refuse') === '1') throw new HttpError(429, 'throttled', PROBLEM_ERRORS.throttled('at most 0 requests per client address', '1 second'));
    };
    const OPEN: Family = { name: 'open', prefix: '/open/', errors: PROBLEM_ERRORS, guards: [guard], guardsOnPublicRoutes: true };
    const server = new HttpServer({ log: createLogger('silent'), maxBodyBytes: 1024, fallback: ROOT });
    server.route({ family: OPEN, public: true, method: 'GET', path: '/open/data', query: textQuery('refuse'), handler: () => json(200, { ok: true }) });
    server.route({ family: WIDGETS, public: true, method: 'GET', path: '/widgets/free', handler: () => json(200, { ok: true }) });
    const port = await server.listen('127.0.0.1', 0);
    t.teardown(() => server.closeConnections());
    let res = await fetch(`http://127.0.0.1:${port}/open/data`);
    t.equal(res.status, 200);
    await res.arrayBuffer();
    res = await fetch(`http://127.0.0.1:${port}/open/data?refuse=1`);
    t.equal(res.status, 429, 'the guard refuses a public route of such a family');
    t.match(await res.json(), { status: 429, code: 'throttled' });
    res = await fetch(`http://127.0.0.1:${port}/widgets/free`);
    await res.arrayBuffer();
    t.equal(res.headers.get('x-guarded'), null, 'a family with guards that does not say so keeps its public routes unguarded');
    t.same(counted, ['/open/data', '/open/data']);
  });
});

t.test('body-pool', async (t) => {
  /**
   * Answer bodies made per request (./src/http/body-pool.ts): taken from a pool, given back by the HTTP
   * core once written, and only then; never a buffer from elsewhere, never one given back twice.
   */
  t.test('take and give: exact lengths, memory used again, foreign and doubled ones ignored, large ones fresh', async (t) => {
    const pool = new BodyPool(256 * 1024, 2);
    const a = pool.take(5000);
    t.equal(a.length, 5000);
    t.equal(a.buffer.byteLength, 8192, 'a size class of its own');
    pool.give(a);
    t.equal(pool.kept, 1);
    const b = pool.take(7000);
    t.equal(b.buffer, a.buffer, 'the memory given back holds the next body of its class');
    t.equal(pool.kept, 0);
    pool.give(b);
    pool.give(b);
    t.equal(pool.kept, 1, 'given back twice: taken back once');
    const c = pool.take(6000);
    const d = pool.take(6000);
    t.not(c.buffer, d.buffer, 'two bodies out at once never share memory');
    pool.give(Buffer.alloc(8192));
    pool.give(Buffer.from(c.buffer, 0, 100).subarray(10));
    pool.give('text');
    t.equal(pool.kept, 0, 'a buffer not taken here, a slice of one, or a string: ignored');
    pool.give(c);
    pool.give(d);
    pool.give(pool.take(6000));
    pool.give(pool.take(6000));
    const e = pool.take(6000);
    const f = pool.take(6000);
    const g = pool.take(6000);
    for (const body of [e, f, g]) pool.give(body);
    t.equal(pool.kept, 2, 'at most `keep` kept per class');
    pool.give(pool.take(100));
    t.equal(pool.kept, 2, 'under 4 kB: Node\'s own pool\'s, never kept');
    const large = pool.take(256 * 1024);
    pool.give(large);
    t.equal(pool.kept, 2, 'from `largest` on: made fresh, never kept');
  });

  t.test('the HTTP core gives a body back once written, and not while an observer may keep it', async (t) => {
    const kept: Reply[] = [];
    const OPEN: Family = { name: 'open', prefix: '/open/', errors: PROBLEM_ERRORS, auth: () => ({ kind: 'reader', id: 'r', tokenId: '1' }) };
    const WATCHED: Family = { ...OPEN, name: 'watched', prefix: '/watched/', observers: [(_req, reply) => kept.push(reply)] };
    const server = new HttpServer({ log: createLogger('silent'), maxBodyBytes: 1024, fallback: OPEN });
    const page = (fill: number) => {
      const body = answerBodies.take(20_000);
      body.fill(fill);
      return { status: 200, headers: { 'Content-Type': 'application/octet-stream' }, body };
    };
    let n = 0;
    server.route({ family: OPEN, method: 'GET', path: '/open/page', handler: () => page(++n) });
    server.route({ family: WATCHED, method: 'GET', path: '/watched/page', handler: () => page(++n) });
    const port = await server.listen('127.0.0.1', 0);
    t.teardown(() => server.closeConnections());
    const bytes = async (path: string) => Buffer.from(await (await fetch(`http://127.0.0.1:${port}${path}`, { headers: { Authorization: 'Bearer x' } })).arrayBuffer());
    const first = await bytes('/open/page');
    t.same([first.length, first[0], first[19_999]], [20_000, 1, 1]);
    const before = answerBodies.kept;
    t.ok(before > 0, 'written, its memory is back in the pool');
    const watched = await bytes('/watched/page');
    t.same([watched.length, watched[0]], [20_000, 2]);
    t.equal(answerBodies.kept, before - 1, 'a family with an observer keeps its body: not given back');
    await bytes('/open/page');
    t.equal((kept[0]!.body as Buffer)[0], 2, 'what the observer kept is still its own answer after the next one');
  });
});

t.test('ws-upgrade-open', async (t) => {
  /**
   * A WebSocket whose upgrade waited (for Redis, say) stays open after its `open` handler ran.
   *
   * With the uWebSockets.js build in use, an upgrade made after an await goes through
   * `res.cork(() => res.upgrade(...))`. uWS's HttpResponse::cork, once its callback returns, checks
   * whether the socket was upgraded by comparing pointers; the upgrade's realloc of the socket
   * shrinks it in place, so the check misses it and cork goes on reading the HTTP response's `state`
   * from memory the realloc just freed. When the `open` handler (run inside that callback) allocated
   * memory that lands there with the 0x10 bit (HTTP_CONNECTION_CLOSE) set and 0x08
   * (HTTP_RESPONSE_PENDING) clear, cork shuts the new WebSocket down at once: the client sees 1006
   * within a millisecond of opening (upstream uWebSockets pull request 1929, fixed after this build).
   * Native allocations in `open` (ws.subscribe, a send that spills, a timer) made it happen now and
   * then; here `open` allocates native buffers of every small size filled with 0x10, which makes it
   * happen every time unless the route's `open` runs after the upgrade has returned
   * (src/http/sockets.ts, socketBehavior). Thirty servers in one process, three sockets each, as the
   * flaky tests had them; the upgrade decided at once (inside uWS's handler) is checked alongside.
   */
  const PROBE: Family = { name: 'probe', prefix: '/probe/', errors: PROBLEM_ERRORS };
  const ROOT: Family = { name: 'root', prefix: '/', errors: PROBLEM_ERRORS };
  const SERVERS = 30;
  const SOCKETS = 3;

  /** Native (off-heap) buffers of 72 to 512 bytes, every byte 0x10, as a native allocation in `open` might leave them. */
  function nativeAllocations(): Buffer[] {
    const buffers: Buffer[] = [];
    for (let size = 72; size <= 512; size += 8) buffers.push(Buffer.allocUnsafeSlow(size).fill(0x10));
    return buffers;
  }

  async function server(t: { teardown(fn: () => unknown): void }): Promise<{ port: number; opened: () => number }> {
    const server = new HttpServer({ log: createLogger('silent'), maxBodyBytes: 1024, fallback: ROOT });
    let opened = 0;
    const held = new Map<object, Buffer[]>();
    for (const [path, admit] of [
      ['/probe/later', async () => { await new Promise((resolve) => setTimeout(resolve, 1)); return {}; }],
      ['/probe/at-once', () => ({})],
    ] as const) {
      server.socket<object>({
        family: PROBE,
        path,
        public: true,
        messageAuth: false,
        admit,
        behavior: {
          idleTimeout: 60,
          open: (ws) => {
            opened++;
            held.set(ws, nativeAllocations());
            ws.send(JSON.stringify({ type: 'hello' }), false, false);
          },
          close: (ws) => void held.delete(ws),
        },
      });
    }
    const port = await server.listen('127.0.0.1', 0);
    t.teardown(() => server.closeConnections());
    return { port, opened: () => opened };
  }

  /**
   * How many of the 90 sockets may still be dropped upgraded after an await: the residual the
   * uWebSockets.js row of docs/dependencies.md describes (an allocation of uWS's or V8's own between
   * the realloc and cork's check), seen here at 2 of 2,250 sockets over 25 runs of this test beside a
   * busy core, never on the upgrade decided at once. With the route's `open` run inside the upgrade,
   * 83 to 90 of the 90 are dropped: the bound tells the two apart with room on both sides.
   */
  const RESIDUAL: Record<string, number> = { '/probe/later': 2, '/probe/at-once': 0 };
  for (const path of ['/probe/later', '/probe/at-once']) {
    t.test(`${path}: ${SERVERS} servers in one process, ${SOCKETS} sockets each, all stay open`, async (t) => {
      const dropped: string[] = [];
      for (let round = 0; round < SERVERS; round++) {
        const { port, opened } = await server(t);
        const clients: WsClient[] = [];
        for (let i = 0; i < SOCKETS; i++) {
          const client = await WsClient.connect(`ws://127.0.0.1:${port}${path}`);
          clients.push(client);
          await client.next().catch(() => undefined);
        }
        await new Promise((resolve) => setTimeout(resolve, 30));
        let droppedHere = 0;
        clients.forEach((client, i) => {
          if (!client.closed) return;
          droppedHere++;
          dropped.push(`server ${round}, socket ${i}: ${client.closed.code}`);
        });
        // A socket shut before its `open` ran is left out of it (socketBehavior): every other one's ran.
        t.equal(opened(), SOCKETS - droppedHere, `server ${round}: every socket's open ran but a dropped one's`);
        for (const client of clients) client.close();
      }
      t.ok(dropped.length <= RESIDUAL[path]!, `no socket closed right after opening, but at most ${RESIDUAL[path]} (dropped: ${JSON.stringify(dropped)})`);
    });
  }
});

t.test('export-v1-summary-cache', async (t) => {
  /**
   * The kept list of `GET /v1.1/hrs/status`: served from memory while nothing moved, computed again when
   * the live status or the registry moves, and never past the next opening or closing minute.
   */
  type Handler = (req: Request) => { status: number; body?: unknown };

  function routes(deps: SummaryDeps): Record<string, Handler> {
    const found: Record<string, Handler> = {};
    const server = { route: (r: { path: string; handler: Handler }) => (found[r.path] = r.handler) } as unknown as HttpServer;
    summaryRoutes(server, { name: 'export_v1.1', prefix: '/v1.1/' } as Family, 'v1.1', deps);
    return found;
  }

  const request = (): Request => ({ query: new URLSearchParams(), headers: {}, params: {} }) as unknown as Request;
  const body = (reply: { body?: unknown }) => JSON.parse((reply.body as Buffer).toString('utf8'));

  t.test('recomputed at the opening minute, and when the status or the registry moves', async (t) => {
    const opensAt = Date.parse('2026-11-24T09:00:00Z'); // 10:00 in Berlin
    let now = opensAt - 1;
    const station: StationEntry = { hrsId: 'OPENS', name: 'Opens', heavyDuty: false, layout: null, v1FuelTypes: ['700car'], openingHours: 'Mo-Su 10:00-20:00', timeZone: 'Europe/Berlin' };
    const stations = { version: 1, station: (id: string) => (id === 'OPENS' ? station : undefined), stationIds: () => ['OPENS'][Symbol.iterator](), hasLiveSource: () => true };
    let reads = 0;
    const status = { availabilityVersion: 1, published: () => (reads++, undefined) };
    const list = routes({ stations, status, opening: { nextDue: () => opensAt }, now: () => new Date(now) })['/v1.1/hrs/status']!;

    t.match(body(list(request())), [{ hrs_id: 'OPENS', fuelling_options: [{ fuel_type: '700ld', status: 'CLOSED' }] }], 'closed one millisecond before ten');
    list(request());
    t.equal(reads, 1, 'the second request is served from the kept list');
    now = opensAt;
    t.match(body(list(request())), [{ fuelling_options: [{ status: 'UNKNOWN', reason: 'no_signal' }] }], 'at ten: open, never CLOSED');
    t.equal(reads, 2);
    status.availabilityVersion++;
    list(request());
    t.equal(reads, 3, 'a status change recomputes');
    stations.version++;
    list(request());
    t.equal(reads, 4, 'so does a registry reload');
  });

  t.test('only availability moves the version the summary keeps its list by', async (t) => {
    const { LiveStatus } = await import('../../machines/live-status.js');
    const station: StationEntry = { hrsId: 'BERLA', name: 'Berlin', heavyDuty: false, layout: null };
    const directory = { station: (id: string) => (id === 'BERLA' ? station : undefined), stationIds: () => ['BERLA'][Symbol.iterator](), hasLiveSource: () => true };
    const log = { debug() {}, info() {}, warn() {}, error() {} };
    const status = new LiveStatus(directory, log as never, { staleAfterMs: 300_000, unknownAfterMs: 1_800_000, pricingStaleAfterMs: 90_000_000 });
    t.teardown(() => status.close());
    const signal = (category: 'usage' | 'availability') => ({ hrsId: 'BERLA', category, originatorId: 'mon-1', datetime: Date.now(), receivedAt: Date.now(), payload: {} });
    const [all, availability] = [status.version, status.availabilityVersion];
    status.publish([signal('usage')]);
    t.not(status.version, all, 'a usage reading moves the status');
    t.equal(status.availabilityVersion, availability, 'but not what the summary reads');
    status.publish([signal('availability')]);
    t.not(status.availabilityVersion, availability, 'an availability reading does');
  });

  t.test('one station\'s answer is kept while its reading, freshness and registry hold, never past an opening minute', async (t) => {
    const opensAt = Date.parse('2026-11-24T09:00:00Z'); // 10:00 in Berlin
    let now = opensAt - 1;
    const station: StationEntry = { hrsId: 'OPENS', name: 'Opens', heavyDuty: false, layout: null, v1FuelTypes: ['700car'], openingHours: 'Mo-Su 10:00-20:00', timeZone: 'Europe/Berlin' };
    const stations = { version: 1, station: (id: string) => (id === 'OPENS' ? station : undefined), stationIds: () => ['OPENS'][Symbol.iterator](), hasLiveSource: () => true };
    const held = { reading: { datetime: now - 60_000, receivedAt: now - 59_000, payload: { station: { maintenance: false, limitedly_available: false }, nozzles: [], fuelling_options: { '700ld': true } } }, freshness: 'fresh' };
    let current: typeof held | undefined = held;
    const status = { availabilityVersion: 1, published: () => current };
    const single = routes({ stations, status, opening: { nextDue: () => opensAt }, now: () => new Date(now) })['/v1.1/hrs/:hrs_id/status']!;
    const one = () => {
      const req = { ...request(), params: { hrs_id: 'OPENS' } } as unknown as Request;
      return JSON.parse(String(single(req).body)) as { fuelling_options: { status: string; reason?: string }[] };
    };
    t.match(one(), { fuelling_options: [{ status: 'CLOSED' }] }, 'closed one millisecond before ten');
    const kept = single({ ...request(), params: { hrs_id: 'OPENS' } } as unknown as Request).body;
    t.equal(single({ ...request(), params: { hrs_id: 'OPENS' } } as unknown as Request).body, kept, 'served as kept (the same text)');
    now = opensAt;
    t.match(one(), { fuelling_options: [{ status: 'UNKNOWN', reason: 'not_reported', datetime: new Date(held.reading.datetime).toISOString() }] }, 'at ten: open, computed again');
    current = { reading: { ...held.reading, datetime: now - 1000 }, freshness: 'fresh' };
    t.match(one(), { fuelling_options: [{ datetime: new Date(now - 1000).toISOString() }] }, 'a new reading is answered at once');
    current = { reading: current.reading, freshness: 'unknown' };
    t.match(one(), { fuelling_options: [{ status: 'UNKNOWN' }] }, 'so is its freshness');
    current = undefined;
    t.match(one(), { fuelling_options: [{ status: 'UNKNOWN', reason: 'no_signal' }] }, 'and no reading any more');
    const before = one();
    stations.version++;
    station.openingHours = 'Mo-Su 11:00-20:00';
    t.not(JSON.stringify(one()), JSON.stringify(before), 'a registry reload is answered at once');
    t.match(one(), { fuelling_options: [{ status: 'CLOSED' }] });
  });
});

t.test('platform-closers', async (t) => {
  /** A list of closers over a captured log, and what each close did, in order. */
  function closers() {
    const logs = logCapture();
    const list = new Closers(createLogger('info', logs.stream));
    const closed: string[] = [];
    const add = (what: string, fail?: Error) =>
      list.add(what, async () => {
        await new Promise((resolve) => setImmediate(resolve));
        closed.push(what);
        if (fail) throw fail;
      });
    return { list, closed, add, logs };
  }

  t.test('what started last stops first, each once', async (t) => {
    const { list, closed, add } = closers();
    for (const what of ['PostgreSQL', 'Redis', 'the bus', 'the workers', 'the listener']) add(what);
    await list.close();
    t.strictSame(closed, ['the listener', 'the workers', 'the bus', 'Redis', 'PostgreSQL']);
    await list.close();
    t.equal(closed.length, 5, 'a second close stops nothing again');
  });

  t.test('one stopped ahead of its turn is not stopped again in it', async (t) => {
    const { list, closed, add } = closers();
    add('Redis');
    const sockets = add('the status streams');
    add('the workers');
    await sockets();
    await sockets();
    t.strictSame(closed, ['the status streams'], 'stopped once, at once');
    await list.close();
    t.strictSame(closed, ['the status streams', 'the workers', 'Redis']);
  });

  t.test('a failure is logged, the rest still stopped, and the first failure thrown at the end', async (t) => {
    const { list, closed, add, logs } = closers();
    add('PostgreSQL');
    add('Redis', new Error('Redis would not close'));
    add('the bus', new Error('the bus would not close'));
    add('the listener');
    await t.rejects(list.close(), { message: 'the bus would not close' });
    t.strictSame(closed, ['the listener', 'the bus', 'Redis', 'PostgreSQL'], 'everything was stopped');
    t.strictSame(
      logs.lines.map((line) => line.msg),
      ['stopping the bus failed', 'stopping Redis failed'],
      'each failure logged',
    );
  });
});

t.test('late-timer', async (t) => {
  /**
   * Deadlines on PostgreSQL and Redis (src/domain/late-timer.ts) do not count time the event loop was
   * blocked: a timer that fires late is set again for as long as it was late, so an answer that waits
   * in the socket (or a command not yet written) is read before the deadline is declared passed.
   */
  const block = (ms: number) => {
    const until = performance.now() + ms;
    while (performance.now() < until);
  };
  const wait = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

  t.test('on time: the deadline passes when due', async (t) => {
    let expired = 0;
    deadlineTimer(30, () => expired++);
    await wait(80);
    t.equal(expired, 1);
  });

  t.test('a blocked loop: the time it was blocked is given back, and an answer read meanwhile wins', async (t) => {
    let expired = 0;
    const timer = deadlineTimer(30, () => expired++);
    block(200);
    // The answer, read as soon as the loop is free: before the deadline given back has passed.
    setTimeout(() => timer.clear(), 20);
    await wait(300);
    t.equal(expired, 0, 'the deadline did not pass on time the process itself took');
  });

  t.test('a blocked loop, no answer: the deadline passes later, once the loop was free long enough', async (t) => {
    let expiredAt = 0;
    const started = performance.now();
    deadlineTimer(30, () => (expiredAt = performance.now() - started));
    block(200);
    await wait(400);
    t.ok(expiredAt >= 200, `it passed after the block and the time given back (${Math.round(expiredAt)} ms)`);
  });

  t.test('a loop blocked again and again: the grace has a bound', async (t) => {
    let expired = 0;
    deadlineTimer(LATE_MS, () => expired++);
    for (let i = 0; i < MAX_GRACE + 4 && expired === 0; i++) {
      block(LATE_MS * 3);
      await new Promise((resolve) => setImmediate(resolve));
      await wait(1);
    }
    await wait(LATE_MS * 4);
    t.equal(expired, 1, 'it passes all the same');
  });
});

t.test('answer-metrics', async (t) => {
  // The hand-kept request metrics expose exactly what prom-client's own Counter and Histogram would.
  const { AggregatorRegistry, Counter, Histogram, Registry } = await import('prom-client');
  const { AnswerMetrics } = await import('../../src/api/metrics/answers.js');
  const bounds = [0.001, 0.01, 0.1, 1];
  const answers: [string, string, string, number, number][] = [
    ['export_v2', '/v2/hrs/:hrs_id/status', 'GET', 200, 0.0004],
    ['export_v2', '/v2/hrs/:hrs_id/status', 'GET', 200, 0.001],
    ['export_v2', '/v2/hrs/:hrs_id/status', 'GET', 404, 0.05],
    ['export_v2', 'unmatched', 'GET', 404, 2],
    ['import_v2', '/import/v2/signal/availability/', 'POST', 204, 0.0123],
    ['export_v2', '/v2/hrs/:hrs_id/status', 'HEAD', 200, 0.1],
  ];
  const made = (hand: boolean) => {
    const registry = new Registry();
    if (hand) {
      const metrics = new AnswerMetrics(registry, bounds);
      for (const a of answers) metrics.add(...a);
      return registry;
    }
    const counter = new Counter({ name: 'hrs_http_requests_total', help: 'HTTP requests answered, by API family, route pattern (unmatched: no route took it), method and status.', labelNames: ['family', 'route', 'method', 'status'], registers: [registry] });
    const histogram = new Histogram({ name: 'hrs_http_request_duration_seconds', help: 'Seconds from receipt to the answer written, by API family, route pattern and method.', labelNames: ['family', 'route', 'method'], buckets: bounds, registers: [registry] });
    for (const [family, route, method, status, seconds] of answers) {
      counter.inc({ family, route, method, status: String(status) });
      histogram.observe({ family, route, method }, seconds);
    }
    return registry;
  };
  const sorted = (text: string) => text.split('\n').sort().join('\n');
  const own = await made(false).metrics();
  t.equal(sorted(await made(true).metrics()), sorted(own), 'the exposition text, line for line');
  t.match(own, /hrs_http_request_duration_seconds_bucket\{le="0.001",family="export_v2",route="\/v2\/hrs\/:hrs_id\/status",method="GET"\} 2/, 'a bound counts the answers at it');
  const added = async (hand: boolean) => sorted(await AggregatorRegistry.aggregate([await made(hand).getMetricsAsJSON(), await made(hand).getMetricsAsJSON()]).metrics());
  t.equal(await added(true), await added(false), 'two processes added up as prom-client adds its own');
  t.match(await added(true), /hrs_http_requests_total\{family="export_v2",route="\/v2\/hrs\/:hrs_id\/status",method="GET",status="200"\} 4/);

  const { PairCounter } = await import('../../src/api/metrics/answers.js');
  const pairs: [string, string, number][] = [['availability', 'accepted', 1], ['availability', 'dry_run', 0], ['usage', 'rejected', 3], ['availability', 'accepted', 49]];
  const pairText = async (hand: boolean) => {
    const registry = new Registry();
    const options = { name: 'hrs_import_v2_transmissions_total', help: 'Import v2 transmissions.', labelNames: ['category', 'outcome'] as const };
    if (hand) {
      const counter = new PairCounter(registry, options);
      for (const [category, outcome, n] of pairs) counter.add(category, outcome, n);
    } else {
      const counter = new Counter({ ...options, labelNames: [...options.labelNames], registers: [registry] });
      for (const [category, outcome, n] of pairs) counter.inc({ category, outcome }, n);
    }
    return sorted(await registry.metrics());
  };
  t.equal(await pairText(true), await pairText(false), 'a pair counter exposes what prom-client\'s Counter does, zeros included');
  t.match(await pairText(true), /hrs_import_v2_transmissions_total\{category="availability",outcome="accepted"\} 50/);
});

t.test('kept-last values', async (t) => {
  t.test('an HTTP-date asked for in any order is its second\'s (the last one written is kept)', async (t) => {
    // Repeats, neighbours and returns to an earlier second, as answers in a row ask for them.
    const seconds = [0, 0, 1, 0, 1_700_000_000, 1_700_000_000, 1_700_000_001, 1_700_000_000, 253_402_300_799, Number.NaN, 0];
    t.same(
      seconds.map((s) => httpDate(s)),
      seconds.map((s) => new Date(s * 1000).toUTCString()),
    );
  });

  t.test('a sync token asked for in any order names its position (the last one made is kept)', async (t) => {
    const positions = [0, 0, 7, 0, 123_456_789, 123_456_789, 123_456_790, 7];
    t.same(positions.map((p) => positionOf(syncToken(p))), positions);
    t.same(positions.map((p) => syncToken(p)), positions.map((p) => Buffer.from(`hrs-sync:1:${p}`).toString('base64url')));
  });
});
