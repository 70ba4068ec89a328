import t from 'tap';
import { connect as netConnect } from 'node:net';
import { json } from '../../src/http/errors.js';
import { parseJson } from '../../src/http/request.js';
import { baseFixture, TOKENS } from '../helpers/fixtures.js';
import { ADMIN_TOKEN, get, startTestPlatform } from '../helpers/platform.js';
import { rawRequest } from '../helpers/raw-http.js';

const MAX = 2048;

/** The platform with two body-reading routes that echo what the wrapper hands them. */
async function platform(test: Parameters<typeof startTestPlatform>[0]) {
  let handled = 0;
  const p = await startTestPlatform(test, {
    env: { MAX_BODY_BYTES: String(MAX) },
    fixture: baseFixture(),
    routes: (server, { families }) => {
      server.route({
        method: 'POST',
        path: '/import/v2/echo/',
        family: families.import_v2,
        body: true,
        handler: (req) => {
          handled++;
          return json(200, { received: parseJson(req) });
        },
      });
      server.route({
        method: 'POST',
        path: '/v2/echo',
        family: families.export_v2,
        body: true,
        handler: (req) => json(200, { received: parseJson(req) }),
      });
      server.route({
        method: 'GET',
        path: '/v2/slow',
        family: families.export_v2, public: true,
        handler: async () => {
          await new Promise((resolve) => setTimeout(resolve, 400));
          return json(200, { slow: true });
        },
      });
      server.route({
        method: 'GET',
        path: '/v2/split-header',
        family: families.export_v2, public: true,
        handler: () => ({ status: 200, headers: { 'X-Note': 'a\r\nSet-Cookie: evil=1' }, body: 'never sent' }),
      });
      server.route({
        method: 'GET',
        path: '/v2/boom',
        family: families.export_v2, public: true,
        handler: () => {
          throw new Error('kaboom');
        },
      });
    },
  });
  return { ...p, handled: () => handled };
}

const post = (url: string, body: string | Uint8Array, token: string, type = 'application/json') =>
  fetch(url, { method: 'POST', body, headers: { Authorization: `Bearer ${token}`, 'Content-Type': type } });

t.test('routing: 404, trailing-slash hints, 405 with Allow, OPTIONS, HEAD', async (t) => {
  const p = await platform(t);
  let res = await get(`${p.url}/no/such/path`);
  t.equal(res.status, 404);
  t.equal(res.headers.get('content-type'), 'application/problem+json; charset=utf-8');
  t.match(await res.json(), { type: 'about:blank', title: 'Not Found', status: 404, detail: 'Not found.' });

  res = await get(`${p.url}/import/v2/nothing-here/`);
  t.same(await res.json(), { detail: 'Not found.' }, 'import paths answer in the import format');

  res = await get(`${p.url}/import/v2/active-stations`, TOKENS.import_v2);
  t.equal(res.status, 404, 'never a redirect');
  t.same(await res.json(), { detail: 'Not found. The trailing slash is required: /import/v2/active-stations/' });

  res = await get(`${p.url}/v2/fuel-type/`, TOKENS.export_v2);
  t.equal(res.status, 404);
  t.match(await res.json(), { detail: 'Not found. This path takes no trailing slash: /v2/fuel-type' });

  res = await fetch(`${p.url}/v2/fuel-type`, { method: 'DELETE' });
  t.equal(res.status, 405);
  t.equal(res.headers.get('allow'), 'GET, HEAD, OPTIONS');
  t.match(await res.json(), { status: 405, detail: 'Method "DELETE" not allowed.' });

  res = await fetch(`${p.url}/import/v2/echo/`, { method: 'GET' });
  t.equal(res.status, 405);
  t.equal(res.headers.get('allow'), 'POST, OPTIONS');
  t.same(await res.json(), { detail: 'Method "GET" not allowed.' });

  res = await fetch(`${p.url}/v2/fuel-type`, { method: 'OPTIONS' });
  t.equal(res.status, 204);
  t.equal(res.headers.get('allow'), 'GET, HEAD, OPTIONS');
  t.equal(res.headers.get('content-length'), null, 'a 204 carries no Content-Length');

  res = await get(`${p.url}/v2/fuel-type`, TOKENS.export_v2, { method: 'HEAD' });
  const full = await get(`${p.url}/v2/fuel-type`, TOKENS.export_v2);
  t.equal(res.status, 200);
  t.equal(res.headers.get('content-length'), full.headers.get('content-length'), 'HEAD reports the GET length');
  t.equal((await res.arrayBuffer()).byteLength, 0, 'HEAD has no body');
});

