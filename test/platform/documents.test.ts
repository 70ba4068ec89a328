/**
 * The API documents, the index page and the v1 deprecation notices.
 *
 * One file, one process: its parts share the loaded platform code. Each part is a subtest named after
 * what it covers.
 */
import { readFileSync } from 'node:fs';
import { Validator } from '@seriousme/openapi-schema-validator';
import addFormatsModule from 'ajv-formats';
import Ajv2020Module from 'ajv/dist/2020.js';
import sharp from 'sharp';
import t, { type Test } from 'tap';
import type { z } from 'zod';
import { buildDocuments, serviceVersion } from '../../src/api/docs/routes.js';
import { exportV2Document } from '../../src/api/export-v2/docs/document.js';
import { IMPORT_V11 } from '../../src/api/import-v1.1/index.js';
import { IMPORT_V1 } from '../../src/api/import-v1/index.js';
import { IMPORT_V2_DOCUMENT } from '../../src/api/import-v2/docs/document.js';
import { prefersHtml } from '../../src/api/index-page/routes.js';
import { legacyImportDocument } from '../../src/api/legacy-import/docs/document.js';
import { PORTAL_DOCUMENT } from '../../src/api/portal/docs/document.js';
import { hashSecret, newSecret } from '../../src/api/secrets.js';
import { DEMO_ADMIN_TOKEN, demoFixture } from '../../src/cli/demo/fixture.js';
import { VERSION } from '../../src/config/version.js';
import { freshnessPolicies } from '../../src/domain/categories/index.js';
import { problemSchema, stationStatusListSchema, stationStatusSchema } from '../../src/domain/export-v2/schemas.js';
import { V1_MESSAGES } from '../../src/domain/import-v1/messages.js';
import { V1_TO_CANONICAL } from '../../src/domain/import-v1/options.js';
import { V1_SCHEMAS, v11ActiveStationsSchema, v1FieldErrorsSchema, v1NonFieldErrorsSchema, v1ValidationErrorListSchema } from '../../src/domain/import-v1/schemas.js';
import { detailSchema, nonFieldErrorsSchema, validationErrorListSchema } from '../../src/domain/import-v2/schemas.js';
import { createdTokenSchema, newTokenRequestSchema, portalProblemSchema, revealRequestSchema, sessionRequestSchema, sessionSchema, sessionStateSchema, signInAcceptedSchema, signInRequestSchema, tokenAnswerSchema, tokenExpiryRequestSchema, tokenListSchema } from '../../src/domain/portal/schemas.js';
import { isWellFormedToken, MAX_ACTIVE_PERSONAL_TOKENS } from '../../src/domain/token-values.js';
import { newWebhookSchema, webhookPatchSchema } from '../../src/domain/webhooks/schemas.js';
import { buildDocument, componentSchemas, type DocContext, type DocDefinition, openApiPath, type Route } from '../../src/http/openapi.js';
import type { HttpServer, RouteInfo } from '../../src/http/server.js';
import type { Families } from '../../src/platform.js';
import { materialize, rollUpHours } from '../../workers/history/jobs.js';
import { docSites } from '../helpers/docs.js';
import { baseFixture, berlaAssignments, legacyFixture, TOKENS } from '../helpers/fixtures.js';
import { checkExamples, deref, documentAjv } from '../helpers/openapi.js';
import { ADMIN_TOKEN, get, publishHistory, startTestPlatform, type TestPlatform } from '../helpers/platform.js';
import { ACCOUNTS, grantPortalRoles, portalFixture } from '../helpers/portal.js';
import { commandsOf, platformPathsOf, platformUrlsOf } from '../helpers/readme-commands.js';

