import t, { type Test } from 'tap';
import { Validator } from '@seriousme/openapi-schema-validator';
import type { z } from 'zod';
import { exportV2Document } from '../../src/api/export-v2/docs/document.js';
import { IMPORT_V2_DOCUMENT } from '../../src/api/import-v2/docs/document.js';
import { buildDocument, openApiPath, type DocContext, type DocDefinition, type Route } from '../../src/http/openapi.js';
import { buildDocuments, serviceVersion } from '../../src/api/docs/routes.js';
import { docSites } from '../helpers/docs.js';
import { problemSchema, stationStatusListSchema, stationStatusSchema } from '../../src/domain/export-v2/schemas.js';
import { detailSchema, nonFieldErrorsSchema, validationErrorListSchema } from '../../src/domain/import-v2/schemas.js';
import type { HttpServer } from '../../src/http/server.js';
import type { Families } from '../../src/platform.js';
import { baseFixture, berlaAssignments, TOKENS } from '../helpers/fixtures.js';
import { get, startTestPlatform, type TestPlatform } from '../helpers/platform.js';
import { freshnessPolicies } from '../../src/domain/categories/index.js';
import { materialize, rollUpHours } from '../../workers/history/jobs.js';
import { checkExamples, deref, documentAjv } from '../helpers/openapi.js';

type Json = Record<string, any>;

/** Every station signal type live for BERLA (so the status has all four sections), HAMBG usage only; BERLA has a photo. */
function fixture() {
  const f = baseFixture();
  f.assignments = berlaAssignments();
  (f.stations[0] as Record<string, unknown>).photo = 'examples/photos/berla.png';
  // Publishable in DATEX II (the AFIR profile requires both), so the table answers 200.
  (f.stations[0] as Record<string, unknown>).details = { city: 'Berlin', vehicle_types: ['M1'], lat: 52.3667, lon: 13.5033, cumulative_daily_hydrogen_capacity: 400 };
  return f;
}

const TOKEN = { import_v2: TOKENS.import_v2, export_v2: TOKENS.export_v2 } as const;

let server: HttpServer | undefined;
const p = await startTestPlatform(t, { fixture: fixture(), routes: (s) => (server = s) });
const DOC_SITES = docSites(server!);
const SITES = { import_v2: DOC_SITES.find((s) => s.family === 'import_v2')!, export_v2: DOC_SITES.find((s) => s.family === 'export_v2')! } as const;
const context: DocContext = { config: p.parts.config, reference: p.parts.reference, version: serviceVersion() };
const definitions = { import_v2: IMPORT_V2_DOCUMENT.define(context), export_v2: exportV2Document(context) } as const;

async function fetchDocument(family: keyof typeof SITES): Promise<Json> {
  const res = await fetch(`${p.url}${SITES[family].prefix}/schema`);
  if (res.status !== 200) throw new Error(`${SITES[family].prefix}/schema answered ${res.status}`);
  return (await res.json()) as Json;
}
const documents = { import_v2: await fetchDocument('import_v2'), export_v2: await fetchDocument('export_v2') };

const ajvs = { import_v2: documentAjv(documents.import_v2), export_v2: documentAjv(documents.export_v2) };

/** The zod schema of a component, by name, from the definition the document was built from. */
function zodOf(family: keyof typeof SITES, name: string): z.ZodType | undefined {
  const d: DocDefinition = definitions[family];
  return d.responseSchemas[name] ?? d.requestSchemas[name];
}

/**
 * A real response against its operation in the document: the status is the expected one and documented, every documented
 * header is there (Redis is up, so the rate-limit headers too), the media type is documented, and a
 * JSON body validates against the document's schema (Ajv) and against the zod schema behind it.
 * Returns the parsed body.
 */
