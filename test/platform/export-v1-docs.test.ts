/**
 * The export v1 and v1.1 documents (`/v1/doc/`, `/v1.1/doc/`): valid OpenAPI 3.1, exactly the
 * families' routes, every example valid, the summary's states and reasons explained, and real
 * responses of a running platform valid against the documented schemas.
 */
import t, { type Test } from 'tap';
import { Validator } from '@seriousme/openapi-schema-validator';
import type { z } from 'zod';
import { exportV11Document, exportV1Document } from '../../src/api/export-legacy/docs/document.js';
import { openApiPath, type DocContext, type DocDefinition } from '../../src/http/openapi.js';
import { serviceVersion } from '../../src/api/docs/routes.js';
import { docSites, type DocSite } from '../helpers/docs.js';
import { problemSchema, v11StationListSchema, v11StationRecordSchema, v1StationListSchema, v1StationRecordSchema } from '../../src/domain/export-v1/schemas.js';
import { REASON_STATES, stationSummarySchema, SUMMARY_REASONS, SUMMARY_STATES, v1StationSummarySchema } from '../../src/domain/status/summary.js';
import type { HttpServer } from '../../src/http/server.js';
import { SANDBOX_STATIONS, SANDBOX_TOKEN } from '../../src/domain/sandbox.js';
import { legacyFixture, TOKENS } from '../helpers/fixtures.js';
import { get, startTestPlatform } from '../helpers/platform.js';
import { until } from '../helpers/wait.js';
import { checkExamples, deref, documentAjv } from '../helpers/openapi.js';

type Json = Record<string, any>;
const FAMILIES = ['export_v1', 'export_v1.1'] as const;
type Fam = (typeof FAMILIES)[number];
const PREFIX = { export_v1: '/v1/', 'export_v1.1': '/v1.1/' } as const;

/** BERLA live on v1 (a reading makes its summary real), with AFIR details. */
function fixture() {
  const f = legacyFixture();
  (f.stations[0] as Record<string, unknown>).details = { city: 'Berlin', coordinates: { lat: 52.36, lon: 13.5 }, vehicle_types: ['M1'], contact_phone_number: '+493012345678' };
  f.assignments.push({ originator: 'mon-1', hrs_id: 'BERLA', signal_type: 'v1', state: 'live' });
  return f;
}

let server: HttpServer | undefined;
const p = await startTestPlatform(t, { fixture: fixture(), routes: (s) => (server = s) });
const context: DocContext = { config: p.parts.config, reference: p.parts.reference, version: serviceVersion() };
const definitions: Record<Fam, DocDefinition> = { export_v1: exportV1Document(context), 'export_v1.1': exportV11Document(context) };
const sites = Object.fromEntries(docSites(server!).map((s) => [s.family, s])) as Record<string, DocSite>;

async function fetchDocument(family: Fam): Promise<Json> {
  const res = await fetch(`${p.url}${sites[family]!.prefix}/schema`);
  if (res.status !== 200) throw new Error(`${sites[family]!.prefix}/schema answered ${res.status}`);
  return (await res.json()) as Json;
}
const documents: Record<Fam, Json> = { export_v1: await fetchDocument('export_v1'), 'export_v1.1': await fetchDocument('export_v1.1') };

const ajvs = { export_v1: documentAjv(documents.export_v1), 'export_v1.1': documentAjv(documents['export_v1.1']) };

/** A real response against its operation: status and headers documented, the body valid by the document (Ajv) and by zod. */
async function conforms(t: Test, family: Fam, path: string, res: Response, expected: number, zodSchema?: z.ZodType): Promise<unknown> {
  t.equal(res.status, expected, `${family} GET ${path}: ${expected}`);
  const document = documents[family];
  const operation = document.paths[path]?.get;
  t.ok(operation, `GET ${path} is documented`);
  const status = String(res.status);
  const documented = operation?.responses?.[status];
  t.ok(documented, `GET ${path}: ${status} is documented`);
  const bytes = Buffer.from(await res.arrayBuffer());
  if (!operation || !documented) return undefined;
  const response = deref(document, documented);
  for (const name of Object.keys(response.headers ?? {})) t.ok(res.headers.has(name), `GET ${path} ${status}: header ${name} is sent`);
  if (!response.content) {
    t.equal(bytes.length, 0, `GET ${path} ${status}: no body, as documented`);
    return undefined;
  }
  const media = (res.headers.get('content-type') ?? '').split(';')[0]!.trim();
  t.ok(media in response.content, `GET ${path} ${status}: ${media} is documented`);
  const body = JSON.parse(bytes.toString('utf8'));
  const where =
    typeof documented.$ref === 'string'
      ? [...documented.$ref.slice(2).split('/'), 'content', media, 'schema']
      : ['paths', path, 'get', 'responses', status, 'content', media, 'schema'];
  t.equal(ajvs[family].check(where, body), null, `GET ${path} ${status}: the body validates against the document`);
  const ref = response.content[media]?.schema?.$ref as string | undefined;
  const zodSchemaOf = zodSchema ?? (ref ? definitions[family].responseSchemas[ref.split('/').pop()!] : undefined);
  t.ok(zodSchemaOf, `GET ${path} ${status}: a zod schema to check with`);
  if (zodSchemaOf) {
    const parsed = zodSchemaOf.safeParse(body);
    t.ok(parsed.success, `GET ${path} ${status}: the body parses with the zod schema${parsed.success ? '' : `: ${parsed.error.message}`}`);
  }
  return body;
}

