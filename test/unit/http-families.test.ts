/**
 * The HTTP core on its own, with families it has never heard of: authentication, guards, observers,
 * error styles and policies are values handed to it with the routes, so a new API family is a value,
 * not a change to src/http/.
 */
import t from 'tap';
import { bearerToken } from '../../src/http/auth.js';
import { DRF_ERRORS, HttpError, PROBLEM_ERRORS, json, unauthorized, type Reply } from '../../src/http/errors.js';
import type { Family } from '../../src/http/family.js';
import { HttpServer } from '../../src/http/server.js';
import { createLogger } from '../../src/config/log.js';
import { textQuery } from '../../src/http/query.js';

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