async function conforms(
  t: Test,
  family: keyof typeof SITES,
  method: string,
  path: string,
  res: Response,
  expected: number,
  zodSchema?: z.ZodType,
): Promise<unknown> {
  t.equal(res.status, expected, `${method} ${path}: ${expected}`);
  const document = documents[family];
  const operation = document.paths[path]?.[method.toLowerCase()];
  t.ok(operation, `${method} ${path} is documented`);
  const status = String(res.status);
  const documented = operation?.responses?.[status];
  t.ok(documented, `${method} ${path}: ${status} is documented`);
  const bytes = Buffer.from(await res.arrayBuffer());
  if (!operation || !documented) return undefined;
  const response = deref(document, documented);
  for (const name of Object.keys(response.headers ?? {})) {
    t.ok(res.headers.has(name), `${method} ${path} ${status}: header ${name} is sent`);
  }
  if (!response.content) {
    t.equal(bytes.length, 0, `${method} ${path} ${status}: no body, as documented`);
    return undefined;
  }
  const media = (res.headers.get('content-type') ?? '').split(';')[0]!.trim();
  t.ok(media in response.content, `${method} ${path} ${status}: ${media} is a documented media type`);
  if (!media.endsWith('json')) return bytes;
  const body = JSON.parse(bytes.toString('utf8'));
  // The schema's place: the operation's own response, or the shared response it references.
  const where = typeof documented.$ref === 'string'
    ? [...documented.$ref.slice(2).split('/'), 'content', media, 'schema']
    : ['paths', path, method.toLowerCase(), 'responses', status, 'content', media, 'schema'];
  t.equal(ajvs[family].check(where, body), null, `${method} ${path} ${status}: the body validates against the document`);
  const schemaRef = response.content[media]?.schema?.$ref as string | undefined;
  const zodSchemaOf = zodSchema ?? (schemaRef ? zodOf(family, schemaRef.split('/').pop()!) : undefined);
  t.ok(zodSchemaOf, `${method} ${path} ${status}: a zod schema to check the body with`);
  if (zodSchemaOf) {
    const parsed = zodSchemaOf.safeParse(body);
    t.ok(parsed.success, `${method} ${path} ${status}: the body parses with the zod schema${parsed.success ? '' : `: ${parsed.error.message}`}`);
  }
  return body;
}

const now = () => new Date().toISOString();

function post(path: string, body: unknown, headers: Record<string, string> = {}): Promise<Response> {
  return fetch(`${p.url}${path}`, {
    method: 'POST',
    body: typeof body === 'string' ? body : JSON.stringify(body),
    headers: { Authorization: `Bearer ${TOKENS.import_v2}`, 'Content-Type': 'application/json', ...headers },
  });
}

t.test('both documents are valid OpenAPI 3.1, their schemas valid JSON Schema 2020-12', async (t) => {
  for (const family of ['import_v2', 'export_v2'] as const) {
    const document = documents[family];
    const validator = new Validator();
    const result = await validator.validate(structuredClone(document));
    t.same(result.errors, undefined, `${family}: no errors`);
    t.equal(result.valid, true, `${family}: valid`);
    t.equal(validator.version, '3.1', `${family}: validated as OpenAPI 3.1`);
    t.match(document.openapi, /^3\.1\.\d+$/);

    const { ajv } = ajvs[family];
    for (const [name, schema] of Object.entries(document.components.schemas as Record<string, object>)) {
      t.equal(ajv.validateSchema(schema), true, `${family}: schema ${name} is valid JSON Schema 2020-12`);
    }
    // The checks can fail: a document without info, a schema with a bad keyword value.
    const broken = structuredClone(document);
    delete broken.info;
    t.equal((await new Validator().validate(broken)).valid, false, `${family}: a document without info is refused`);
    t.equal(ajv.validateSchema({ type: 'strin' }), false, 'a bad schema is refused');
  }
  t.equal(documents.export_v2.info.license.identifier, 'CC-BY-4.0', 'export data licence');
});

t.test('each document has its family\'s bearer scheme, required by every operation', async (t) => {
  const expected = { import_v2: 'importV2Token', export_v2: 'exportV2Token' } as const;
  for (const family of ['import_v2', 'export_v2'] as const) {
    const document = documents[family];
    const schemes = document.components.securitySchemes as Json;
    t.same(Object.keys(schemes), [expected[family]], `${family}: one scheme`);
    t.match(schemes[expected[family]], { type: 'http', scheme: 'bearer' });
    t.same(document.security, [{ [expected[family]]: [] }], `${family}: required everywhere`);
    for (const [path, item] of Object.entries(document.paths as Record<string, Json>)) {
      for (const [method, operation] of Object.entries(item)) {
        // The public map's operations take no credential (`security: []`): no 401.
        const open = Array.isArray(operation.security) && operation.security.length === 0;
        if (open) t.ok(path.startsWith('/map/v1/'), `${family}: ${method} ${path} is public only if it is the public map's`);
        else t.ok(operation.responses['401'], `${family}: ${method} ${path} documents its 401`);
        t.ok(operation.summary && operation.description, `${family}: ${method} ${path} has a summary and a description`);
        t.ok(operation.operationId, `${family}: ${method} ${path} has an operationId`);
      }
    }
  }
});

