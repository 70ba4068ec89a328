/**
 * The import v1 and v1.1 OpenAPI documents and reference pages: valid OpenAPI 3.1 generated from the
 * domain's zod schemas, exactly the families' routes, what they say (messages, vocabulary, partial
 * acceptance, states, the shared rate limit, deprecation, the successor), every example valid, and
 * real answers of the running platform as documented.
 */
import t, { type Test } from 'tap';
import { Validator } from '@seriousme/openapi-schema-validator';
import type { z } from 'zod';
import { IMPORT_V1 } from '../../src/api/import-v1/index.js';
import { IMPORT_V11 } from '../../src/api/import-v1.1/index.js';
import { legacyImportDocument } from '../../src/api/legacy-import/docs/document.js';
import { componentSchemas, buildDocument, openApiPath, type DocContext, type DocDefinition, type Route } from '../../src/http/openapi.js';
import { serviceVersion } from '../../src/api/docs/routes.js';
import { docSites } from '../helpers/docs.js';
import { V1_MESSAGES } from '../../src/domain/import-v1/messages.js';
import { V1_TO_CANONICAL } from '../../src/domain/import-v1/options.js';
import {
  v11ActiveStationsSchema,
  v1FieldErrorsSchema,
  v1NonFieldErrorsSchema,
  V1_SCHEMAS,
  v1ValidationErrorListSchema,
} from '../../src/domain/import-v1/schemas.js';
import { detailSchema } from '../../src/domain/import-v2/schemas.js';
import type { HttpServer } from '../../src/http/server.js';
import { baseFixture, TOKENS } from '../helpers/fixtures.js';
import { get, startTestPlatform } from '../helpers/platform.js';
import { checkExamples, deref, documentAjv } from '../helpers/openapi.js';

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
