/**
 * Generation v1 is deprecated (spec, Versioning): every response of export v1 and import v1 —
 * successes, errors, refusals before authentication, unknown paths, preflights, documents — carries
 * `Deprecation` (RFC 9745, a structured-field date) and a `Link` to the v1.1 reference; v1.1 and v2
 * responses do not; the OpenAPI documents mark every v1 operation deprecated and document both headers.
 */
import t from 'tap';
import { legacyFixture, TOKENS } from '../helpers/fixtures.js';
import { get, startTestPlatform } from '../helpers/platform.js';

/** 17 June 2026, 00:00 UTC: v1.1 published (spec, Versioning), so v1 deprecated. */
const DEPRECATION = `@${Date.UTC(2026, 5, 17) / 1000}`;
const ago = (seconds: number) => new Date(Date.now() - seconds * 1000).toISOString();

t.test('every export v1 and import v1 response says v1 is deprecated and links the v1.1 reference', async (t) => {
  const f = legacyFixture();
  f.assignments.push({ originator: 'mon-1', hrs_id: 'BERLA', signal_type: 'v1', state: 'live' });
  const p = await startTestPlatform(t, { fixture: f, env: { EXPORT_V1_RATE_LIMIT: '40', IMPORT_V1_RATE_LIMIT: '40' } });
  const post = (path: string, body: string, token: string = TOKENS.import_v1, type = 'application/json') =>
    fetch(`${p.url}${path}`, { method: 'POST', body, headers: { Authorization: `Bearer ${token}`, 'Content-Type': type } });
  const signal = JSON.stringify([{ hrs: 'BERLA', datetime: ago(5), dispensers: [{ fuel_type: '700car', available: true }], maintenance: false, limitedly_available: false }]);

  const deprecated: [string, Promise<Response>, number][] = [
    ['export v1 status', get(`${p.url}/v1/hrs/status`, TOKENS.export_v1), 200],
    ['export v1 station', get(`${p.url}/v1/hrs/BERLA`, TOKENS.export_v1), 200],
    ['export v1 fuel types, HEAD', get(`${p.url}/v1/fuel-type`, TOKENS.export_v1, { method: 'HEAD' }), 200],
    ['export v1 unknown station', get(`${p.url}/v1/hrs/NOPEE`, TOKENS.export_v1), 404],
    ['export v1 bad filter', get(`${p.url}/v1/hrs/status?fuelling_option=700ld`, TOKENS.export_v1), 400],
    ['export v1 no token', get(`${p.url}/v1/hrs/status`), 401],
    ['export v1 another generation\'s token', get(`${p.url}/v1/hrs/status`, TOKENS.export_v2), 401],
    ['export v1 unknown path', get(`${p.url}/v1/nothing-here`, TOKENS.export_v1), 404],
    ['export v1 wrong method', fetch(`${p.url}/v1/hrs/status`, { method: 'DELETE' }), 405],
    ['export v1 OPTIONS', fetch(`${p.url}/v1/hrs/status`, { method: 'OPTIONS' }), 204],
    ['export v1 document', get(`${p.url}/v1/doc/schema`), 200],
    ['import v1 signal', post('/import/v1/hrs-availability', signal), 204],
    ['import v1 400', post('/import/v1/hrs-availability', '{}'), 400],
    ['import v1 415', post('/import/v1/hrs-availability', signal, TOKENS.import_v1, 'text/plain'), 415],
    ['import v1 401', post('/import/v1/hrs-availability', signal, TOKENS.import_v2), 401],
    ['import v1 fuel types', get(`${p.url}/import/v1/fuel-type`, TOKENS.import_v1), 200],
    ['import v1 slashed path', post('/import/v1/hrs-availability/', signal), 404],
    ['import v1 document', get(`${p.url}/import/v1/doc/schema`), 200],
  ];
  for (const [what, pending, status] of deprecated) {
    const res = await pending;
    await res.arrayBuffer();
    t.equal(res.status, status, `${what}: ${status}`);
    t.equal(res.headers.get('deprecation'), DEPRECATION, `${what}: Deprecation`);
    const successor = what.startsWith('export') ? '/v1.1/doc/' : '/import/v1.1/doc/';
    t.equal(res.headers.get('link'), `<${successor}>; rel="deprecation successor-version"; type="text/html"`, `${what}: Link to ${successor}`);
  }

  for (const [what, url, token] of [
    ['export v1.1', `${p.url}/v1.1/hrs/status`, TOKENS.export_v1],
    ['import v1.1', `${p.url}/import/v1.1/fuel-type`, TOKENS.import_v1],
    ['export v2', `${p.url}/v2/fuel-type`, TOKENS.export_v2],
  ] as const) {
    const res = await get(url, token);
    await res.arrayBuffer();
    t.equal(res.status, 200, what);
    t.equal(res.headers.get('deprecation'), null, `${what} is not deprecated`);
    t.notMatch(res.headers.get('link') ?? '', /deprecation/, `${what}: no deprecation link`);
  }

  // Over the rate limit too (the limits are 40 a minute here; v1 and v1.1 share it, so this comes last).
  let throttled: Response | undefined;
  for (let i = 0; i < 60 && throttled === undefined; i++) {
    const res = await get(`${p.url}/v1/fuel-type`, TOKENS.export_v1);
    await res.arrayBuffer();
    if (res.status === 429) throttled = res;
  }
  t.equal(throttled?.headers.get('deprecation'), DEPRECATION, 'export v1 429: Deprecation');
});

t.test('the OpenAPI documents: every v1 operation deprecated, both headers documented on every response', async (t) => {
  const p = await startTestPlatform(t, { fixture: legacyFixture() });
  for (const [family, path, successor] of [['export v1', '/v1/doc/schema', '/v1.1/doc/'], ['import v1', '/import/v1/doc/schema', '/import/v1.1/doc/']] as const) {
    const document = (await (await get(`${p.url}${path}`)).json()) as {
      info: { description: string };
      paths: Record<string, Record<string, { deprecated?: boolean; responses: Record<string, { headers?: Record<string, unknown>; $ref?: string }> }>>;
      components: { headers: Record<string, { schema: { const?: string } }>; responses: Record<string, { headers?: Record<string, unknown> }> };
    };
    const operations = Object.entries(document.paths).flatMap(([where, methods]) => Object.entries(methods).map(([method, op]) => [`${method} ${where}`, op] as const));
    t.ok(operations.length >= 2, `${family}: operations`);
    for (const [name, op] of operations) {
      t.equal(op.deprecated, true, `${family} ${name}: deprecated`);
      for (const [status, response] of Object.entries(op.responses)) {
        const headers = response.$ref ? document.components.responses[response.$ref.split('/').pop()!]!.headers : response.headers;
        t.ok(headers?.Deprecation && headers?.Link, `${family} ${name} ${status}: Deprecation and Link documented`);
      }
    }
    t.equal(document.components.headers.Deprecation!.schema.const, DEPRECATION, `${family}: the documented date`);
    t.match(document.components.headers.Link!.schema.const, successor, `${family}: the documented successor`);
    t.match(document.info.description, /deprecated/i, `${family}: the guide says so`);
  }
  const v11 = (await (await get(`${p.url}/v1.1/doc/schema`)).json()) as { paths: Record<string, Record<string, { deprecated?: boolean }>>; components: { headers: Record<string, unknown> } };
  t.notOk(Object.values(v11.paths).some((methods) => Object.values(methods).some((op) => op.deprecated)), 'export v1.1: nothing deprecated');
  t.notOk('Deprecation' in v11.components.headers, 'export v1.1: no Deprecation header');
});