t.test('every route of a family the server has is in its document, and nothing else', async (t) => {
  t.ok(server, 'the server was handed to the routes callback');
  const routes = server!.routes();
  for (const family of ['import_v2', 'export_v2'] as const) {
    // The export v2 document describes the DATEX II publications too (same tokens and limits).
    const families: readonly string[] = family === 'export_v2' ? ['export_v2', 'datex2'] : [family];
    // And the public map's feed, detail, photo and stream (public, under /map/v1/stations and /map/v1/stream).
    const mapOperation = (r: { auth: string; path: string }) => family === 'export_v2' && r.auth === 'none' && (r.path.startsWith('/map/v1/stations') || r.path.startsWith('/map/v1/stream'));
    const served = routes
      .filter((r) => families.includes(r.auth) || mapOperation(r))
      .map((r) => `${r.method} ${openApiPath(r.path)}`)
      .sort();
    const documented = Object.entries(documents[family].paths as Record<string, Json>)
      .flatMap(([path, item]) => Object.keys(item).map((method) => `${method.toUpperCase()} ${path}`))
      .sort();
    t.ok(served.length >= (family === 'import_v2' ? 5 : 4), `${family}: the routes are there to compare (${served.length})`);
    t.same(documented, served, `${family}: documented operations = registered routes`);
  }
  // The document routes themselves need no token.
  for (const site of DOC_SITES) {
    for (const path of [`${site.prefix}/schema`, `${site.prefix}/`, `${site.prefix}/assets/:name`]) {
      t.ok(routes.some((r) => r.method === 'GET' && r.path === path && r.auth === 'none'), `GET ${path} is registered without auth`);
    }
  }
});

t.test('a route without a description stops the document from being built', async (t) => {
  const routes: Route[] = [...server!.routes()];
  for (const [family, extra] of [
    ['import_v2', { method: 'POST', path: '/import/v2/signal/temperature/', auth: 'import_v2' }],
    ['export_v2', { method: 'GET', path: '/v2/hrs/:hrs_id/weather', auth: 'export_v2' }],
  ] as const) {
    t.throws(() => buildDocument(definitions[family], [...routes, extra]), new RegExp(`no description of ${extra.method} ${extra.path.replace(/\//g, '\\/')}`));
  }
  // And so the start: docRoutes builds the documents through buildDocuments, from the routes registered before it.
  let captured: HttpServer | undefined;
  let families: Families | undefined;
  const q = await startTestPlatform(t, { routes: (s, parts) => ((captured = s), (families = parts.families)) });
  t.ok(buildDocuments(captured!, q.parts).get('export_v2'), 'the platform\'s own routes are all described');
  captured!.route({ method: 'GET', path: '/v2/undescribed', family: families!.export_v2, handler: () => ({ status: 204 }) });
  t.throws(() => buildDocuments(captured!, q.parts), /no description of GET \/v2\/undescribed/);
});

t.test('every example in the documents validates against its schema', async (t) => {
  for (const family of ['import_v2', 'export_v2'] as const) {
    const document = documents[family];
    const count = checkExamples(t, document, ajvs[family].check, `${family}: `);
    t.ok(count > (family === 'import_v2' ? 20 : 15), `${family}: ${count} examples checked`);
  }
  // The check can fail: a wrong example is refused.
  t.not(ajvs.export_v2.check(['components', 'schemas', 'StationStatus'], { hrs_id: 'BERLA' }), null, 'an incomplete status is refused');
});