t.test('docs', async (t) => {
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
      const mapOperation = (r: { auth: string; path: string }) =>
        family === 'export_v2' && r.auth === 'none' && (r.path.startsWith('/map/v1/stations') || r.path.startsWith('/map/v1/stream') || r.path.startsWith('/map/v1/alerts'));
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
    t.same(all.stations.find((s: Json) => s.hrs_id === 'HAMBG'), { hrs_id: 'HAMBG', fuelling_options: [], availability: null, usage: null, hydrogen_storage: null, pricing: null });
    // The check can fail: a field the document does not have.
    t.notOk(stationStatusSchema.safeParse({ ...berla, freshness: 'fresh' }).success, 'an undocumented field is refused');
    t.not(ajvs.export_v2.check(['components', 'schemas', 'StationStatus'], { ...berla, freshness: 'fresh' }), null, 'by the document too');

    // The history and forecast extensions answer their documented 503 until an hour of history is published, then 200.
    for (const path of ['/v2/hrs/{hrs_id}/reliability', '/v2/hrs/{hrs_id}/history', '/v2/hrs/{hrs_id}/forecast']) {
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
        // The driver alerts' request (public, a POST): accepted, and a station the map does not show refused.
        if (path === '/map/v1/alerts') {
          const ask = (hrsId: string) =>
            fetch(`${p.url}${path}`, {
              method: 'POST',
              headers: { 'Content-Type': 'application/json' },
              body: JSON.stringify({ hrs_id: hrsId, fuelling_option: '700ld', when: 'available', email: 'documents@example.org' }),
            });
          t.match(await conforms(t, 'export_v2', 'POST', path, await ask('BERLA'), 202), { status: 'confirmation_sent' });
          t.match(await conforms(t, 'export_v2', 'POST', path, await ask('OSLO1'), 404, problemSchema), { status: 404, code: 'not_found' });
          continue;
        }
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
});

t.test('import-v1-docs', async (t) => {
  /**
   * The import v1 and v1.1 OpenAPI documents and reference pages: valid OpenAPI 3.1 generated from the
   * domain's zod schemas, exactly the families' routes, what they say (messages, vocabulary, partial
   * acceptance, states, the shared rate limit, deprecation, the successor), every example valid, and
   * real answers of the running platform as documented.
   */
  type Json = Record<string, any>;
  type Family = 'import_v1' | 'import_v1.1';
  const FAMILIES: Family[] = ['import_v1', 'import_v1.1'];
  const VERSION = { import_v1: 'v1', 'import_v1.1': 'v1.1' } as const;
  const DIALECT = VERSION;

  /** BERLA (layout 700ld, 350ld) registered with the matching v1 fuel types, mon-1 Live on it for import v1/v1.1. */
  function fixture() {
    const f = baseFixture();
    (f.stations[0] as Record<string, unknown>).v1_fuel_types = ['700car', '350car'];
    f.assignments.push({ originator: 'mon-1', hrs_id: 'BERLA', signal_type: 'v1', state: 'live' });
    return f;
  }

  const site = (family: Family) => docSites(server!).find((s) => s.family === family)!;

  let server: HttpServer | undefined;
  const p = await startTestPlatform(t, { fixture: fixture(), routes: (s) => (server = s) });
  const context: DocContext = { config: p.parts.config, reference: p.parts.reference, version: serviceVersion() };
  const definitions: Record<Family, DocDefinition> = { import_v1: legacyImportDocument(IMPORT_V1).define(context), 'import_v1.1': legacyImportDocument(IMPORT_V11).define(context) };

  async function fetchDocument(url: string, family: Family): Promise<Json> {
    const res = await fetch(`${url}${site(family).prefix}/schema`);
    if (res.status !== 200) throw new Error(`${site(family).prefix}/schema answered ${res.status}`);
    return (await res.json()) as Json;
  }
  const documents: Record<Family, Json> = {
    import_v1: await fetchDocument(p.url, 'import_v1'),
    'import_v1.1': await fetchDocument(p.url, 'import_v1.1'),
  };

  const ajvs = { import_v1: documentAjv(documents.import_v1), 'import_v1.1': documentAjv(documents['import_v1.1']) };

  function zodOf(family: Family, name: string): z.ZodType | undefined {
    return definitions[family].responseSchemas[name] ?? definitions[family].requestSchemas[name];
  }

  /**
   * A real response against its operation in the document: the status is the expected one and
   * documented, every documented header is sent, the media type is documented, and a JSON body
   * validates against the document's schema (Ajv) and against the zod schema behind it. Returns the
   * parsed body.
   */
  async function conforms(
    t: Test,
    family: Family,
    method: string,
    path: string,
    res: Response,
    expected: number,
    zodSchema?: z.ZodType,
    document: Json = documents[family],
    ajv = ajvs[family],
  ): Promise<unknown> {
    t.equal(res.status, expected, `${method} ${path}: ${expected}`);
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
    const body = JSON.parse(bytes.toString('utf8'));
    const where = typeof documented.$ref === 'string'
      ? [...documented.$ref.slice(2).split('/'), 'content', media, 'schema']
      : ['paths', path, method.toLowerCase(), 'responses', status, 'content', media, 'schema'];
    t.equal(ajv.check(where, body), null, `${method} ${path} ${status}: the body validates against the document`);
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

  function post(url: string, path: string, body: unknown, headers: Record<string, string> = {}): Promise<Response> {
    return fetch(`${url}${path}`, {
      method: 'POST',
      body: typeof body === 'string' ? body : JSON.stringify(body),
      headers: { Authorization: `Bearer ${TOKENS.import_v1}`, 'Content-Type': 'application/json', ...headers },
    });
  }

  const signalPath = (family: Family) => `/import/${VERSION[family]}/hrs-availability`;

  t.test('both documents are valid OpenAPI 3.1, their schemas valid JSON Schema 2020-12', async (t) => {
    for (const family of FAMILIES) {
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
      // The check can fail: a document without paths' responses is refused.
      const broken = structuredClone(document);
      broken.paths[signalPath(family)].post.deprecated = 'yes';
      t.equal((await new Validator().validate(broken)).valid, false, `${family}: a malformed operation is refused`);
    }
  });

  t.test('the schemas are the domain\'s zod schemas, converted', async (t) => {
    for (const family of FAMILIES) {
      const dialect = DIALECT[family];
      const schemas = documents[family].components.schemas as Json;
      const request = componentSchemas({ Signal: V1_SCHEMAS[dialect].signal, SignalRequest: V1_SCHEMAS[dialect].request }, 'input');
      t.same(schemas.Signal, request.Signal, `${family}: Signal is ${dialect}'s signal schema`);
      t.same(schemas.SignalRequest, request.SignalRequest, `${family}: SignalRequest is ${dialect}'s request schema`);
      const response = componentSchemas(
        {
          FuelTypeList: V1_SCHEMAS[dialect].fuelTypes,
          SignalErrors: v1FieldErrorsSchema,
          ValidationErrors: v1ValidationErrorListSchema,
          NonFieldErrors: v1NonFieldErrorsSchema,
          ...(family === 'import_v1.1' ? { ActiveStations: v11ActiveStationsSchema } : {}),
        },
        'output',
      );
      for (const [name, schema] of Object.entries(response)) t.same(schemas[name], schema, `${family}: ${name} from the domain`);
      t.equal(schemas.Signal.title, dialect === 'v1' ? 'Import v1 signal' : 'Import v1.1 signal');
      t.same(schemas.Signal.properties.dispensers.items.properties.fuel_type.enum, dialect === 'v1' ? ['700car', '350car', '350bus'] : ['700ld', '350ld', '700hd', '350hd']);
      t.equal(family === 'import_v1.1', 'ActiveStations' in schemas, `${family}: ActiveStations only where the endpoint is`);
    }
    // The document refuses what the schema refuses: v1 cannot carry 700hd; v1.1 can.
    const base = { hrs: 'BERLA', datetime: '2026-11-22T10:00:00Z', maintenance: false, limitedly_available: false };
    t.not(ajvs.import_v1.check(['components', 'schemas', 'Signal'], { ...base, dispensers: [{ fuel_type: '700hd', available: true }] }), null, 'v1: 700hd refused');
    t.equal(ajvs['import_v1.1'].check(['components', 'schemas', 'Signal'], { ...base, dispensers: [{ fuel_type: '700hd', available: true }] }), null, 'v1.1: 700hd accepted');
    t.equal(ajvs.import_v1.check(['components', 'schemas', 'Signal'], { ...base, dispensers: [{ fuel_type: '350bus' }] }), null, 'v1: available may be left out');
    t.not(ajvs.import_v1.check(['components', 'schemas', 'Signal'], { ...base, maintenance: undefined, dispensers: [] }), null, 'v1: maintenance is required');
  });

  t.test('each document has the import v1/v1.1 bearer scheme, required by every operation; v1 is deprecated', async (t) => {
    for (const family of FAMILIES) {
      const document = documents[family];
      const schemes = document.components.securitySchemes as Json;
      t.same(Object.keys(schemes), ['importV1Token'], `${family}: one scheme`);
      t.match(schemes.importV1Token, { type: 'http', scheme: 'bearer', description: /import v1\/v1\.1 token/ });
      t.same(document.security, [{ importV1Token: [] }], `${family}: required everywhere`);
      for (const [path, item] of Object.entries(document.paths as Record<string, Json>)) {
        for (const [method, operation] of Object.entries(item)) {
          t.ok(operation.responses['401'], `${family}: ${method} ${path} documents its 401`);
          t.ok(operation.responses['429'], `${family}: ${method} ${path} documents its 429`);
          t.ok(operation.summary && operation.description && operation.operationId, `${family}: ${method} ${path} has a summary, a description, an operationId`);
          t.equal(operation.deprecated === true, family === 'import_v1', `${family}: ${method} ${path} ${family === 'import_v1' ? 'is' : 'is not'} deprecated`);
        }
      }
      const signal = document.paths[signalPath(family)].post;
      t.same(Object.keys(signal.responses).sort(), ['204', '400', '401', '413', '415', '429', '500'], `${family}: every status of the signal endpoint`);
      t.notOk(signal.responses['204'].content, `${family}: 204 has no body`);
    }
  });

  t.test('every route of the families is in their documents, and nothing else', async (t) => {
    t.ok(server, 'the server was handed to the routes callback');
    const routes = server!.routes();
    const expected = {
      import_v1: ['GET /import/v1/fuel-type', 'POST /import/v1/hrs-availability'],
      'import_v1.1': ['GET /import/v1.1/active-stations', 'GET /import/v1.1/fuel-type', 'POST /import/v1.1/hrs-availability'],
    };
    for (const family of FAMILIES) {
      const served = routes.filter((r) => r.auth === family).map((r) => `${r.method} ${openApiPath(r.path)}`).sort();
      const documented = Object.entries(documents[family].paths as Record<string, Json>)
        .flatMap(([path, item]) => Object.keys(item).map((method) => `${method.toUpperCase()} ${path}`))
        .sort();
      t.same(served, expected[family], `${family}: the routes are there to compare`);
      t.same(documented, served, `${family}: documented operations = registered routes`);
      for (const path of [`${site(family).prefix}/schema`, `${site(family).prefix}/`, `${site(family).prefix}/assets/:name`]) {
        t.ok(routes.some((r) => r.method === 'GET' && r.path === path && r.auth === 'none'), `GET ${path} is registered without auth`);
      }
    }
    // A route without a description stops the document from being built.
    const extra: Route = { method: 'GET', path: '/import/v1/weather', auth: 'import_v1' } as Route;
    t.throws(() => buildDocument(definitions.import_v1, [...routes, extra]), /no description of GET \/import\/v1\/weather/);
  });

  t.test('what the documents say: messages, vocabulary, partial acceptance, states, rate limit, successor', async (t) => {
    for (const family of FAMILIES) {
      const document = documents[family];
      const info = document.info.description as string;
      const signal = document.paths[signalPath(family)].post;
      const text = `${info}\n${signal.description}`;
      // Every message a signal or a request can get, quoted (with placeholders where it takes a value).
      const quoted = [
        V1_MESSAGES.invalidFuellingOption,
        V1_MESSAGES.duplicateFuellingOption('<fuel_type>'),
        V1_MESSAGES.notProvided('<fuel_type>'),
        V1_MESSAGES.unknownStation('<hrs>'),
        V1_MESSAGES.datetimeFormat,
        V1_MESSAGES.tooOld,
        V1_MESSAGES.future,
        V1_MESSAGES.required,
        V1_MESSAGES.notNull,
        V1_MESSAGES.notABoolean,
        V1_MESSAGES.notAString,
        V1_MESSAGES.blank,
        V1_MESSAGES.textTooLong,
        V1_MESSAGES.nullCharacter,
        V1_MESSAGES.notAList({}).replace('dict', '<type>'),
        V1_MESSAGES.notAnObject('x').replace('str', '<type>'),
        V1_MESSAGES.tooLong(1000),
        V1_MESSAGES.tooLong(100),
        V1_MESSAGES.notValidated,
      ];
      for (const message of quoted) t.ok(signal.description.includes(`\`${message}\``), `${family}: quotes "${message}"`);
      // The vocabulary and its mapping, a row per fuelling option.
      for (const [v1, option] of V1_TO_CANONICAL) t.match(info, new RegExp(`\\| \`${v1}\` \\| \`${option}\` \\|`), `${family}: ${v1} = ${option}`);
      t.match(info, /\| — \(none: v1 cannot carry it\) \| `700hd` \|/, `${family}: 700hd has no v1 code`);
      t.match(text, /\*\*those are stored all the same\*\*/, `${family}: partial acceptance`);
      t.match(text, /An option left out, or sent with `available: null`.*becomes unknown/, `${family}: unknown when omitted`);
      for (const state of ['Live', 'Testing', 'Inactive']) t.match(info, new RegExp(`\\| ${state}\\b`), `${family}: the ${state} state`);
      t.match(info, /3000 requests per minute per signal originator, \*\*one budget for import v1 and v1\.1 together\*\*/, `${family}: the rate limit`);
      t.match(info, /never told of a limit/, `${family}: why the legacy limit is so high`);
      t.match(info, /\[the Import API v2 reference\]\(\/import\/v2\/doc\/\)/, `${family}: links the successor`);
      t.match(signal.description, /\[import v2\]\(\/import\/v2\/doc\/\)/, `${family}: the operation links the successor`);
      t.match(document.info.title, new RegExp(`Import API ${VERSION[family].replace('.', '\\.')}$`));
    }
    t.match(documents.import_v1.info.description, /\*\*Import v1 is deprecated\*\* \(since v1\.1 was published, 17 June 2026\)\. It remains functional/);
    t.match(documents.import_v1.info.summary, /^Deprecated/);
    t.notMatch(documents['import_v1.1'].info.description, /Import v1\.1 is deprecated/);
    // And import v2's reference names the older ones.
    const v2 = (await (await fetch(`${p.url}/import/v2/doc/schema`)).json()) as Json;
    t.match(v2.info.description, /remains functional and is deprecated; its reference is at \[\/import\/v1\/doc\/\]\(\/import\/v1\/doc\/\)/);
  });

  t.test('every example in the documents validates against its schema', async (t) => {
    for (const family of FAMILIES) {
      const document = documents[family];
      const count = checkExamples(t, document, ajvs[family].check, `${family}: `);
      t.ok(count > 30, `${family}: ${count} examples checked`);
    }
    // The check can fail: a wrong example is refused.
    t.not(ajvs.import_v1.check(['components', 'schemas', 'ValidationErrors'], [{ dispensers: 'x' }, 5]), null, 'a malformed error body is refused');
    t.not(ajvs.import_v1.check(['components', 'schemas', 'NonFieldErrors'], { non_field_errors: [] }), null, 'an empty non_field_errors is refused');
  });

  t.test('the request examples are answered as documented; the stored signals are the accepted ones', async (t) => {
    for (const family of FAMILIES) {
      const path = signalPath(family);
      const document = documents[family];
      const operation = document.paths[path].post;
      const examples = operation.requestBody.content['application/json'].examples as Record<string, { value: Json[] }>;
      t.ok(Object.keys(examples).length >= 4, `${family}: request examples`);
      const answers = deref(document, operation.responses['400']).content['application/json'].examples;
      const partial = answers.partial_acceptance.value;
      t.ok(examples.option_not_provided, `${family}: an option the station does not provide, as an example`);
      for (const [name, example] of Object.entries(examples)) {
        // The examples name the test fixture's BERLA; only the time is today's.
        const body = example.value.map((signal) => ({ ...signal, datetime: now() }));
        const before = await p.sql<{ n: number }[]>`SELECT count(*)::int AS n FROM signal_history`;
        if (name === 'partial_acceptance') {
          t.same(await conforms(t, family, 'POST', path, await post(p.url, path, body), 400, v1ValidationErrorListSchema), partial, `${family}: ${name} gets the documented 400`);
        } else if (name === 'option_not_provided') {
          const answer = await conforms(t, family, 'POST', path, await post(p.url, path, body), 400, v1ValidationErrorListSchema);
          t.same(answer, answers.option_not_provided.value, `${family}: ${name} gets the documented 400`);
          t.match(JSON.stringify(answer), /"Fuelling option not provided by this station: (350bus|700hd)"/, `${family}: naming the option`);
        } else {
          await conforms(t, family, 'POST', path, await post(p.url, path, body), 204);
        }
        const after = await p.sql<{ n: number }[]>`SELECT count(*)::int AS n FROM signal_history`;
        const accepted = name === 'partial_acceptance' ? body.length - 1 : name === 'option_not_provided' ? 0 : body.length;
        t.equal(after[0]!.n - before[0]!.n, accepted, `${family}: ${name}: ${accepted} signal(s) stored`);
      }
    }
  });

  t.test('real errors validate against the documented schemas', async (t) => {
    for (const family of FAMILIES) {
      const path = signalPath(family);
      const [a, b] = family === 'import_v1' ? ['700car', '350car'] : ['700ld', '350ld'];
      const other = family === 'import_v1' ? '700hd' : '700car';
      const good = { hrs: 'BERLA', datetime: now(), dispensers: [{ fuel_type: a, available: true }, { fuel_type: b, available: null }], maintenance: false, limitedly_available: false };
      // A 400 aligned with the request, with nested errors.
      const aligned = (await conforms(
        t,
        family,
        'POST',
        path,
        await post(p.url, path, [
          good,
          { hrs: 'OSLOA', datetime: '2020-01-01T00:00:00Z', dispensers: [{ fuel_type: a, available: 'yes' }, { fuel_type: other }, 7], maintenance: null },
          { ...good, dispensers: [{ fuel_type: a }, { fuel_type: a }] },
        ]),
        400,
        v1ValidationErrorListSchema,
      )) as Json[];
      t.equal(aligned.length, 3, `${family}: aligned with the request`);
      t.same(aligned[0], {}, `${family}: the valid signal gets {}`);
      t.same(aligned[1], {
        hrs: [V1_MESSAGES.unknownStation('OSLOA')],
        datetime: [V1_MESSAGES.tooOld],
        dispensers: [{ available: [V1_MESSAGES.notABoolean] }, { fuel_type: [V1_MESSAGES.invalidFuellingOption] }, { non_field_errors: [V1_MESSAGES.notAnObject(7)] }],
        maintenance: [V1_MESSAGES.notNull],
        limitedly_available: [V1_MESSAGES.required],
      }, `${family}: nested errors`);
      t.same(aligned[2], { dispensers: [{}, { fuel_type: [V1_MESSAGES.duplicateFuellingOption(a)] }] }, `${family}: a duplicate option`);
      // The body as a whole.
      t.same(await conforms(t, family, 'POST', path, await post(p.url, path, { hrs: 'BERLA' }), 400, v1NonFieldErrorsSchema), {
        non_field_errors: ['Expected a list of items but got type "dict".'],
      }, `${family}: a non-list body`);
      t.match(await conforms(t, family, 'POST', path, await post(p.url, path, '[{'), 400, detailSchema), { detail: /^JSON parse error - / });
      t.match(await conforms(t, family, 'POST', path, await post(p.url, path, '[]', { 'Content-Type': 'text/plain' }), 415, detailSchema), { detail: /Unsupported media type/ });
      const big = `[${' '.repeat(p.parts.config.maxBodyBytes)}]`;
      t.match(await conforms(t, family, 'POST', path, await post(p.url, path, big), 413, detailSchema), { detail: /exceeds the limit/ });
      // 401: missing, unknown, another generation; each body one of the documented examples.
      const unauthorized = deref(documents[family], documents[family].paths[path].post.responses['401']).content['application/json'].examples as Json;
      const documentedDetails = Object.values(unauthorized).map((e: Json) => e.value.detail);
      for (const [label, token] of [['missing', undefined], ['unknown', 'no-such-token'], ['import v2', TOKENS.import_v2], ['export v1', TOKENS.export_v1], ['export v2', TOKENS.export_v2]] as const) {
        const headers: Record<string, string> = token === undefined ? { Authorization: '' } : { Authorization: `Bearer ${token}` };
        const body = (await conforms(t, family, 'POST', path, await post(p.url, path, [good], headers), 401, detailSchema)) as Json;
        t.ok(documentedDetails.includes(body.detail), `${family}: the ${label} 401 is a documented example: ${body.detail}`);
      }
      const fuelTypes = `/import/${VERSION[family]}/fuel-type`;
      const refused = await get(`${p.url}${fuelTypes}`, TOKENS.import_v2);
      t.match(await conforms(t, family, 'GET', fuelTypes, refused, 401, detailSchema), { detail: /^This is an import v2 token/ });
    }
  });

  t.test('the reference lists and the active stations as documented', async (t) => {
    for (const family of FAMILIES) {
      const path = `/import/${VERSION[family]}/fuel-type`;
      const body = await conforms(t, family, 'GET', path, await get(`${p.url}${path}`, TOKENS.import_v1), 200);
      const example = documents[family].paths[path].get.responses['200'].content['application/json'].examples.all.value;
      t.same(body, example, `${family}: the example is the real list`);
      t.same((body as Json[]).map((e) => e.code), family === 'import_v1' ? ['700car', '350car', '350bus'] : ['700ld', '350ld', '700hd', '350hd']);
    }
    const active = await conforms(t, 'import_v1.1', 'GET', '/import/v1.1/active-stations', await get(`${p.url}/import/v1.1/active-stations`, TOKENS.import_v1), 200);
    t.same(active, { live: ['BERLA'], testing: [] });
  });

  t.test('429: one documented budget for v1 and v1.1, Retry-After', async (t) => {
    const q = await startTestPlatform(t, { fixture: fixture(), env: { IMPORT_V1_RATE_LIMIT: '1' } });
    const v1 = await fetchDocument(q.url, 'import_v1');
    const v11 = await fetchDocument(q.url, 'import_v1.1');
    for (const document of [v1, v11]) {
      t.match(document.info.description, /1 request per minute per signal originator, \*\*one budget/, 'the configured limit is the documented one');
      t.match(document.components.headers['RateLimit-Limit'].schema.examples, [1]);
    }
    const first = await get(`${q.url}/import/v1/fuel-type`, TOKENS.import_v1);
    t.equal(first.status, 200);
    await first.arrayBuffer();
    // The v1.1 request spends the same budget.
    const throttled = await post(q.url, '/import/v1.1/hrs-availability', []);
    t.match(
      await conforms(t, 'import_v1.1', 'POST', '/import/v1.1/hrs-availability', throttled, 429, detailSchema, v11, documentAjv(v11)),
      { detail: /^Request was throttled: at most 1 request per minute per signal originator\./ },
    );
    // Import v2's budget is apart.
    const v2 = await get(`${q.url}/import/v2/active-stations/`, TOKENS.import_v2);
    t.equal(v2.status, 200, 'import v2 is not throttled by the import v1 budget');
    await v2.arrayBuffer();
  });

  t.test('the reference pages are served, offline, with the document next to them', async (t) => {
    for (const family of FAMILIES) {
      const { prefix, title } = site(family);
      const pageUrl = `${p.url}${prefix}/`;
      const res = await fetch(pageUrl);
      t.equal(res.status, 200, `${prefix}/`);
      t.equal(res.headers.get('content-type'), 'text/html; charset=utf-8');
      t.match(res.headers.get('content-security-policy'), /script-src 'self';/);
      const html = await res.text();
      t.ok(html.includes(`<title>${title}</title>`), `${prefix}/: titled ${title}`);
      t.match(html, /<div id="swagger-ui">/);
      t.notMatch(html, /\bhttps?:\/\//, 'nothing from another origin');
      const references = [...html.matchAll(/\b(?:src|href)="([^"]+)"/g)].map((m) => m[1]!);
      t.ok(references.some((r) => /^assets\/swagger-ui-bundle\.js\?v=/.test(r)), 'the Swagger UI bundle from swagger-ui-dist');
      for (const reference of references) {
        const asset = await fetch(new URL(reference, pageUrl));
        t.equal(asset.status, 200, `${prefix}/${reference} is served`);
        t.ok((await asset.arrayBuffer()).byteLength > 0, `${prefix}/${reference} has content`);
      }
      const init = await (await fetch(new URL(references.find((r) => r.includes('init.js'))!, pageUrl))).text();
      t.match(init, /new URL\('schema', document\.baseURI\)/, 'the page loads the document next to it');
      const schema = await fetch(`${p.url}${prefix}/schema`, { headers: { Authorization: 'Bearer nonsense' } });
      t.equal(schema.status, 200, 'the document takes no token');
      t.equal(schema.headers.get('content-type'), 'application/json; charset=utf-8');
      t.same(await schema.json(), documents[family]);
    }
  });
});

t.test('portal-docs', async (t) => {
  /**
   * The portal document (`/portal/v1/doc/`): valid OpenAPI 3.1, its operations exactly the portal's
   * JSON routes (the page and its files left out), the cookie scheme, the sign-in flow and the limits
   * explained as configured, every example valid, and real answers of a running platform (signed in
   * through a sign-in link whose secret the test stored itself) valid against the document, their
   * headers too.
   */
  type AjvClass = typeof Ajv2020Module.default;
  const Ajv2020 = ((Ajv2020Module as unknown as { default?: AjvClass }).default ?? Ajv2020Module) as AjvClass;
  type AddFormats = typeof addFormatsModule.default;
  const addFormats = ((addFormatsModule as unknown as { default?: AddFormats }).default ?? addFormatsModule) as AddFormats;

  type Json = Record<string, any>;

  const PUBLIC_OPERATIONS = ['GET /portal/v1/session/state', 'POST /portal/v1/reveal', 'POST /portal/v1/session', 'POST /portal/v1/sign-in'];
  /** The portal's public routes that are not operations: the page, its files, and this document's own routes. */
  const NOT_OPERATIONS = [
    'GET /portal/',
    'GET /portal/account.js',
    'GET /portal/api.js',
    'GET /portal/dates.js',
    'GET /portal/forecast.js',
    'GET /portal/layout-editor.js',
    'GET /portal/layout-pane.js',
    'GET /portal/originators.js',
    'GET /portal/page.js',
    'GET /portal/portal.css',
    'GET /portal/portal.js',
    'GET /portal/registry-parts.js',
    'GET /portal/registry.css',
    'GET /portal/registry.js',
    'GET /portal/router.js',
    'GET /portal/session.js',
    'GET /portal/station-events.js',
    'GET /portal/station-pin.js',
    'GET /portal/stations.js',
    'GET /portal/timeline.css',
    'GET /portal/timeline.js',
    'GET /portal/tokens.js',
    'GET /portal/v1/doc/',
    'GET /portal/v1/doc/assets/{name}',
    'GET /portal/v1/doc/schema',
    'GET /portal/value.js',
    'GET /portal/vocabulary.js',
    'GET /portal/webhook-common.js',
    'GET /portal/webhook-form.js',
    'GET /portal/webhook-view.js',
    'GET /portal/webhooks.css',
    'GET /portal/webhooks.js',
    'GET /portal/zones.js',
  ];

  let server: HttpServer | undefined;
  const p = await startTestPlatform(t, { fixture: baseFixture(), routes: (s) => (server = s) });
  const context: DocContext = { config: p.parts.config, reference: p.parts.reference, version: serviceVersion() };
  const definition = PORTAL_DOCUMENT.define(context);
  const site = docSites(server!).find((s) => s.family === 'portal')!;

  const served = await fetch(`${p.url}${site.prefix}/schema`);
  if (served.status !== 200) throw new Error(`${site.prefix}/schema answered ${served.status}`);
  const document = (await served.json()) as Json;

  /** Ajv over the whole document: any JSON pointer into it compiles as a schema, `$ref`s resolved. */
  const ajv = new Ajv2020({ strict: false, allErrors: true });
  addFormats(ajv);
  const BASE = 'https://docs.invalid/openapi.json';
  ajv.addSchema(document, BASE);
  const compiled = new Map<string, ReturnType<typeof ajv.compile>>();
  function check(parts: (string | number)[], value: unknown): string | null {
    const ref = `${BASE}#/${parts.map((q) => String(q).replace(/~/g, '~0').replace(/\//g, '~1')).join('/')}`;
    let validate = compiled.get(ref);
    if (!validate) compiled.set(ref, (validate = ajv.compile({ $ref: ref })));
    return validate(value) ? null : ajv.errorsText(validate.errors);
  }

  function deref(value: Json): Json {
    if (typeof value?.$ref !== 'string') return value;
    let at: any = document;
    for (const part of value.$ref.slice(2).split('/')) at = at?.[part.replace(/~1/g, '/').replace(/~0/g, '~')];
    if (at === undefined) throw new Error(`dangling ${value.$ref}`);
    return deref(at);
  }

  /** Where a value's schema is: the `$ref`'s target, or `at` itself. */
  const placeOf = (value: Json, at: (string | number)[]) => (typeof value.$ref === 'string' ? (value.$ref as string).slice(2).split('/') : at);

  /**
   * A real answer against its operation: the status documented, every documented header sent and valid
   * against its schema, the media type documented, the body valid against the document (Ajv) and against
   * the zod schema behind it. Returns the parsed body.
   */
  async function conforms(t: Test, method: string, path: string, res: Response, expected: number, zodSchema?: z.ZodType): Promise<any> {
    const what = `${method} ${path} ${res.status}`;
    t.equal(res.status, expected, `${method} ${path}: ${expected}`);
    const operation = document.paths[path]?.[method.toLowerCase()];
    t.ok(operation, `${method} ${path} is documented`);
    const documented = operation?.responses?.[String(res.status)];
    t.ok(documented, `${what} is documented`);
    const bytes = Buffer.from(await res.arrayBuffer());
    if (!operation || !documented) return undefined;
    const response = deref(documented);
    const at = placeOf(documented, ['paths', path, method.toLowerCase(), 'responses', String(res.status)]);
    for (const [name, header] of Object.entries((response.headers ?? {}) as Record<string, Json>)) {
      const value = res.headers.get(name);
      t.ok(value !== null, `${what}: header ${name} is sent`);
      if (value === null) continue;
      const schema = deref(header).schema as Json;
      const where = [...placeOf(header, [...at, 'headers', name]), 'schema'];
      t.equal(check(where, schema.type === 'integer' ? Number(value) : value), null, `${what}: ${name} "${value}" fits its schema`);
    }
    if (!response.content) {
      t.equal(bytes.length, 0, `${what}: no body, as documented`);
      return undefined;
    }
    const media = (res.headers.get('content-type') ?? '').split(';')[0]!.trim();
    t.ok(media in response.content, `${what}: ${media} is documented`);
    const body = JSON.parse(bytes.toString('utf8'));
    t.equal(check([...at, 'content', media, 'schema'], body), null, `${what}: the body validates against the document`);
    const ref = response.content[media]?.schema?.$ref as string | undefined;
    const name = ref?.split('/').pop();
    const zodSchema_ = zodSchema ?? (name ? (definition.responseSchemas[name] ?? definition.requestSchemas[name]) : undefined);
    t.ok(zodSchema_, `${what}: a zod schema to check the body with`);
    if (zodSchema_) {
      const parsed = zodSchema_.safeParse(body);
      t.ok(parsed.success, `${what}: the body parses with the zod schema${parsed.success ? '' : `: ${parsed.error.message}`}`);
    }
    return body;
  }

  /** A documented example of a response (an operation's own or a shared one). */
  function example(method: string, path: string, status: number, name: string): Json {
    const response = deref(document.paths[path][method.toLowerCase()].responses[String(status)]);
    const media = Object.keys(response.content)[0]!;
    const found = response.content[media].examples[name];
    if (!found) throw new Error(`no example ${name} of ${method} ${path} ${status}`);
    return deref(found).value;
  }

  /** A browser-like client: sends the service's Origin and keeps the session cookie. */
  function client(q: TestPlatform = p) {
    let cookie: string | undefined;
    const call = async (method: string, path: string, body?: unknown, headers: Record<string, string> = {}) => {
      const res = await fetch(`${q.url}${path}`, {
        method,
        headers: {
          Origin: q.url,
          ...(body === undefined ? {} : { 'Content-Type': 'application/json' }),
          ...(cookie ? { Cookie: cookie } : {}),
          ...headers,
        },
        body: body === undefined ? undefined : typeof body === 'string' || Buffer.isBuffer(body) ? (body as string) : JSON.stringify(body),
      });
      const set = res.headers.get('set-cookie');
      if (set) cookie = set.split(';')[0]!.endsWith('=') ? undefined : set.split(';')[0];
      return res;
    };
    return { call, get cookie() { return cookie; } };
  }

  /** A sign-in link for the account, as the e-mail would carry it: its secret, stored as its SHA-256. */
  async function signInLink(q: TestPlatform, userId = 'alice'): Promise<string> {
    const secret = newSecret();
    await q.sql`INSERT INTO sign_in_links (hash, user_id, expires_at) VALUES (${hashSecret(secret)}, ${userId}, clock_timestamp() + interval '15 minutes')`;
    return secret;
  }

  /** A reveal link for a token issued to the account, as the admin API stores it. */
  async function revealLink(q: TestPlatform, userId: string, tokenName: string): Promise<string> {
    const secret = newSecret();
    await q.sql`
    INSERT INTO reveal_links (hash, user_id, token_name, token_expires_at, expires_at)
    VALUES (${hashSecret(secret)}, ${userId}, ${tokenName}, clock_timestamp() + interval '30 days', clock_timestamp() + interval '7 days')`;
    return secret;
  }

  t.test('the document is valid OpenAPI 3.1, its schemas valid JSON Schema 2020-12, served at /portal/v1/doc/', async (t) => {
    t.equal(site.prefix, '/portal/v1/doc');
    t.equal(`${definition.publicPrefix}doc`, site.prefix, 'the document\'s own routes are those its definition leaves out');
    const validator = new Validator();
    const result = await validator.validate(structuredClone(document));
    t.same(result.errors, undefined, 'no errors');
    t.equal(result.valid, true, 'valid');
    t.equal(validator.version, '3.1', 'validated as OpenAPI 3.1');
    t.match(document.openapi, /^3\.1\.\d+$/);
    for (const [name, schema] of Object.entries(document.components.schemas as Record<string, object>)) {
      t.equal(ajv.validateSchema(schema), true, `schema ${name} is valid JSON Schema 2020-12`);
    }
    const broken = structuredClone(document);
    delete broken.info;
    t.equal((await new Validator().validate(broken)).valid, false, 'a document without info is refused');
    t.same(document, JSON.parse(JSON.stringify(buildDocument(definition, server!.routes()))), 'the served document is the definition built on the routes');

    const page = await fetch(`${p.url}${site.prefix}/`);
    t.equal(page.status, 200, 'the reference page');
    t.match(await page.text(), '<title>HRS signal platform: Portal API</title>');
    const index = (await (await fetch(`${p.url}/`)).json()) as { pages: { rel: string; href: string; auth: string }[] };
    t.match(index.pages.find((pg) => pg.rel === 'portal_doc'), { href: `${p.url}/portal/v1/doc/`, auth: 'none' }, 'listed on the index page');
  });

  t.test('a cookie scheme, required by every operation but the four public ones', async (t) => {
    t.same(document.components.securitySchemes, {
      portalSession: { type: 'apiKey', in: 'cookie', name: 'hrs_portal', description: document.components.securitySchemes.portalSession.description },
    });
    t.match(document.components.securitySchemes.portalSession.description, /HttpOnly.*SameSite=Strict.*30 minutes unused, 12 hours after sign-in/);
    t.same(document.security, [{ portalSession: [] }], 'the session, by default');
    const publicOnes: string[] = [];
    for (const [path, item] of Object.entries(document.paths as Record<string, Json>)) {
      for (const [method, operation] of Object.entries(item as Record<string, Json>)) {
        const key = `${method.toUpperCase()} ${path}`;
        t.ok(operation.summary && operation.description && operation.operationId, `${key}: summary, description, operationId`);
        if (operation.security !== undefined) {
          t.same(operation.security, [], `${key}: no credential`);
          publicOnes.push(key);
          t.notOk(operation.responses['401'], `${key}: no 401`);
        } else {
          t.ok(operation.responses['401'], `${key}: its 401`);
          t.ok(operation.responses['429'], `${key}: its 429 (failed authentications)`);
        }
        if (method !== 'get') t.ok(operation.responses['403'], `${key}: its 403 (the Origin rule)`);
        if (operation.requestBody) {
          t.ok(operation.responses['400'] && operation.responses['413'] && operation.responses['415'], `${key}: 400, 413, 415`);
        }
      }
    }
    t.same(publicOnes.sort(), PUBLIC_OPERATIONS);
  });

  t.test('documented operations are exactly the portal\'s JSON routes; the page and its files are not operations', async (t) => {
    const routes = server!.routes();
    const portal = routes.filter((r) => r.path.startsWith('/portal/')).map((r) => ({ key: `${r.method} ${openApiPath(r.path)}`, auth: r.auth }));
    const documented = Object.entries(document.paths as Record<string, Json>)
      .flatMap(([path, item]) => Object.keys(item).map((method) => `${method.toUpperCase()} ${path}`))
      .sort();
    t.same(documented, portal.filter((r) => !NOT_OPERATIONS.includes(r.key)).map((r) => r.key).sort(), 'documented = the routes under /portal/ but the page\'s');
    t.equal(documented.length, 10 + 21 + 6 + 8 + 8, 'the token owners\' 10, operator staff\'s 21, originator managers\' 6, the history\'s 8 (the forecast with them), the webhooks\' 8');
    t.same(portal.filter((r) => r.auth === 'portal').length, 6 + 21 + 6 + 8 + 8, 'all but the four public ones need the session');
    t.same(portal.filter((r) => NOT_OPERATIONS.includes(r.key)).map((r) => [r.key, r.auth]).sort(), NOT_OPERATIONS.map((key) => [key, 'none']), 'the rest: public files');
    for (const path of Object.keys(document.paths)) t.ok(path.startsWith('/portal/v1/'), `${path} is under /portal/v1/`);

    // A route without a description stops the document (and so the start), public ones under /portal/v1/ too.
    const all: Route[] = [...routes];
    for (const extra of [
      { method: 'GET', path: '/portal/v1/tokens/:id', auth: 'portal' },
      { method: 'POST', path: '/portal/v1/password', auth: 'none' },
    ] as const) {
      t.throws(() => buildDocument(definition, [...all, extra]), new RegExp(`no description of ${extra.method} ${extra.path.replace(/\//g, '\\/')}`));
    }
    t.ok(buildDocument(definition, [...all, { method: 'GET', path: '/portal/logo.png', auth: 'none' }]), 'a public file of the page is no operation');
    t.ok(buildDocuments(server!, p.parts).get('portal'), 'built again after the start, its own routes registered: still the same operations');
    // The security an operation states must be the one its route takes.
    const flipped = (key: string, security: Record<string, unknown>[] | undefined): Route[] =>
      all.map((r) => (`${r.method} ${r.path}` === key ? { ...r, doc: { ...r.doc!, security } } : r));
    t.throws(() => buildDocument(definition, flipped('POST /portal/v1/sign-in', undefined)), /POST \/portal\/v1\/sign-in takes no credential/);
    t.throws(() => buildDocument(definition, flipped('GET /portal/v1/tokens', [])), /GET \/portal\/v1\/tokens takes a credential/);
  });

  t.test('the description explains the sign-in flow, sessions, the Origin rule, the limits, tokens and reveal links', async (t) => {
    const text = document.info.description as string;
    t.match(text, /\/portal\/#sign-in=<token>/, 'the e-mailed link');
    t.match(text, /works \*\*once\*\*, for \*\*15 minutes\*\*/);
    t.match(text, /POST \/portal\/v1\/session/, 'the POST uses it');
    t.match(text, /Why a GET does not sign in\.\*\* Mail scanners/, 'why a GET does not');
    t.match(text, /\*\*always the same 202\*\*/);
    t.match(text, /5 per address and 20 per client \(its IP address\) per 15 minutes/, 'the sign-in limits');
    t.match(text, /\*\*30 minutes unused\*\* \(idle timeout\), \*\*12 hours after sign-in\*\*/, 'the timeouts as configured');
    t.match(text, /## The Origin rule/);
    t.match(text, /403 `forbidden_origin`/);
    t.match(text, /`hrs_pat_`, 43 base62 characters and a 6-character checksum/, 'the value\'s prefix');
    t.match(text, /\*\*shown once\*\*/);
    t.match(text, /At most \*\*5 active tokens\*\*/);
    t.match(text, /\*\*1 to 366 days\*\* from now .*\*\*90 days\*\* when none is given/);
    t.match(text, /\/portal\/#reveal=<secret>`, valid for \*\*7 days\*\*/, 'reveal links, as configured');
    t.match(text, /\]\(\/v2\/doc\/\)/, 'links the export v2 reference');
    t.match(text, /reminders 30 days and 7 days before/);
    t.notMatch(text, /\/admin\/v1\/personal-tokens/, 'the admin API is not part of it');
  });

  t.test('every example validates against its schema; request examples pass the API\'s own schemas', async (t) => {
    const count = checkExamples(t, document, check);
    t.ok(count > 40, `${count} examples checked`);

    const requests: [string, string, z.ZodType][] = [
      ['/portal/v1/sign-in', 'post', signInRequestSchema],
      ['/portal/v1/session', 'post', sessionRequestSchema],
      ['/portal/v1/tokens', 'post', newTokenRequestSchema],
      ['/portal/v1/tokens/{id}', 'patch', tokenExpiryRequestSchema],
      ['/portal/v1/reveal', 'post', revealRequestSchema],
      ['/portal/v1/webhooks', 'post', newWebhookSchema],
      ['/portal/v1/webhooks/{id}', 'patch', webhookPatchSchema],
    ];
    for (const [path, method, schema] of requests) {
      const examples = document.paths[path][method].requestBody.content['application/json'].examples as Record<string, Json>;
      t.ok(Object.keys(examples).length > 0, `${method} ${path}: request examples`);
      for (const [name, ex] of Object.entries(examples)) t.ok(schema.safeParse(ex.value).success, `${method} ${path} example ${name} passes the API's schema`);
    }
    const created = example('POST', '/portal/v1/tokens', 201, 'created');
    t.equal(isWellFormedToken(created.value), 'export_v2', 'the example value is a well-formed personal token value');
    t.equal(created.token.hint, created.value.slice(-4), 'its hint is its last four characters');
    // The checks can fail.
    t.not(check(['components', 'schemas', 'PersonalToken'], { ...created.token, value: created.value }), null, 'a listed token never has a value');
    t.not(check(['components', 'schemas', 'CreatedToken'], { ...created, value: 'hrs_exp1_abc' }), null, 'another prefix is refused');
    t.not(check(['components', 'schemas', 'NewTokenRequest'], { name: 'x', scope: 'all' }), null, 'an unknown field is refused');
    t.not(check(['components', 'headers', 'Set-Cookie-Session', 'schema'], 'hrs_portal=abc; Path=/; SameSite=Lax'), null, 'a cookie without the flags is refused');
  });

  t.test('real answers: sign-in, the session, the tokens, sign-out, as documented', async (t) => {
    const c = client();
    const signIn = '/portal/v1/sign-in';
    const known = await conforms(t, 'POST', signIn, await c.call('POST', signIn, { email: 'alice@example.org' }), 202, signInAcceptedSchema);
    t.same(known, example('POST', signIn, 202, 'accepted'), 'the documented answer');
    t.same(await conforms(t, 'POST', signIn, await c.call('POST', signIn, { email: 'nobody@example.org' }), 202), known, 'the same for any address');
    t.same(await conforms(t, 'POST', signIn, await c.call('POST', signIn, { email: 'alice' }), 400, portalProblemSchema), example('POST', signIn, 400, 'not_an_address'));
    t.same(
      await conforms(t, 'POST', signIn, await c.call('POST', signIn, { email: 'alice@example.org', name: 'Alice' }), 400),
      example('POST', signIn, 400, 'unknown_field'),
    );
    t.same(await conforms(t, 'POST', signIn, await c.call('POST', signIn, '', { 'Content-Type': 'application/json' }), 400), example('POST', signIn, 400, 'empty'));
    t.same(await conforms(t, 'POST', signIn, await c.call('POST', signIn, '{"email": '), 400), example('POST', signIn, 400, 'malformed'));
    t.same(await conforms(t, 'POST', signIn, await c.call('POST', signIn, 'x', { 'Content-Type': 'text/plain' }), 415), example('POST', signIn, 415, 'not_json'));
    t.match(await conforms(t, 'POST', signIn, await c.call('POST', signIn, { email: 'alice@example.org' }, { Origin: 'https://elsewhere.example' }), 403), {
      code: 'forbidden_origin',
    });

    const session = '/portal/v1/session';
    t.same(await conforms(t, 'GET', session, await c.call('GET', session), 401), example('GET', session, 401, 'not_signed_in'), 'not signed in: the documented 401');
    t.same(await conforms(t, 'POST', session, await c.call('POST', session, { token: 'abc' }), 400), example('POST', session, 400, 'not_a_token'));
    const secret = await signInLink(p);
    const bare = await fetch(`${p.url}${session}`, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify({ token: secret }) });
    t.match(await conforms(t, 'POST', session, bare, 403), { code: 'forbidden_origin', detail: /must carry an Origin header/ }, 'no Origin: 403, the link not spent');
    const opened = await c.call('POST', session, { token: secret });
    t.same(await conforms(t, 'POST', session, opened, 201, sessionSchema), { user: { id: 'alice', email: 'alice@example.org', name: null } });
    t.ok(c.cookie, 'the cookie is kept');
    t.same(await conforms(t, 'POST', session, await client().call('POST', session, { token: secret }), 410), example('POST', session, 410, 'link_gone'), 'spent: 410');
    t.same(await conforms(t, 'GET', session, await c.call('GET', session), 200), {
      user: { id: 'alice', email: 'alice@example.org', name: null },
      roles: { admin: false, operators: [], originators: [] },
    }, 'the account and its roles (none)');
    const state = '/portal/v1/session/state';
    t.same(await conforms(t, 'GET', state, await c.call('GET', state), 200, sessionStateSchema), {
      signed_in: true,
      user: { id: 'alice', email: 'alice@example.org', name: null },
      roles: { admin: false, operators: [], originators: [] },
    }, 'the probe, signed in');
    t.same(await conforms(t, 'GET', state, await client().call('GET', state), 200, sessionStateSchema), { signed_in: false }, 'the probe, not signed in: a 200 too');

    const tokens = '/portal/v1/tokens';
    const listed = await conforms(t, 'GET', tokens, await c.call('GET', tokens), 200, tokenListSchema);
    t.same(listed.limits, example('GET', tokens, 200, 'tokens').limits, 'the documented limits');
    t.match(listed.tokens, [{ name: 'laptop', state: 'active', hint: null }], 'the fixture\'s token (no hint: loaded from a registry file)');
    const created = await conforms(t, 'POST', tokens, await c.call('POST', tokens, { name: 'docs' }), 201, createdTokenSchema);
    t.equal(isWellFormedToken(created.value), 'export_v2', 'a personal token value');
    t.equal((await get(`${p.url}/v2/fuel-type`, created.value)).status, 200, 'it works on export v2');
    t.same(await conforms(t, 'POST', tokens, await c.call('POST', tokens, { name: '  ' }), 400), example('POST', tokens, 400, 'empty_name'));
    t.same(
      await conforms(t, 'POST', tokens, await c.call('POST', tokens, { name: 'x', expires_at: '1 March 2027' }), 400),
      example('POST', tokens, 400, 'bad_date'),
    );
    t.match(
      await conforms(t, 'POST', tokens, await c.call('POST', tokens, { name: 'x', expires_at: new Date(Date.now() + 400 * 86_400_000).toISOString() }), 400),
      { code: 'token_rule', detail: /at most 366 days/ },
    );
    t.match(await conforms(t, 'POST', tokens, await c.call('POST', tokens, { name: 'x' }, { Origin: 'https://elsewhere.example' }), 403), { code: 'forbidden_origin' });
    const big = JSON.stringify({ name: 'x'.repeat(p.parts.config.maxBodyBytes) });
    t.same(await conforms(t, 'POST', tokens, await c.call('POST', tokens, big), 413), example('POST', tokens, 413, 'too_large'));
    for (let i = 2; i < MAX_ACTIVE_PERSONAL_TOKENS; i++) await conforms(t, 'POST', tokens, await c.call('POST', tokens, { name: `t${i}` }), 201);
    t.same(await conforms(t, 'POST', tokens, await c.call('POST', tokens, { name: 'sixth' }), 409), example('POST', tokens, 409, 'too_many'), 'the sixth: 409');

    const one = '/portal/v1/tokens/{id}';
    const later = new Date(Date.now() + 200 * 86_400_000).toISOString();
    const changed = await conforms(t, 'PATCH', one, await c.call('PATCH', `${tokens}/${created.token.id}`, { expires_at: later }), 200, tokenAnswerSchema);
    t.equal(changed.token.expires_at, later);
    t.same(await conforms(t, 'PATCH', one, await c.call('PATCH', `${tokens}/${created.token.id}`, {}), 400), example('PATCH', one, 400, 'no_expiry'));
    t.same(await conforms(t, 'PATCH', one, await c.call('PATCH', `${tokens}/999999`, { expires_at: later }), 404), example('PATCH', one, 404, 'no_such_token'));
    t.same(await conforms(t, 'PATCH', one, await c.call('PATCH', `${tokens}/abc`, { expires_at: later }), 404), example('PATCH', one, 404, 'not_found'));

    const revoke = '/portal/v1/tokens/{id}/revoke';
    const revoked = await conforms(t, 'POST', revoke, await c.call('POST', `${tokens}/${created.token.id}/revoke`), 200, tokenAnswerSchema);
    t.match(revoked.token, { id: created.token.id, state: 'revoked', revoked_at: String });
    t.same(await conforms(t, 'POST', revoke, await c.call('POST', `${tokens}/${created.token.id}/revoke`), 200), revoked, 'again: the same answer');
    t.equal((await get(`${p.url}/v2/fuel-type`, created.value)).status, 401, 'refused on export v2 at once');
    t.same(await conforms(t, 'PATCH', one, await c.call('PATCH', `${tokens}/${created.token.id}`, { expires_at: later }), 409), example('PATCH', one, 409, 'revoked'));
    t.same(await conforms(t, 'POST', revoke, await c.call('POST', `${tokens}/999999/revoke`), 404), example('POST', revoke, 404, 'not_found'));
    t.match(await conforms(t, 'POST', revoke, await c.call('POST', `${tokens}/${created.token.id}/revoke`, undefined, { Origin: '' }), 403), { code: 'forbidden_origin' });
    await p.sql`UPDATE tokens SET expires_at = clock_timestamp() - interval '1 second' WHERE id = ${listed.tokens[0].id}::bigint`;
    t.same(await conforms(t, 'PATCH', one, await c.call('PATCH', `${tokens}/${listed.tokens[0].id}`, { expires_at: later }), 409), example('PATCH', one, 409, 'expired'));
    const states = (await conforms(t, 'GET', tokens, await c.call('GET', tokens), 200)).tokens.map((tk: Json) => tk.state);
    t.same(states.sort(), ['active', 'active', 'active', 'expired', 'revoked'], 'revoked and expired ones stay listed');

    t.match(await conforms(t, 'DELETE', session, await c.call('DELETE', session, undefined, { Origin: 'https://elsewhere.example' }), 403), { code: 'forbidden_origin' });
    const cookie = c.cookie!;
    await conforms(t, 'DELETE', session, await c.call('DELETE', session), 204);
    t.equal(c.cookie, undefined, 'the cookie is cleared');
    t.same(await conforms(t, 'GET', session, await fetch(`${p.url}${session}`, { headers: { Cookie: cookie } }), 401), example('GET', session, 401, 'not_signed_in'), 'the old cookie is refused');
    t.match(await conforms(t, 'DELETE', session, await c.call('DELETE', session, undefined, { Cookie: cookie }), 401), { code: 'not_authenticated' });
    t.match(await conforms(t, 'GET', tokens, await c.call('GET', tokens), 401), { code: 'not_authenticated' });
  });

  t.test('real answers: the reveal link, its 409, 410 and a deactivated account\'s 403', async (t) => {
    const reveal = '/portal/v1/reveal';
    const c = client();
    t.same(await conforms(t, 'POST', reveal, await c.call('POST', reveal, { secret: 'abc' }), 400), example('POST', reveal, 400, 'not_a_secret'));
    t.same(await conforms(t, 'POST', reveal, await c.call('POST', reveal, { secret: newSecret() }), 410), example('POST', reveal, 410, 'link_gone'), 'no such link: 410');
    const secret = await revealLink(p, 'alice', 'research');
    t.match(await conforms(t, 'POST', reveal, await c.call('POST', reveal, { secret }, { Origin: 'https://elsewhere.example' }), 403), { code: 'forbidden_origin' });
    // Alice has five active tokens (the test before): 409, and the link is not spent.
    const active = await p.sql<{ n: number }[]>`SELECT count(*)::int AS n FROM tokens WHERE user_id = 'alice' AND revoked_at IS NULL AND expires_at > now()`;
    const free = MAX_ACTIVE_PERSONAL_TOKENS - active[0]!.n;
    for (let i = 0; i < free; i++) {
      const tokenId = newSecret();
      await p.sql`INSERT INTO tokens (generation, user_id, name, hash, expires_at) VALUES ('export_v2', 'alice', 'filler', ${hashSecret(tokenId)}, now() + interval '30 days')`;
    }
    t.same(await conforms(t, 'POST', reveal, await c.call('POST', reveal, { secret }), 409), example('POST', reveal, 409, 'too_many'));
    await p.sql`UPDATE tokens SET revoked_at = now() WHERE user_id = 'alice' AND name = ${'filler'}`;
    const shown = await conforms(t, 'POST', reveal, await c.call('POST', reveal, { secret }), 201, createdTokenSchema);
    t.match(shown, { token: { name: 'research', state: 'active' }, value: /^hrs_pat_/ });
    t.equal((await get(`${p.url}/v2/fuel-type`, shown.value)).status, 200, 'it works on export v2');
    t.same(await conforms(t, 'POST', reveal, await c.call('POST', reveal, { secret }), 410), example('POST', reveal, 410, 'link_gone'), 'used: 410');

    const admin = (path: string, body?: unknown) =>
      fetch(`${p.url}${path}`, { method: 'POST', headers: { Authorization: `Bearer ${ADMIN_TOKEN}`, 'Content-Type': 'application/json' }, body: body === undefined ? undefined : JSON.stringify(body) });
    t.equal((await admin('/admin/v1/users', { email: 'dana@example.org' })).status, 201);
    const dana = await revealLink(p, 'dana@example.org', 'research');
    t.equal((await admin('/admin/v1/users/dana@example.org/deactivate')).status, 200);
    t.same(await conforms(t, 'POST', reveal, await c.call('POST', reveal, { secret: dana }), 403), example('POST', reveal, 403, 'deactivated'));
  });

  t.test('429s: sign-in per address, failed authentications per client; the timeouts as configured', async (t) => {
    const q = await startTestPlatform(t, { fixture: baseFixture(), env: { PORTAL_SESSION_IDLE: '600', PORTAL_SESSION_MAX: '7200', REVEAL_LINK_TTL: '86400' } });
    const doc = (await (await fetch(`${q.url}/portal/v1/doc/schema`)).json()) as Json;
    t.match(doc.info.description, /\*\*10 minutes unused\*\* \(idle timeout\), \*\*2 hours after sign-in\*\*/, 'the configured timeouts');
    t.match(doc.info.description, /valid for \*\*1 day\*\*/, 'the configured reveal link');
    t.match(doc.components.headers['Set-Cookie-Session'].schema.examples[0], /Max-Age=7200; Secure$/);
    const c = client(q);
    const opened = await c.call('POST', '/portal/v1/session', { token: await signInLink(q) });
    t.match(opened.headers.get('set-cookie'), /Max-Age=7200$/, 'the cookie lasts the configured maximum');
    await opened.arrayBuffer();

    const signIn = '/portal/v1/sign-in';
    for (let i = 0; i < 5; i++) await conforms(t, 'POST', signIn, await c.call('POST', signIn, { email: 'bob@example.org' }), 202);
    const limited = await conforms(t, 'POST', signIn, await c.call('POST', signIn, { email: 'bob@example.org' }), 429);
    t.match(limited, { code: 'throttled', detail: /^Too many sign-in requests for this address: try again in \d+ seconds/ });

    // Failed authentications: the address's failures are refused for a while; a valid cookie still passes.
    const nobody = client(q);
    for (let i = 0; i < 30; i++) await (await nobody.call('GET', '/portal/v1/session')).arrayBuffer();
    await conforms(t, 'GET', '/portal/v1/session', await c.call('GET', '/portal/v1/session'), 200);
    const refused = await conforms(t, 'GET', '/portal/v1/session', await nobody.call('GET', '/portal/v1/session'), 429);
    t.match(refused, { code: 'throttled', detail: /failed authentications per minute per client address/ });
    t.equal(refused.detail.replace(/\d+ seconds?/, 'N seconds'), deref(doc.components.responses.TooManyFailures).content['application/problem+json'].examples.failures.value.detail.replace(/\d+ seconds?/, 'N seconds'));
  });

  t.test('operator staff and originator managers: real answers of every operation, as documented', async (t) => {
    const q = await startTestPlatform(t, { fixture: portalFixture() });
    await grantPortalRoles(q);
    const secretOf = async (user: string) => {
      const c = client(q);
      await (await c.call('POST', '/portal/v1/session', { token: await signInLink(q, user) })).arrayBuffer();
      return c;
    };
    const staff = await secretOf(ACCOUNTS.staff);
    const manager = await secretOf(ACCOUNTS.manager);
    /** Calls `template` with its parameters filled in and checks the answer against the operation. */
    const hit = async (c: ReturnType<typeof client>, method: string, template: string, params: Record<string, string>, expected: number, body?: unknown, headers?: Record<string, string>) => {
      const path = template.replace(/\{(\w+)\}/g, (_, name: string) => params[name]!);
      return conforms(t, method, template, await c.call(method, path, body, headers), expected);
    };
    const berla = { hrs_id: 'BERLA' };
    const S = '/portal/v1/stations';
    await hit(staff, 'GET', S, {}, 200);
    const record = await hit(staff, 'GET', `${S}/{hrs_id}`, berla, 200);
    t.match(await hit(staff, 'GET', `${S}/{hrs_id}`, { hrs_id: 'KIELX' }, 403), { code: 'forbidden', detail: /operator "north-h2"/ });
    t.match(await hit(staff, 'GET', `${S}/{hrs_id}`, { hrs_id: 'NONEX' }, 404), { code: 'not_found' });
    const { hrs_id: _h, operator: _o, photo: _p, static_modified_at: _s, ...fields } = record;
    await hit(staff, 'PUT', `${S}/{hrs_id}`, berla, 200, { ...fields, name: 'Berlin BER' });
    await hit(staff, 'PUT', `${S}/{hrs_id}`, berla, 400, { ...fields, opening_hours: 'Mo-Fr 25:00' });
    await hit(staff, 'PUT', `${S}/{hrs_id}`, berla, 422, { ...fields, v1_fuel_types: ['700car'] });
    await hit(staff, 'PUT', `${S}/{hrs_id}`, berla, 403, { ...fields }, { Origin: 'https://elsewhere.example' });
    const layouts = await hit(staff, 'GET', `${S}/{hrs_id}/layout`, berla, 200);
    const draft = { ...layouts.confirmed.layout, products: layouts.confirmed.layout.products.slice(0, 1) };
    await hit(staff, 'GET', `${S}/{hrs_id}/layout/diff`, berla, 404);
    await hit(staff, 'PUT', `${S}/{hrs_id}/layout/draft`, berla, 200, draft);
    await hit(staff, 'PUT', `${S}/{hrs_id}/layout/draft`, berla, 400, { dispensers: 'D1' });
    await hit(staff, 'GET', `${S}/{hrs_id}/layout/diff`, berla, 200);
    await hit(staff, 'POST', `${S}/{hrs_id}/layout/confirm`, berla, 409, { expected_version: 7 });
    const confirmed = await hit(staff, 'POST', `${S}/{hrs_id}/layout/confirm`, berla, 200, { expected_version: 1 });
    t.same(confirmed.diff.products.removed, ['P350']);
    await hit(staff, 'POST', `${S}/{hrs_id}/layout/confirm`, berla, 409);
    await hit(staff, 'PUT', `${S}/{hrs_id}/layout/draft`, berla, 200, draft);
    await hit(staff, 'DELETE', `${S}/{hrs_id}/layout/draft`, berla, 204);
    await hit(staff, 'DELETE', `${S}/{hrs_id}/layout/draft`, berla, 404);

    await hit(staff, 'GET', `${S}/{hrs_id}/events`, berla, 200);
    const later = new Date(Date.now() + 86_400_000).toISOString();
    const event = await hit(staff, 'POST', `${S}/{hrs_id}/events`, berla, 201, { kind: 'maintenance', starts_at: later });
    await hit(staff, 'POST', `${S}/{hrs_id}/events`, berla, 409, { id: event.id, kind: 'maintenance', starts_at: later });
    await hit(staff, 'POST', `${S}/{hrs_id}/events`, berla, 400, { kind: 'party', starts_at: later });
    await hit(staff, 'PATCH', `${S}/{hrs_id}/events/{event_id}`, { ...berla, event_id: event.id }, 200, { description: 'Compressor swap' });
    await hit(staff, 'PATCH', `${S}/{hrs_id}/events/{event_id}`, { ...berla, event_id: 'ev-none' }, 404, { description: 'x' });
    await hit(staff, 'POST', `${S}/{hrs_id}/events/{event_id}/end`, { ...berla, event_id: event.id }, 409);
    const running = await hit(staff, 'POST', `${S}/{hrs_id}/events`, berla, 201, { kind: 'limited-service', starts_at: new Date(Date.now() - 60_000).toISOString() });
    await hit(staff, 'POST', `${S}/{hrs_id}/events/{event_id}/end`, { ...berla, event_id: running.id }, 200);
    const O = '/portal/v1/operators/{operator_id}';
    await hit(staff, 'POST', `${O}/events`, { operator_id: 'h2-demo' }, 201, { kind: 'maintenance', starts_at: later, description: 'Network-wide update' });
    await hit(staff, 'POST', `${O}/events`, { operator_id: 'h2-demo' }, 422, { kind: 'maintenance', starts_at: later, hrs_ids: ['KIELX'] });
    await hit(staff, 'POST', `${O}/events`, { operator_id: 'north-h2' }, 403, { kind: 'maintenance', starts_at: later });

    const png = await sharp({ create: { width: 2, height: 2, channels: 3, background: '#0a0' } }).png().toBuffer();
    await hit(staff, 'GET', `${S}/{hrs_id}/photo`, berla, 404);
    await conforms(t, 'PUT', `${S}/{hrs_id}/photo`, await staff.call('PUT', `${S}/BERLA/photo`, png.subarray(0, 8) as unknown as string, { 'Content-Type': 'image/png' }), 422);
    const put = await staff.call('PUT', `${S}/BERLA/photo`, png as unknown as string, { 'Content-Type': 'image/png' });
    await conforms(t, 'PUT', `${S}/{hrs_id}/photo`, put, 200);
    await conforms(t, 'PUT', `${S}/{hrs_id}/photo`, await staff.call('PUT', `${S}/BERLA/photo`, 'GIF89a', { 'Content-Type': 'image/gif' }), 415);
    const photo = await staff.call('GET', `${S}/BERLA/photo`);
    t.equal(photo.headers.get('content-type'), 'image/png');
    t.equal(photo.headers.get('x-content-type-options'), 'nosniff');
    t.equal((await sharp(Buffer.from(await photo.arrayBuffer())).metadata()).width, 2);
    await hit(staff, 'DELETE', `${S}/{hrs_id}/photo`, berla, 204);

    await hit(staff, 'GET', `${S}/{hrs_id}/assignments`, berla, 200);
    const A = `${S}/{hrs_id}/assignments/{originator_id}/{signal_type}`;
    await hit(staff, 'PUT', A, { ...berla, originator_id: 'mon-1', signal_type: 'pricing' }, 200, { state: 'live' });
    await hit(staff, 'PUT', A, { ...berla, originator_id: 'mon-2', signal_type: 'pricing' }, 409, { state: 'live' });
    await hit(staff, 'PUT', A, { ...berla, originator_id: 'mon-9', signal_type: 'pricing' }, 404, { state: 'live' });
    await hit(staff, 'PUT', A, { ...berla, originator_id: 'mon-2', signal_type: 'v1' }, 200, { state: 'inactive' });
    await hit(staff, 'PUT', A, { ...berla, originator_id: 'mon-2', signal_type: 'usage' }, 400, { state: 'on' });
    const audit = await hit(staff, 'GET', `${S}/{hrs_id}/audit`, { ...berla }, 200);
    t.ok(audit.entries.length > 5, 'the station\'s changes');
    await hit(staff, 'GET', `${O}/audit`, { operator_id: 'h2-demo' }, 200);
    // The forecast: the history's 503 until an hour is published, then export v2's body.
    await hit(staff, 'GET', `${S}/{hrs_id}/forecast`, berla, 503);
    await publishHistory(q);
    t.equal((await hit(staff, 'GET', `${S}/{hrs_id}/forecast`, berla, 200)).hrs_id, 'BERLA');
    await hit(staff, 'GET', `${S}/{hrs_id}/forecast`, { hrs_id: 'KIELX' }, 403);
    await hit(staff, 'GET', `${S}/{hrs_id}/forecast`, { hrs_id: 'NONEX' }, 404);

    const R = '/portal/v1/originators';
    const mon1 = { originator_id: 'mon-1' };
    await hit(manager, 'GET', R, {}, 200);
    await hit(manager, 'GET', `${R}/{originator_id}`, mon1, 200);
    await hit(manager, 'GET', `${R}/{originator_id}`, { originator_id: 'mon-2' }, 403);
    await hit(manager, 'GET', `${S}/{hrs_id}`, berla, 403);
    await hit(manager, 'GET', `${R}/{originator_id}/tokens`, mon1, 200);
    const made = await hit(manager, 'POST', `${R}/{originator_id}/tokens`, mon1, 201, { generation: 'import_v2', name: 'prod' });
    t.equal(isWellFormedToken(made.value), 'import_v2', 'a well-formed import v2 value');
    await hit(manager, 'POST', `${R}/{originator_id}/tokens`, mon1, 400, { generation: 'export_v2', name: 'prod' });
    await hit(manager, 'POST', `${R}/{originator_id}/tokens/{token_id}/revoke`, { ...mon1, token_id: made.token.id }, 200);
    await hit(manager, 'POST', `${R}/{originator_id}/tokens/{token_id}/revoke`, { ...mon1, token_id: '999999' }, 404);
    await hit(manager, 'GET', `${R}/{originator_id}/call-logs`, mon1, 200);
    await hit(manager, 'GET', `${R}/{originator_id}/call-logs?limit=0`.replace('?limit=0', ''), mon1, 200);
    t.match(await conforms(t, 'GET', `${R}/{originator_id}/call-logs`, await manager.call('GET', `${R}/mon-1/call-logs?limit=0`), 400), { code: 'invalid_query' });
  });
});

t.test('index-page', async (t) => {
  /**
   * `GET /`: an index of the service's pages, JSON by default and HTML for a browser, every link of it
   * answering on the running platform, no credential needed. The tests read one platform, started once
   * for them (none of them changes anything); PUBLIC_MAP=false needs one of its own.
   */
  let p: TestPlatform;
  t.before(async () => {
    p = await startTestPlatform(t);
  });

  t.test('GET / lists the pages as JSON, each link answering', async (t) => {
    const res = await fetch(`${p.url}/`);
    t.equal(res.status, 200);
    t.match(res.headers.get('content-type'), /^application\/json/);
    t.equal(res.headers.get('vary'), 'Accept');
    const body = (await res.json()) as { version: string; pages: { rel: string; href: string; auth: string }[] };
    t.equal(body.version, VERSION);
    const hrefs = Object.fromEntries(body.pages.map((page) => [page.rel, page.href]));
    t.same(hrefs, {
      portal: `${p.url}/portal/`,
      export_v2_doc: `${p.url}/v2/doc/`,
      import_v2_doc: `${p.url}/import/v2/doc/`,
      'import_v1.1_doc': `${p.url}/import/v1.1/doc/`,
      import_v1_doc: `${p.url}/import/v1/doc/`,
      'export_v1.1_doc': `${p.url}/v1.1/doc/`,
      export_v1_doc: `${p.url}/v1/doc/`,
      portal_doc: `${p.url}/portal/v1/doc/`,
      admin: `${p.url}/admin/`,
      healthz: `${p.url}/healthz`,
      readyz: `${p.url}/readyz`,
      metrics: `${p.url}/metrics`,
      status_stream: `${p.url.replace('http:', 'ws:')}/v2/hrs/status/stream`,
    });
    for (const page of body.pages) {
      const answer = await fetch(page.href.replace(/^ws:/, 'http:'));
      // The two that take a credential exist and ask for it; the others are public.
      const expected = page.rel === 'metrics' || page.rel === 'status_stream' ? 401 : 200;
      t.equal(answer.status, expected, `${page.rel} answers ${expected}`);
    }
  });

  const BROWSER_ACCEPT = 'text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8';

  t.test('a browser gets the same index as HTML at /developers/ ("For developers")', async (t) => {
    const res = await fetch(`${p.url}/developers/`, { headers: { Accept: BROWSER_ACCEPT } });
    t.equal(res.status, 200);
    t.match(res.headers.get('content-type'), /^text\/html/);
    const html = await res.text();
    for (const path of ['/portal/', '/v2/doc/', '/import/v2/doc/', '/portal/v1/doc/', '/admin/', '/healthz', '/readyz', '/metrics']) {
      t.match(html, `<a href="${p.url}${path}">`, path);
    }
    t.match(html, `<a href="${p.url}/portal/">Portal: API tokens, stations and originators</a>`, 'a link is named by what it leads to');
    t.match(html, '<meta name="viewport" content="width=device-width, initial-scale=1">', 'laid out for a phone\'s width');
    t.match(html, '/v2/hrs/status/stream');
    t.match(html, '<a class="button button-ghost" href="/">Station map</a>', 'it links back to the map');
    t.match(html, '<link rel="stylesheet" href="/portal/portal.css">', 'styled like the portal');
    t.match(res.headers.get('content-security-policy'), /default-src 'none'/, 'under the pages\' strict policy');
    const slashless = await fetch(`${p.url}/developers`, { redirect: 'manual' });
    t.same([slashless.status, slashless.headers.get('location')], [308, '/developers/'], '/developers leads to the page');
  });

  t.test('a browser at / gets the public map; with PUBLIC_MAP=false the "For developers" page; JSON unchanged either way', async (t) => {
    const map = await fetch(`${p.url}/`, { headers: { Accept: BROWSER_ACCEPT } });
    t.equal(map.status, 200);
    t.match(await map.text(), '<script type="module" src="/map/app.js"></script>', 'the map page');
    t.match(map.headers.get('content-security-policy'), /worker-src 'self'/, 'with MapLibre\'s worker allowed');
    t.equal(map.headers.get('vary'), 'Accept, Accept-Encoding');
    t.equal((await fetch(`${p.url}/map/app.js`)).status, 200, 'its files are served');

    const off = await startTestPlatform(t, { env: { PUBLIC_MAP: 'false' } });
    const developers = await fetch(`${off.url}/`, { headers: { Accept: BROWSER_ACCEPT } });
    const html = await developers.text();
    t.match(html, '<p class="subtitle">For developers</p>', 'PUBLIC_MAP=false: the "For developers" page at /');
    t.notMatch(html, 'Station map', 'with no link to a map that is not there');
    for (const path of ['/map/app.js', '/map/v1/config', '/map/v1/basemap.geojson', '/map/vendor/maplibre-gl.mjs']) {
      t.equal((await fetch(`${off.url}${path}`)).status, 404, `PUBLIC_MAP=false: no ${path}`);
    }
    const [on, offJson] = await Promise.all([fetch(`${p.url}/`), fetch(`${off.url}/`)]);
    t.same(
      (await on.text()).replaceAll(p.url, 'BASE').replaceAll(p.url.replace('http:', 'ws:'), 'WSBASE'),
      (await offJson.text()).replaceAll(off.url, 'BASE').replaceAll(off.url.replace('http:', 'ws:'), 'WSBASE'),
      'the JSON answer does not depend on the map',
    );
  });

  t.test('HTML only when text/html ranks above JSON', async (t) => {
    t.equal(prefersHtml(undefined), false);
    t.equal(prefersHtml('*/*'), false);
    t.equal(prefersHtml('application/json'), false);
    t.equal(prefersHtml('text/html'), true);
    t.equal(prefersHtml('text/*'), true);
    t.equal(prefersHtml('text/html;q=0.5, application/json'), false);
    t.equal(prefersHtml('application/json;q=0.5, text/html'), true);
    t.equal(prefersHtml('text/html, application/json'), false, 'a tie is JSON');
  });
});

t.test('v1-deprecation', async (t) => {
  /**
   * Generation v1 is deprecated (spec, Versioning): every response of export v1 and import v1 —
   * successes, errors, refusals before authentication, unknown paths, preflights, documents — carries
   * `Deprecation` (RFC 9745, a structured-field date) and a `Link` to the v1.1 reference; v1.1 and v2
   * responses do not; the OpenAPI documents mark every v1 operation deprecated and document both headers.
   */
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
});

t.test('readme-urls', async (t) => {
  /**
   * The README's addresses on a platform holding the demo's registry: every address of the platform it
   * names (links, prose, inline paths and commands alike) is a registered route, every page it sends a browser to
   * answers 200, and every `curl` it gives answers as the README says (2xx, or the status its comment
   * names), the export v1.1 sandbox on as in the demo.
   */
  const readme = readFileSync(new URL('../../README.md', import.meta.url), 'utf8');
  const lines = readme.split('\n');

  let server: HttpServer | undefined;
  const p = await startTestPlatform(t, { env: { ADMIN_TOKEN: DEMO_ADMIN_TOKEN, SANDBOX: 'on' }, fixture: demoFixture(), routes: (s) => void (server = s) });

  /** Whether a route's pattern (`:name` a segment) takes a path. */
  const takes = (route: RouteInfo, path: string) => new RegExp(`^${route.path.replace(/[.*+?^${}()|[\]\\]/g, '\\$&').replace(/:[a-z_]+/g, '[^/]+')}$`).test(path);

  t.test('every address of the platform in the README is a route', async (t) => {
    const routes = server!.routes();
    const urls = platformUrlsOf(readme, ['127.0.0.1:8080', 'localhost:8080']);
    t.ok(urls.length >= 20, `addresses checked: ${urls.length}`);
    const posted = new Set(commandsOf(readme).filter((c) => c.words[0] === 'curl' && c.words.includes('-d')).map((c) => c.words.at(-1)));
    for (const { url, line } of urls) {
      const method = posted.has(url.href) ? 'POST' : 'GET';
      t.ok(routes.some((r) => r.method === method && takes(r, url.pathname)), `line ${line}: ${method} ${url.pathname}`);
    }
  });

  t.test('every path of the platform the README names in its text is a route', async (t) => {
    // A route's pattern with each `:name` given a value, so that a named path (`/admin/v1/…`) can match it.
    const routes = server!.routes().map((r) => ({ method: r.method, path: r.path.replace(/:[a-z_]+/g, 'x') }));
    const paths = platformPathsOf(readme);
    t.ok(paths.length >= 10, `paths checked: ${paths.length}`);
    for (const { text, method, pattern, line } of paths) {
      t.ok(routes.some((r) => (method === undefined || r.method === method) && pattern.test(r.path)), `line ${line}: ${text}`);
    }
  });

  t.test('every page the README sends a browser to answers 200', async (t) => {
    const curled = new Set(commandsOf(readme).filter((c) => c.words[0] === 'curl').map((c) => c.words.at(-1)));
    const pages = platformUrlsOf(readme, ['127.0.0.1:8080', 'localhost:8080']).filter(({ url }) => url.protocol === 'http:' && !curled.has(url.href));
    t.ok(pages.length >= 8, `pages opened: ${pages.length}`);
    for (const { url, line } of pages) {
      const res = await fetch(`${p.url}${url.pathname}${url.search}`, { headers: { Accept: 'text/html' } });
      await res.arrayBuffer();
      t.equal(res.status, 200, `line ${line}: ${url.pathname}`);
    }
  });

  t.test('every curl of the README answers as it says', async (t) => {
    const curls = commandsOf(readme).filter((c) => c.words[0] === 'curl');
    t.ok(curls.length >= 10, `curls run: ${curls.length}`);
    for (const { words, line } of curls) {
      const headers: Record<string, string> = {};
      let body: string | undefined;
      let address = '';
      for (let i = 1; i < words.length; i += 1) {
        if (words[i] === '-H') {
          const [name, ...value] = words[(i += 1)]!.split(': ');
          headers[name!] = value.join(': ');
        } else if (words[i] === '-d') body = words[(i += 1)]!.replaceAll('$(date -u +%FT%TZ)', new Date().toISOString().replace(/\.\d+Z$/, 'Z'));
        else if (/^https?:/.test(words[i]!)) address = words[i]!;
      }
      const url = new URL(address);
      const res = await fetch(`${p.url}${url.pathname}${url.search}`, { method: body === undefined ? 'GET' : 'POST', headers, ...(body === undefined ? {} : { body }) });
      await res.arrayBuffer();
      // The status the comment on the address's line names (`# 401: says why`), else a success.
      const own = lines.slice(line - 1).find((l) => l.includes(address)) ?? '';
      const named = /\s#\s*(\d{3})\b/.exec(own)?.[1];
      if (named) t.equal(res.status, Number(named), `line ${line}: ${url.pathname}${url.search} answers ${named}, as the README says`);
      else t.ok(res.status >= 200 && res.status < 300, `line ${line}: ${url.pathname}${url.search} answers ${res.status}`);
    }
  });
});