t.test('both documents are valid OpenAPI 3.1, their schemas valid JSON Schema 2020-12, served at /v1/doc/ and /v1.1/doc/', async (t) => {
  t.equal(sites.export_v1?.prefix, '/v1/doc');
  t.equal(sites['export_v1.1']?.prefix, '/v1.1/doc');
  for (const family of FAMILIES) {
    const document = documents[family];
    const validator = new Validator();
    const result = await validator.validate(structuredClone(document));
    t.same(result.errors, undefined, `${family}: no errors`);
    t.equal(result.valid, true, `${family}: valid`);
    t.equal(validator.version, '3.1', `${family}: validated as OpenAPI 3.1`);
    for (const [name, schema] of Object.entries(document.components.schemas as Record<string, object>)) {
      t.equal(ajvs[family].ajv.validateSchema(schema), true, `${family}: schema ${name} is valid JSON Schema 2020-12`);
    }
    t.same(document.security, [{ exportV1Token: [] }], `${family}: the bearer scheme, everywhere`);
    t.match(document.components.securitySchemes.exportV1Token, { type: 'http', scheme: 'bearer' });
    t.equal(document.info.license.identifier, 'CC-BY-4.0');
    const page = await fetch(`${p.url}${sites[family]!.prefix}/`);
    t.equal(page.status, 200, `${family}: the reference page`);
    t.match(await page.text(), new RegExp(`<title>${sites[family]!.title}</title>`));
  }
});

t.test('documented operations are exactly the registered routes of each family', async (t) => {
  const routes = server!.routes();
  for (const family of FAMILIES) {
    const served = routes.filter((r) => r.auth === family).map((r) => `${r.method} ${openApiPath(r.path)}`).sort();
    const documented = Object.entries(documents[family].paths as Record<string, Json>)
      .flatMap(([path, item]) => Object.keys(item).map((method) => `${method.toUpperCase()} ${path}`))
      .sort();
    t.ok(served.length >= 7, `${family}: routes to compare (${served.length})`);
    t.same(documented, served, `${family}: documented operations = registered routes`);
    for (const [path, item] of Object.entries(documents[family].paths as Record<string, Json>)) {
      t.ok(path.startsWith(PREFIX[family]), `${path} is under ${PREFIX[family]}`);
      for (const operation of Object.values(item)) {
        t.ok(operation.responses['401'] && operation.summary && operation.description && operation.operationId, `${path}: 401, summary, description, operationId`);
      }
    }
  }
  t.ok(documents['export_v1.1'].paths['/v1.1/vehicle-type'], 'v1.1 has the vehicle types');
  t.notOk(documents.export_v1.paths['/v1/vehicle-type'], 'v1 has none');
});

t.test('the documents explain the five states, each reason, time zones, v1 frozen and the successor', async (t) => {
  for (const family of FAMILIES) {
    const text = documents[family].info.description as string;
    SUMMARY_REASONS.forEach((reason, i) => {
      t.match(text, new RegExp(`\\| ${i + 1} \\| [^|]+ \\| \`${REASON_STATES[reason]}\` \\| \`${reason}\` \\|`), `${family}: rule ${i + 1}, ${reason}`);
    });
    t.match(text, /30 minutes/);
    t.match(text, /own time zone/);
    t.match(text, /\]\(\/v2\/doc\/\)/, 'links the export v2 reference');
    t.match(text, /summary per fuelling option stays on v1\.1/);
    const schemas = documents[family].components.schemas;
    const states = (schemas.SummaryState.anyOf as Json[]).map((s) => [s.const, s.description]);
    t.same(states.map(([c]) => c), [...SUMMARY_STATES], `${family}: every state listed`);
    t.ok(states.every(([, d]) => typeof d === 'string' && d.length > 20), 'each state described');
    const reasons = (schemas.SummaryReason.anyOf as Json[]).map((s) => [s.const, s.description]);
    t.same(reasons.map(([c]) => c), [...SUMMARY_REASONS], `${family}: every reason listed, in the table's order`);
    t.ok(reasons.every(([, d]) => typeof d === 'string' && d.length > 20), 'each reason described');
  }
  t.match(documents.export_v1.info.description, /\*\*Export v1 is frozen\*\*/);
  t.notMatch(documents['export_v1.1'].info.description, /is frozen/);
  t.same(documents.export_v1.components.parameters.fuelling_option.schema.enum, ['700car', '350car', '350bus']);
  t.same(documents['export_v1.1'].components.parameters.fuelling_option.schema.enum, ['700ld', '350ld', '700hd', '350hd']);
});