t.test('import v2: the documented request examples are accepted by the service, responses as documented', async (t) => {
  const document = documents.import_v2;
  for (const path of Object.keys(document.paths).filter((path) => path.startsWith('/import/v2/signal/'))) {
    const examples = document.paths[path].post.requestBody.content['application/json'].examples as Record<string, { value: Json[] }>;
    t.ok(Object.keys(examples).length >= 2, `${path}: examples`);
    for (const [name, example] of Object.entries(examples)) {
      // The examples name the test fixture's layout (BERLA: N1, N2, D1, S1, P700, P350); only the time is today's.
      const body = example.value.map((transmission) => ({ ...transmission, datetime: now() }));
      await t.test(`${path} example ${name} accepted`, async (t) => void (await conforms(t, 'import_v2', 'POST', path, await post(path, body), 204)));
    }
  }

  const active = (await conforms(t, 'import_v2', 'GET', '/import/v2/active-stations/', await get(`${p.url}/import/v2/active-stations/`, TOKENS.import_v2), 200)) as Json;
  t.same(active.stations.availability, { live: ['BERLA'], testing: [] });

  const path = '/import/v2/signal/availability/';
  const aligned = (await conforms(
    t,
    'import_v2',
    'POST',
    path,
    await post(path, [
      { hrs: 'BERLA', datetime: now(), nozzles: [{ id: 'N1', available: true }], station: { maintenance: false, limitedly_available: false } },
      { hrs: 'HAMBG', datetime: '2020-01-01T00:00:00Z', nozzles: [{ id: 'N9', dispenser_id: 'D1', available: null }] },
    ]),
    400,
    validationErrorListSchema,
  )) as Json[];
  t.equal(aligned.length, 2, 'the 400 body is aligned with the request');
  t.same(aligned[0], {}, 'the valid transmission: {}');
  t.match(aligned[1], { datetime: [String], nozzles: [{ non_field_errors: [String], available: ['This field may not be null.'] }], station: ['This field is required.'] });
  t.same(await conforms(t, 'import_v2', 'POST', path, await post(path, { hrs: 'BERLA' }), 400, nonFieldErrorsSchema), {
    non_field_errors: ['Expected a list of items but got type "dict".'],
  });
  t.match(await conforms(t, 'import_v2', 'POST', path, await post(path, '[{'), 400, detailSchema), { detail: /^JSON parse error - / });
  t.match(await conforms(t, 'import_v2', 'POST', path, await post(path, '[]', { 'Content-Type': 'text/plain' }), 415, detailSchema), { detail: /Unsupported media type/ });
  t.same(await conforms(t, 'import_v2', 'POST', path, await post(path, [], { Authorization: '' }), 401, detailSchema), {
    detail: 'Authentication credentials were not provided.',
  });
  t.same(await conforms(t, 'import_v2', 'GET', '/import/v2/active-stations/', await get(`${p.url}/import/v2/active-stations/`, TOKENS.export_v2), 401, detailSchema), {
    detail: 'This is a personal export v2 token; import v2 accepts an import v2 token only.',
  });
  const big = `[${' '.repeat(p.parts.config.maxBodyBytes)}]`;
  t.match(await conforms(t, 'import_v2', 'POST', path, await post(path, big), 413, detailSchema), { detail: /exceeds the limit/ });

  // The checks can fail: the zod schemas refuse what the service never sends.
  t.notOk(validationErrorListSchema.safeParse([{ datetime: 'not a list' }]).success);
  t.notOk(detailSchema.safeParse({ detail: 'x', code: 'extra' }).success);
});

