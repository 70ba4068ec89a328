/**
 * The portal document (`/portal/v1/doc/`): valid OpenAPI 3.1, its operations exactly the portal's
 * JSON routes (the page and its files left out), the cookie scheme, the sign-in flow and the limits
 * explained as configured, every example valid, and real answers of a running platform (signed in
 * through a sign-in link whose secret the test stored itself) valid against the document, their
 * headers too.
 */
import t, { type Test } from 'tap';
import sharp from 'sharp';
import { Validator } from '@seriousme/openapi-schema-validator';
import Ajv2020Module from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import type { z } from 'zod';
import { buildDocument, openApiPath, type DocContext, type Route } from '../../src/http/openapi.js';
import { PORTAL_DOCUMENT } from '../../src/api/portal/docs/document.js';
import { buildDocuments, serviceVersion } from '../../src/api/docs/routes.js';
import { docSites } from '../helpers/docs.js';
import { hashSecret, newSecret } from '../../src/api/secrets.js';
import {
  createdTokenSchema,
  newTokenRequestSchema,
  portalProblemSchema,
  revealRequestSchema,
  sessionRequestSchema,
  sessionSchema,
  sessionStateSchema,
  signInAcceptedSchema,
  signInRequestSchema,
  tokenAnswerSchema,
  tokenExpiryRequestSchema,
  tokenListSchema,
} from '../../src/domain/portal/schemas.js';
import { newWebhookSchema, webhookPatchSchema } from '../../src/domain/webhooks/schemas.js';
import { isWellFormedToken, MAX_ACTIVE_PERSONAL_TOKENS } from '../../src/domain/token-values.js';
import type { HttpServer } from '../../src/http/server.js';
import { baseFixture } from '../helpers/fixtures.js';
import { ADMIN_TOKEN, get, startTestPlatform, type TestPlatform } from '../helpers/platform.js';
import { ACCOUNTS, grantPortalRoles, portalFixture } from '../helpers/portal.js';
import { checkExamples } from '../helpers/openapi.js';

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
  t.equal(documented.length, 10 + 20 + 6 + 7 + 8, 'the token owners\' 10, operator staff\'s 20, originator managers\' 6, the history\'s 7, the webhooks\' 8');
  t.same(portal.filter((r) => r.auth === 'portal').length, 6 + 20 + 6 + 7 + 8, 'all but the four public ones need the session');
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