t.test('every example in the documents validates against its schema', async (t) => {
  for (const family of FAMILIES) {
    const document = documents[family];
    const count = checkExamples(t, document, ajvs[family].check, `${family}: `);
    t.ok(count > 20, `${family}: ${count} examples checked`);
  }
  // The check can fail.
  t.not(ajvs['export_v1.1'].check(['components', 'schemas', 'StatusSummary'], { hrs_id: 'BERLA', fuelling_options: [{ fuel_type: '700car' }] }), null);
  t.not(ajvs.export_v1.check(['components', 'schemas', 'Station'], { ...(v1StationRecordSchema.meta()!.examples as Json[])[0], city: 'Berlin' }), null, 'v1 has no AFIR details');
});

t.test('real responses of the platform are valid against the documented schemas', async (t) => {
  const datetime = new Date(Date.now() - 5000).toISOString();
  const sent = await fetch(`${p.url}/import/v1/hrs-availability`, {
    method: 'POST',
    body: JSON.stringify([{ hrs: 'BERLA', datetime, maintenance: false, limitedly_available: false, dispensers: [{ fuel_type: '700car', available: true }] }]),
    headers: { Authorization: `Bearer ${TOKENS.import_v1}`, 'Content-Type': 'application/json' },
  });
  t.equal(sent.status, 204, 'a v1 reading for BERLA');
  await until('BERLA\'s summary follows the reading', async () => {
    const res = await get(`${p.url}/v1.1/hrs/BERLA/status`, TOKENS.export_v1);
    const body = (await res.json()) as Json;
    return body.fuelling_options?.[0]?.reason === 'no_signal' ? undefined : body;
  });
  for (const family of FAMILIES) {
    const prefix = PREFIX[family];
    const v1 = family === 'export_v1';
    const url = (path: string) => `${p.url}${prefix}${path}`;
    const list = (await conforms(t, family, `${prefix}hrs/status`, await get(url('hrs/status'), TOKENS.export_v1), 200)) as Json[];
    t.ok(list.length >= 3, `${family}: every station's summary`);
    const berla = list.find((s) => s.hrs_id === 'BERLA')!;
    t.match(berla.fuelling_options[0], { fuel_type: v1 ? '700car' : '700ld', status: 'AVAILABLE', reason: 'reported_available' });
    const one = await conforms(t, family, `${prefix}hrs/{hrs_id}/status`, await get(url('hrs/BERLA/status'), TOKENS.export_v1), 200, v1 ? v1StationSummarySchema : stationSummarySchema);
    t.same(one, berla, 'one summary is the list\'s');
    const gz = await get(url('hrs/status'), TOKENS.export_v1, { headers: { 'Accept-Encoding': 'gzip' } });
    await conforms(t, family, `${prefix}hrs/status`, gz, 200);
    const filtered = await get(url(`hrs/status?fuelling_option=${v1 ? '350bus' : '700hd'}`), TOKENS.export_v1);
    t.same(((await conforms(t, family, `${prefix}hrs/status`, filtered, 200)) as Json[]).map((s) => s.hrs_id), ['TRUCK'], 'filtered');
    const bad = await get(url(`hrs/status?fuelling_option=${v1 ? '700ld' : '700car'}`), TOKENS.export_v1);
    t.match(await conforms(t, family, `${prefix}hrs/status`, bad, 400, problemSchema), { status: 400, code: 'invalid_parameter', detail: v1 ? /700car, 350car, 350bus/ : /700ld, 350ld, 700hd, 350hd/ });
    t.match(await conforms(t, family, `${prefix}hrs/{hrs_id}/status`, await get(url('hrs/OSLOX/status'), TOKENS.export_v1), 404, problemSchema), { code: 'not_found' });

    const records = await get(url('hrs'), TOKENS.export_v1);
    const stations = (await conforms(t, family, `${prefix}hrs`, records, 200, v1 ? v1StationListSchema : v11StationListSchema)) as Json[];
    t.same(stations.map((s) => s.hrs_id), ['BERLA', 'HAMBG', 'TRUCK']);
    if (!v1) t.equal(stations[0]!.city, 'Berlin', 'v1.1 carries the AFIR details');
    const since = records.headers.get('last-modified')!;
    await conforms(t, family, `${prefix}hrs`, await get(url('hrs'), TOKENS.export_v1, { headers: { 'If-Modified-Since': since } }), 304);
    const record = await get(url('hrs/BERLA'), TOKENS.export_v1);
    t.same(await conforms(t, family, `${prefix}hrs/{hrs_id}`, record, 200, v1 ? v1StationRecordSchema : v11StationRecordSchema), stations[0]);
    await conforms(t, family, `${prefix}hrs/{hrs_id}`, await get(url('hrs/BERLA'), TOKENS.export_v1, { headers: { 'If-Modified-Since': record.headers.get('last-modified')! } }), 304);
    await conforms(t, family, `${prefix}hrs/{hrs_id}`, await get(url('hrs/OSLOX'), TOKENS.export_v1), 404, problemSchema);
    await conforms(t, family, `${prefix}hrs/{hrs_id}/events`, await get(url('hrs/BERLA/events'), TOKENS.export_v1), 200);
    await conforms(t, family, `${prefix}hrs/{hrs_id}/photo`, await get(url('hrs/BERLA/photo'), TOKENS.export_v1), 404, problemSchema);
    await conforms(t, family, `${prefix}fuel-type`, await get(url('fuel-type'), TOKENS.export_v1), 200);
    if (!v1) await conforms(t, family, `${prefix}vehicle-type`, await get(url('vehicle-type'), TOKENS.export_v1), 200);

    for (const token of [TOKENS.export_v2, TOKENS.import_v1, TOKENS.import_v2, 'nonsense']) {
      t.match(await conforms(t, family, `${prefix}hrs/status`, await get(url('hrs/status'), token), 401, problemSchema), { status: 401, code: 'not_authenticated' });
    }
    const personal = await get(url('hrs'), TOKENS.export_v2);
    const documented = deref(documents[family], documents[family].components.responses.Unauthorized).content['application/problem+json'].examples.personal_token.value;
    t.same(await conforms(t, family, `${prefix}hrs`, personal, 401, problemSchema), documented, 'the personal-token refusal is the documented one');
  }
});