t.test('export v2: every documented operation answers as documented, errors too', async (t) => {
  const document = documents.export_v2;
  // The status has all four sections only after live signals: the import examples above sent them.
  const all = (await conforms(t, 'export_v2', 'GET', '/v2/hrs/status', await get(`${p.url}/v2/hrs/status`, TOKENS.export_v2), 200, stationStatusListSchema)) as Json;
  const berla = all.stations.find((s: Json) => s.hrs_id === 'BERLA');
  for (const section of ['availability', 'usage', 'hydrogen_storage', 'pricing']) t.not(berla[section], null, `BERLA has its ${section} section to check`);
  t.same(all.stations.find((s: Json) => s.hrs_id === 'HAMBG'), { hrs_id: 'HAMBG', availability: null, usage: null, hydrogen_storage: null, pricing: null });
  // The check can fail: a field the document does not have.
  t.notOk(stationStatusSchema.safeParse({ ...berla, freshness: 'fresh' }).success, 'an undocumented field is refused');
  t.not(ajvs.export_v2.check(['components', 'schemas', 'StationStatus'], { ...berla, freshness: 'fresh' }), null, 'by the document too');

  // The history extension answers its documented 503 until an hour of history is published, then 200.
  for (const path of ['/v2/hrs/{hrs_id}/reliability', '/v2/hrs/{hrs_id}/history']) {
    const unpublished = await get(`${p.url}${path.replace('{hrs_id}', 'BERLA')}`, TOKENS.export_v2);
    t.match(await conforms(t, 'export_v2', 'GET', path, unpublished, 503, problemSchema), { status: 503, code: 'service_unavailable' });
  }
  const historyJobs = {
    sql: p.sql,
    stations: () => p.parts.registry,
    policies: freshnessPolicies({ staleAfterMs: 5 * 60_000, unknownAfterMs: 30 * 60_000, pricingStaleAfterMs: 25 * 3_600_000 }),
    lagMs: 60_000,
    retentionDays: 400,
  };
  await materialize(historyJobs);
  await rollUpHours(historyJobs);

  for (const [path, item] of Object.entries(document.paths as Record<string, Json>)) {
    for (const method of Object.keys(item)) {
      // The events' delta (extension) needs a point to start from: the list's sync_token.
      const from = path === '/v2/hrs/events' ? `?since=${((await (await get(`${p.url}/v2/hrs?limit=1`, TOKENS.export_v2)).json()) as Json).sync_token}` : '';
      const url = `${p.url}${path.replace('{hrs_id}', 'BERLA')}${from}`;
      // The public map's operations take no credential (the map has tests of its own).
      const open = path.startsWith('/map/v1/');
      const token = open ? undefined : TOKENS.export_v2;
      // The status streams are WebSockets: a plain GET is told to upgrade (the streams have tests of their own).
      const expected = path === '/v2/hrs/status/stream' || path === '/map/v1/stream' ? 426 : 200;
      const body = await conforms(t, 'export_v2', method.toUpperCase(), path, await get(url, token), expected, expected === 426 ? problemSchema : undefined);
      if (path === '/v2/fuel-type') t.same(body, item.get.responses['200'].content['application/json'].examples.all.value, 'the example is the real list');
      if (path.includes('{hrs_id}')) {
        const missing = await get(`${p.url}${path.replace('{hrs_id}', 'OSLO1')}`, token);
        t.match(await conforms(t, 'export_v2', 'GET', path, missing, 404, problemSchema), { status: 404, code: 'not_found' });
      }
      if (!open) {
        const unauthorized = await get(url, TOKENS.export_v1);
        t.match(await conforms(t, 'export_v2', 'GET', path, unauthorized, 401, problemSchema), { status: 401, code: 'not_authenticated' });
      }
      // Conditional requests where documented: the ETag back as If-None-Match, else Last-Modified back as If-Modified-Since, gives 304.
      if (item.get.responses['304']) {
        const first = await get(url, token);
        await first.arrayBuffer();
        const lastModified = first.headers.get('last-modified');
        const etag = first.headers.get('etag');
        t.ok(lastModified, `${path}: Last-Modified`);
        const again = await get(url, token, { headers: etag ? { 'If-None-Match': etag } : { 'If-Modified-Since': lastModified! } });
        await conforms(t, 'export_v2', 'GET', path, again, 304);
      }
    }
  }
});

t.test('export v2: pagination, a bad parameter, a station without photo', async (t) => {
  const first = (await conforms(t, 'export_v2', 'GET', '/v2/hrs', await get(`${p.url}/v2/hrs?limit=1`, TOKENS.export_v2), 200)) as Json;
  t.match(first, { count: 2, previous: null, results: [{ hrs_id: 'BERLA' }] });
  t.type(first.next, 'string', 'a next page');
  const second = (await conforms(t, 'export_v2', 'GET', '/v2/hrs', await get(first.next, TOKENS.export_v2), 200)) as Json;
  t.match(second, { count: 2, next: null, results: [{ hrs_id: 'HAMBG', dispensers: null, storages: null, products: null }] });
  t.type(second.previous, 'string');
  t.match(
    await conforms(t, 'export_v2', 'GET', '/v2/hrs', await get(`${p.url}/v2/hrs?limit=501`, TOKENS.export_v2), 400, problemSchema),
    { status: 400, code: 'invalid_parameter' },
  );
  t.match(
    await conforms(t, 'export_v2', 'GET', '/v2/hrs/{hrs_id}/photo', await get(`${p.url}/v2/hrs/HAMBG/photo`, TOKENS.export_v2), 404, problemSchema),
    { detail: 'Station "HAMBG" has no photo.' },
  );
  const berla = (await conforms(t, 'export_v2', 'GET', '/v2/hrs/{hrs_id}', await get(`${p.url}/v2/hrs/BERLA`, TOKENS.export_v2), 200)) as Json;
  t.match(berla, { city: 'Berlin', vehicle_types: ['M1'], photo_url: /\/v2\/hrs\/BERLA\/photo$/ }, 'the AFIR details at the top level');
  // The check can fail: a layout entry with a field the document does not have.
  const nozzle = berla.dispensers[0].nozzles[0];
  t.not(ajvs.export_v2.check(['components', 'schemas', 'Nozzle'], { ...nozzle, pressure: 700 }), null);
});