t.test('a NUL or lone surrogate in a path id is a 404 and in a query parameter a 400 naming it, never a 500', async (t) => {
  const p = await platform(t);
  for (const path of ['/v2/hrs/BERLA%00', '/v2/hrs/BERLA%00/events', '/v2/hrs/BERLA%00/photo', '/v2/hrs/%ED%A0%80', '/v2/hrs/B%zz']) {
    const res = await get(`${p.url}${path}`, TOKENS.export_v2);
    t.equal(res.status, 404, path);
    t.match(await res.json(), { status: 404, title: 'Not Found' }, `${path}: in the family's format`);
  }
  for (const path of ['/admin/v1/tokens?originator=mon-1%00', '/admin/v1/call-logs?originator=mon-1%00', '/admin/v1/tokens?a%00=1']) {
    const res = await get(`${p.url}${path}`, ADMIN_TOKEN);
    t.equal(res.status, 400, path);
    const body = (await res.json()) as { detail: string };
    t.match(body.detail, path.includes('a%00') ? /"a\\u0000"/ : /"originator"/, `${path}: names the parameter`);
  }
  const res = await get(`${p.url}/v2/hrs?limit=1%00`, TOKENS.export_v2);
  t.equal(res.status, 400);
  t.match(await res.json(), { status: 400, detail: /"limit"/ });
  t.notOk(p.logs.lines.some((l) => l.level === 50), 'nothing logged as an error');
});

t.test('TRACE: 405 with Allow where the path exists, 404 where it does not', async (t) => {
  const p = await platform(t);
  let res = await rawRequest(p.url, 'TRACE', '/v2/fuel-type');
  t.equal(res.status, 405);
  t.equal(res.headers.allow, 'GET, HEAD, OPTIONS');
  t.match(JSON.parse(res.body), { status: 405, detail: 'Method "TRACE" not allowed.' });
  res = await rawRequest(p.url, 'TRACE', '/import/v2/echo/');
  t.equal(res.status, 405);
  t.equal(res.headers.allow, 'POST, OPTIONS');
  t.same(JSON.parse(res.body), { detail: 'Method "TRACE" not allowed.' });
  res = await rawRequest(p.url, 'TRACE', '/v2/no-such-thing');
  t.equal(res.status, 404);
});

t.test('methods: CONNECT, methods no route knows and a lower-case method are 501s in the family format', async (t) => {
  const p = await platform(t);
  for (const method of ['CONNECT', 'PROPFIND', 'BREW', 'get']) {
    const res = await rawRequest(p.url, method, '/v2/fuel-type');
    t.equal(res.status, 501, method);
    t.match(JSON.parse(res.body), { status: 501, detail: 'Unsupported HTTP method.' });
  }
  t.equal((await get(`${p.url}/healthz`)).status, 200, 'and the server goes on');
});

t.test('bodies: JSON in, parse errors in the family format, 413 past the cap, 415', async (t) => {
  const p = await platform(t);
  let res = await post(`${p.url}/import/v2/echo/`, JSON.stringify([{ hrs: 'BERLA' }]), TOKENS.import_v2);
  t.equal(res.status, 200);
  t.same(await res.json(), { received: [{ hrs: 'BERLA' }] });

  res = await post(`${p.url}/import/v2/echo/`, '[{"hrs": ', TOKENS.import_v2);
  t.equal(res.status, 400);
  t.match(await res.json(), { detail: /^JSON parse error - / });

  res = await post(`${p.url}/v2/echo`, '{oops', TOKENS.export_v2);
  t.equal(res.status, 400);
  t.equal(res.headers.get('content-type'), 'application/problem+json; charset=utf-8');
  t.match(await res.json(), { status: 400, code: 'parse_error', detail: /^JSON parse error - / });

  res = await post(`${p.url}/import/v2/echo/`, '', TOKENS.import_v2);
  t.same(await res.json(), { detail: 'JSON parse error - the request body is empty.' });

  res = await post(`${p.url}/import/v2/echo/`, '[]', TOKENS.import_v2, 'text/plain');
  t.equal(res.status, 415);
  t.same(await res.json(), { detail: 'Unsupported media type "text/plain" in request.' });

  res = await post(`${p.url}/import/v2/echo/`, `"${'x'.repeat(MAX - 2)}"`, TOKENS.import_v2);
  t.equal(res.status, 200, `a body of exactly ${MAX} bytes is read`);

  const before = p.handled();
  res = await post(`${p.url}/import/v2/echo/`, `"${'x'.repeat(MAX)}"`, TOKENS.import_v2);
  t.equal(res.status, 413, 'a declared length over the cap is refused');
  t.same(await res.json(), { detail: `Request body exceeds the limit of ${MAX} bytes.` });

  // A chunked body declares no length: the cap applies while reading.
  const stream = new ReadableStream({
    start(controller) {
      for (let i = 0; i < 8; i++) controller.enqueue(new TextEncoder().encode('x'.repeat(1000)));
      controller.close();
    },
  });
  res = await fetch(`${p.url}/import/v2/echo/`, {
    method: 'POST',
    body: stream,
    headers: { Authorization: `Bearer ${TOKENS.import_v2}`, 'Content-Type': 'application/json' },
    duplex: 'half',
  } as RequestInit);
  t.equal(res.status, 413, 'a chunked body that outgrows the cap is refused');
  t.equal(p.handled(), before, 'no handler ran for an oversized body');
});