t.test('the v1.1 reference publishes the sandbox token and its stations; both state the rate limits and document the 429', async (t) => {
  const sandbox = await startTestPlatform(t, { env: { SANDBOX: 'on' } });
  const served = async (prefix: string) => (await (await fetch(`${sandbox.url}${prefix}doc/schema`)).json()) as Json;
  const v11 = (await served('/v1.1/')).info.description as string;
  t.notMatch(documents['export_v1.1'].info.description, /## The sandbox/, 'a service with SANDBOX=off does not publish it');
  t.match(v11, /## The sandbox/);
  t.match(v11, new RegExp(`Authorization: Bearer ${SANDBOX_TOKEN.replace(/\./g, '\\.')}`), 'the token, published');
  for (const s of SANDBOX_STATIONS) t.match(v11, `\`${s.hrs_id}\``, `${s.hrs_id} listed`);
  t.match(v11, `at most ${p.parts.config.exportV1RateLimit} requests per minute per token, v1 and v1.1 together`);
  const v1 = documents.export_v1.info.description as string;
  t.notMatch(v1, /## The sandbox/, 'export v1 has no sandbox');
  t.match(v1, /export v1 has no sandbox/);
  for (const family of FAMILIES) {
    const examples = documents[family].components.responses.TooManyRequests.content['application/problem+json'].examples;
    t.match(examples.token.value, { status: 429, detail: /per token/ }, `${family}: the 429 of a token`);
    t.ok(documents[family].components.headers['RateLimit-Limit'], `${family}: RateLimit-* headers`);
  }
  t.match(
    documents.export_v1.components.responses.Unauthorized.content['application/problem+json'].examples.sandbox_token.value.detail,
    /works on the export v1\.1 sandbox \(\/v1\.1\/\) only\. Export v1 has no sandbox\./,
    'v1: the sandbox token\'s 401',
  );
  const res = await get(`${sandbox.url}/v1.1/hrs`, SANDBOX_TOKEN);
  t.equal(res.status, 200);
  const body = (await res.json()) as { hrs_id: string }[];
  t.equal(v11StationListSchema.safeParse(body).success, true, 'the sandbox records fit the documented record');
  t.equal(body.length, SANDBOX_STATIONS.length);
});