t.test('export v2 geo extension: filtered, near and GeoJSON answers and their 400s as documented', async (t) => {
  const geo = { headers: { Accept: 'application/geo+json' } };
  const near = (await conforms(t, 'export_v2', 'GET', '/v2/hrs', await get(`${p.url}/v2/hrs?near=52.5,13.4&radius_km=20`, TOKENS.export_v2), 200)) as Json;
  t.match(near, { count: 1, results: [{ hrs_id: 'BERLA', distance_km: Number }] });
  const features = (await conforms(t, 'export_v2', 'GET', '/v2/hrs', await get(`${p.url}/v2/hrs?bbox=13,52,14,53`, TOKENS.export_v2, geo), 200)) as Json;
  t.match(features, { type: 'FeatureCollection', count: 1, features: [{ id: 'BERLA', geometry: { coordinates: [13.5033, 52.3667] } }] });
  const status = (await conforms(t, 'export_v2', 'GET', '/v2/hrs/status', await get(`${p.url}/v2/hrs/status?near=52.5,13.4&radius_km=20`, TOKENS.export_v2, geo), 200)) as Json;
  t.match(status, { type: 'FeatureCollection', features: [{ id: 'BERLA', properties: { distance_km: Number } }] });
  t.equal(status.features.length, 1, 'HAMBG has no coordinates');
  for (const path of ['/v2/hrs', '/v2/hrs/status']) {
    const refused = await get(`${p.url}${path}?bbox=5.9,55.1,15.0,47.3`, TOKENS.export_v2);
    t.match(await conforms(t, 'export_v2', 'GET', path, refused, 400, problemSchema), { code: 'invalid_parameter', detail: /inverted box/ });
  }
  // The check can fail: a feature without its geometry is not what the document says.
  const { geometry: _, ...bare } = features.features[0];
  t.not(ajvs.export_v2.check(['components', 'schemas', 'StationFeature'], bare), null);
});

t.test('429: the documented limits, bodies and Retry-After', async (t) => {
  const q = await startTestPlatform(t, {
    fixture: fixture(),
    env: { IMPORT_V2_RATE_LIMIT: '1', EXPORT_V2_RATE_LIMIT_MINUTE: '1' },
  });
  const importDoc = (await (await fetch(`${q.url}/import/v2/doc/schema`)).json()) as Json;
  t.match(importDoc.info.description, /1 requests per minute per signal originator/, 'the configured limit is the documented one');
  await (await get(`${q.url}/import/v2/active-stations/`, TOKENS.import_v2)).arrayBuffer();
  const throttled = await get(`${q.url}/import/v2/active-stations/`, TOKENS.import_v2);
  t.match(await conforms(t, 'import_v2', 'GET', '/import/v2/active-stations/', throttled, 429, detailSchema), { detail: /^Request was throttled/ });
  await (await get(`${q.url}/v2/fuel-type`, TOKENS.export_v2)).arrayBuffer();
  const limited = await get(`${q.url}/v2/fuel-type`, TOKENS.export_v2);
  t.match(await conforms(t, 'export_v2', 'GET', '/v2/fuel-type', limited, 429, problemSchema), { status: 429, code: 'throttled' });
});