t.test('unauthenticated requests are refused before anything is processed', async (t) => {
  const p = await platform(t);
  const res = await fetch(`${p.url}/import/v2/echo/`, { method: 'POST', body: '[1]', headers: { 'Content-Type': 'application/json' } });
  t.equal(res.status, 401);
  t.equal(res.headers.get('www-authenticate'), 'Bearer');
  t.same(await res.json(), { detail: 'Authentication credentials were not provided.' });
  t.equal(p.handled(), 0);
});

t.test('an unexpected error is a 500 in the family format, logged, and the server goes on', async (t) => {
  const p = await platform(t);
  const res = await get(`${p.url}/v2/boom`);
  t.equal(res.status, 500);
  t.match(await res.json(), { status: 500, detail: 'Unexpected platform error; please report it.' });
  t.ok(p.logs.lines.some((l) => l.msg === 'request failed' && (l.err as { message: string }).message === 'kaboom'));
  t.equal((await get(`${p.url}/healthz`)).status, 200);
});

t.test('a response header with a line break is never written: 500 instead, logged', async (t) => {
  const p = await platform(t);
  const res = await get(`${p.url}/v2/split-header`);
  t.equal(res.status, 500);
  t.equal(res.headers.get('set-cookie'), null);
  t.equal(res.headers.get('x-note'), null);
  t.equal(res.headers.get('link'), '<https://creativecommons.org/licenses/by/4.0/>; rel="license"', 'the family policy still applies');
  t.match(await res.json(), { status: 500 });
  t.ok(p.logs.lines.some((l) => l.msg === 'response not sent as built'));
});

t.test('a client that aborts mid-body does not crash the server', async (t) => {
  const p = await platform(t);
  for (let i = 0; i < 20; i++) {
    await new Promise<void>((resolve) => {
      const socket = netConnect(p.port, '127.0.0.1', () => {
        socket.write(
          'POST /import/v2/echo/ HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n' +
            `Authorization: Bearer ${TOKENS.import_v2}\r\nContent-Length: 1500\r\n\r\n[1,2,3`,
        );
        setTimeout(() => {
          socket.destroy();
          resolve();
        }, 5 + (i % 4) * 10);
      });
    });
  }
  await new Promise((resolve) => setTimeout(resolve, 100));
  const res = await post(`${p.url}/import/v2/echo/`, '[1]', TOKENS.import_v2);
  t.equal(res.status, 200, 'still serving');
  t.ok(p.logs.lines.some((l) => l.aborted === true), 'the aborted requests are logged as such');
});

t.test('one log line per request, with the principal and never a token', async (t) => {
  const p = await platform(t);
  await get(`${p.url}/import/v2/active-stations/`, TOKENS.import_v2);
  await get(`${p.url}/v2/fuel-type`, TOKENS.export_v2);
  await get(`${p.url}/v2/fuel-type`, 'wrong-token-value-1234');
  const requests = p.logs.lines.filter((l) => l.msg === 'request');
  t.equal(requests.length, 3);
  t.match(requests[0], { method: 'GET', path: '/import/v2/active-stations/', status: 200, originator: 'mon-1', duration_ms: Number });
  t.match(requests[1], { path: '/v2/fuel-type', status: 200, user: 'alice' });
  t.match(requests[2], { path: '/v2/fuel-type', status: 401 });
  const all = p.logs.raw.join('\n');
  for (const secret of [TOKENS.import_v2, TOKENS.export_v2, 'wrong-token-value-1234', 'Bearer']) {
    t.notOk(all.includes(secret), `the logs never hold "${secret.slice(0, 12)}..."`);
  }
});

t.test('health and readiness', async (t) => {
  const p = await startTestPlatform(t, { env: { SHUTDOWN_DELAY: '2' } });
  let res = await get(`${p.url}/healthz`);
  t.same(await res.json(), { status: 'ok' });
  res = await get(`${p.url}/readyz`);
  t.same(await res.json(), { status: 'ready', postgres: 'ok', redis: 'ok' });
  // Shutdown begins: during SHUTDOWN_DELAY the listen socket is still open, readiness says 503.
  const stopped = p.stop('test: shutting down');
  res = await get(`${p.url}/readyz`);
  t.equal(res.status, 503);
  t.equal(res.headers.get('retry-after'), '5');
  t.same(await res.json(), { status: 'shutting-down' });
  t.equal((await get(`${p.url}/healthz`)).status, 200, 'still alive while draining');
  await stopped;
});

t.test('shutdown lets in-flight requests finish, then stops listening', async (t) => {
  const p = await platform(t);
  const inFlight = get(`${p.url}/v2/slow`);
  await new Promise((resolve) => setTimeout(resolve, 100));
  const stopped = p.stop('test');
  const res = await inFlight;
  t.equal(res.status, 200, 'the request that was being handled got its answer');
  t.same(await res.json(), { slow: true });
  await stopped;
  const refused = await new Promise((resolve) => {
    const socket = netConnect(p.port, '127.0.0.1');
    socket.on('connect', () => {
      socket.destroy();
      resolve(false);
    });
    socket.on('error', () => resolve(true));
  });
  t.ok(refused, 'new connections are refused');
});