t.test('the reference pages: HTML with same-origin assets only, all served, cached by content', async (t) => {
  for (const site of DOC_SITES) {
    const pageUrl = `${p.url}${site.prefix}/`;
    const res = await fetch(pageUrl);
    t.equal(res.status, 200, `${site.prefix}/`);
    t.equal(res.headers.get('content-type'), 'text/html; charset=utf-8');
    t.equal(res.headers.get('cache-control'), 'no-cache');
    t.match(res.headers.get('content-security-policy'), /script-src 'self';/, 'scripts from this origin only');
    const html = await res.text();
    t.match(html, /<div id="swagger-ui">/);
    t.match(html, new RegExp(`<title>${site.title}</title>`));
    t.notMatch(html, /\bhttps?:\/\//, 'no absolute URL: nothing from another origin (no CDN)');
    const references = [...html.matchAll(/\b(?:src|href)="([^"]+)"/g)].map((m) => m[1]!);
    const scripts = [...html.matchAll(/<script\b[^>]*\bsrc="([^"]+)"/g)].map((m) => m[1]!);
    t.ok(scripts.length >= 2, 'the UI bundle and its initializer');
    t.ok(references.some((r) => r.includes('swagger-ui.css')), 'the stylesheet');
    for (const reference of references) {
      const url = new URL(reference, pageUrl);
      t.equal(url.origin, new URL(p.url).origin, `${reference} is same-origin`);
      const asset = await fetch(url);
      const body = Buffer.from(await asset.arrayBuffer());
      t.equal(asset.status, 200, `${reference} is served`);
      t.ok(body.length > 0, `${reference} has content`);
      if (reference === 'schema') {
        t.equal(asset.headers.get('content-type'), 'application/json; charset=utf-8');
        continue;
      }
      if (reference === '/favicon.svg') {
        t.equal(asset.headers.get('content-type'), 'image/svg+xml', 'the service\'s icon');
        continue;
      }
      const expected = /\.js\b/.test(url.pathname) ? 'text/javascript; charset=utf-8' : 'text/css; charset=utf-8';
      t.equal(asset.headers.get('content-type'), expected, `${reference}: ${expected}`);
      t.equal(asset.headers.get('cache-control'), 'public, max-age=31536000, immutable', `${reference}: addressed by content, cached for good`);
      t.match(url.search, /^\?v=[\w-]{12}$/, `${reference}: carries its content hash`);
    }
    for (const script of scripts) {
      const res = await fetch(new URL(script, pageUrl));
      t.equal(res.headers.get('content-type'), 'text/javascript; charset=utf-8', `${script} is JavaScript`);
      const text = await res.text();
      if (script.includes('init.js')) {
        t.match(text, /new URL\('schema', document\.baseURI\)/, 'the page loads the document next to it');
        t.match(text, /validatorUrl: null/, 'no outside validator');
      } else t.match(text, /SwaggerUIBundle/, 'the Swagger UI bundle');
    }
    // Revalidation: the page and the document answer 304 to their ETag; unknown assets 404.
    for (const path of [`${site.prefix}/`, `${site.prefix}/schema`]) {
      const first = await fetch(`${p.url}${path}`);
      await first.arrayBuffer();
      const etag = first.headers.get('etag');
      t.match(etag, /^"[\w-]+"$/, `${path}: ETag`);
      const again = await fetch(`${p.url}${path}`, { headers: { 'If-None-Match': etag! } });
      t.equal(again.status, 304, `${path}: 304 to its ETag`);
    }
    const unknown = await fetch(`${p.url}${site.prefix}/assets/package.json`);
    t.equal(unknown.status, 404, 'only the page\'s assets are served');
    await unknown.arrayBuffer();
  }
});

t.test('the documents take no token and are built once', async (t) => {
  const first = await fetch(`${p.url}/v2/doc/schema`, { headers: { Authorization: 'Bearer nonsense' } });
  t.equal(first.status, 200, 'a bad token is ignored: the route takes none');
  const second = await fetch(`${p.url}/v2/doc/schema`);
  t.equal(first.headers.get('etag'), second.headers.get('etag'), 'the same document every time');
  t.same(await first.json(), await second.json());
  const gz = await fetch(`${p.url}/import/v2/doc/schema`, { headers: { 'Accept-Encoding': 'gzip' } });
  t.equal(gz.headers.get('content-encoding'), 'gzip');
  t.same(await gz.json(), documents.import_v2, 'gzip-encoded on request');
});
