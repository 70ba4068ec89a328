/**
 * The portal's webhook API (`/portal/v1/webhooks`): every route, every refusal (bad fields, addresses
 * refused against request forgery, the limit of 5, another account's subscription, the Origin rule), the
 * secret shown once and stored sealed (the row holds no text of it; it opens only with the platform's key
 * and its own subscription's id), rotation's overlap window, a new subscription's start in the change
 * log, the pings and re-enabled deliveries queued in the subscription's row (the webhook workers told by
 * NOTIFY), the 503 without a key; and every
 * answer valid against the portal document.
 */
import { randomBytes } from 'node:crypto';
import t, { type Test } from 'tap';
import { openSecret } from '../../src/domain/webhooks/secrets.js';
import { until } from '../helpers/wait.js';
import { deref, documentAjv } from '../helpers/openapi.js';
import { startTestPlatform, type TestPlatform } from '../helpers/platform.js';
import { ACCOUNTS, grantPortalRoles, portalClient, portalFixture, signedIn, type PortalAnswer, type PortalClient } from '../helpers/portal.js';

const KEY = randomBytes(32);
const OVERLAP_SECONDS = 5400;
const p = await startTestPlatform(t, {
  fixture: portalFixture(),
  // The per-account limit on what reaches out has its own test (test/platform/webhooks-limits.test.ts); these make dozens a minute.
  env: { WEBHOOK_SECRET_KEY: KEY.toString('hex'), WEBHOOK_SECRET_OVERLAP: String(OVERLAP_SECONDS), WEBHOOK_RATE_LIMIT: '1000' },
});
await grantPortalRoles(p);

const document = (await (await fetch(`${p.url}/portal/v1/doc/schema`)).json()) as Record<string, any>;
const { check } = documentAjv(document);
let conformed = 0;

/** Asserts the answer's status and that its body fits what the document says of that status. */
function conforms(t: Test, method: string, route: string, answer: PortalAnswer, status: number): any {
  t.equal(answer.status, status, `${method} ${route}: ${status}${answer.status === status ? '' : ` (${JSON.stringify(answer.body)})`}`);
  const documented = document.paths[route]?.[method.toLowerCase()]?.responses?.[String(answer.status)];
  t.ok(documented, `${method} ${route} ${answer.status} is documented`);
  if (!documented) return answer.body;
  const response = deref(document, documented);
  if (!response.content) {
    t.equal(answer.body, undefined, `${method} ${route} ${answer.status}: no body`);
    return answer.body;
  }
  const media = (answer.headers.get('content-type') ?? '').split(';')[0]!.trim();
  t.ok(media in response.content, `${method} ${route} ${answer.status}: ${media} documented`);
  const schema = response.content[media]?.schema;
  const where = typeof schema?.$ref === 'string' ? (schema.$ref as string).slice(2).split('/') : null;
  t.equal(where ? check(where, answer.body) : null, null, `${method} ${route} ${answer.status}: the body fits the document`);
  conformed++;
  return answer.body;
}

/** A documented example of a response. */
function example(method: string, route: string, status: number, name: string): unknown {
  const response = deref(document, document.paths[route][method.toLowerCase()].responses[String(status)]);
  return deref(document, response.content['application/problem+json'].examples[name]).value;
}

const LIST = '/portal/v1/webhooks';
const ONE = '/portal/v1/webhooks/{id}';
const PUBLIC_URL = 'https://93.184.215.14/hooks/hrs';

const alice = await signedIn(p, ACCOUNTS.none);
const staff = await signedIn(p, ACCOUNTS.staff);
const admin = await signedIn(p, ACCOUNTS.admin);

// No webhook worker runs here: what the routes queue stays in the rows, and the notifications are counted.
let told = 0;
const listening = await p.sql.listen('hrs_webhooks', () => void told++);
t.teardown(() => listening.unlisten());
const pendingPings = async (id: string) => (await p.sql<{ pending_pings: string[] }[]>`SELECT pending_pings FROM webhook_subscriptions WHERE id = ${id}`)[0]!.pending_pings;

const create = (client: PortalClient, body: unknown) => client.call('POST', LIST, body);
const storedRow = async (id: string) => {
  const [row] = await p.sql<{ secret_sealed: Buffer; previous_secret_sealed: Buffer | null; previous_secret_until: Date | null; cursor_seq: string; state: string }[]>`
    SELECT secret_sealed, previous_secret_sealed, previous_secret_until, cursor_seq::text, state FROM webhook_subscriptions WHERE id = ${id}`;
  return row!;
};
const changeLogPosition = async () => (await p.sql<{ seq: string }[]>`SELECT COALESCE(max(seq), 0)::text AS seq FROM change_log`)[0]!.seq;

t.test('subscribe: 201 with the secret once; the row holds it sealed; GET never shows it', async (t) => {
  const before = await changeLogPosition();
  const res = await create(alice, { url: PUBLIC_URL, kinds: ['station_status', 'events'], hrs_ids: ['BERLA', 'KIELX'], bbox: [5, 47, 15.5, 55.1], description: 'Dashboard' });
  const created = conforms(t, 'POST', LIST, res, 201);
  t.equal(res.headers.get('cache-control'), 'no-store');
  t.match(created, {
    id: /^wh_[a-z0-9]{24}$/, url: PUBLIC_URL, description: 'Dashboard', kinds: ['station_status', 'events'], hrs_ids: ['BERLA', 'KIELX'],
    bbox: [5, 47, 15.5, 55.1], state: 'active', disabled_at: null, disabled_reason: null, failing_since: null, last_delivery_at: null,
    secret_rotated_at: null, previous_secret_valid_until: null, secret: /^whsec_[A-Za-z0-9+/]{32}$/,
  });
  const row = await storedRow(created.id);
  t.equal(row.cursor_seq, before, 'the subscription starts at the change log\'s position when it was made');
  t.notOk(row.secret_sealed.includes(Buffer.from(created.secret)), 'the row does not hold the secret\'s text');
  t.notOk(row.secret_sealed.includes(Buffer.from(created.secret.slice(6), 'base64')), 'nor its bytes');
  t.equal(openSecret(KEY, row.secret_sealed, created.id), created.secret, 'it opens with the platform\'s key and the subscription\'s id');
  t.throws(() => openSecret(randomBytes(32), row.secret_sealed, created.id), 'not with another key');
  t.throws(() => openSecret(KEY, row.secret_sealed, 'wh_000000000000000000000000'), 'not as another subscription\'s');

  const one = conforms(t, 'GET', ONE, await alice.call('GET', `${LIST}/${created.id}`), 200);
  const { secret, ...shown } = created;
  t.same(one, shown, 'GET shows the subscription, without its secret');
  const list = conforms(t, 'GET', LIST, await alice.call('GET', LIST), 200);
  t.same(list.webhooks, [shown]);
  t.notOk(JSON.stringify(list).includes(secret), 'no secret in the list');
  await alice.call('DELETE', `${LIST}/${created.id}`);
});

t.test('a subscription made after a change starts after it; defaults for what is left out', async (t) => {
  await p.sql`UPDATE stations SET static_modified_at = clock_timestamp() WHERE hrs_id = 'BERLA'`;
  const position = await changeLogPosition();
  t.not(position, '0', 'the change is logged');
  const created = conforms(t, 'POST', LIST, await create(alice, { url: PUBLIC_URL, kinds: ['station_records'] }), 201);
  t.match(created, { description: '', hrs_ids: null, bbox: null });
  t.equal((await storedRow(created.id)).cursor_seq, position);
  t.equal(conforms(t, 'DELETE', ONE, await alice.call('DELETE', `${LIST}/${created.id}`), 204), undefined);
  t.equal((await p.sql`SELECT 1 FROM webhook_subscriptions WHERE id = ${created.id}`).length, 0, 'the row is deleted');
  conforms(t, 'GET', ONE, await alice.call('GET', `${LIST}/${created.id}`), 404);
});

t.test('a change being written when a subscription is made: the subscription waits for it, and starts after it', async (t) => {
  let seq = '';
  let answer: Promise<PortalAnswer> | undefined;
  await p.sql.begin(async (tx) => {
    await tx`SELECT hrs_log_change('station', 'BERLA', 'BERLA', 'changed', NULL)`;
    seq = (await tx<{ seq: string }[]>`SELECT max(seq)::text AS seq FROM change_log`)[0]!.seq;
    answer = create(alice, { url: PUBLIC_URL, kinds: ['station_records'] });
    await new Promise((resolve) => setTimeout(resolve, 300));
  });
  const created = (await answer!).body;
  t.equal((await storedRow(created.id)).cursor_seq, seq, 'the change committed meanwhile is before its start (not half-seen)');
  await alice.call('DELETE', `${LIST}/${created.id}`);
});

t.test('bad fields: 400 invalid_field, errors per field, nothing made', async (t) => {
  const cases: [string, unknown, string, RegExp][] = [
    ['no body fields', {}, 'url', /Invalid input|expected string/],
    ['kinds empty', { url: PUBLIC_URL, kinds: [] }, 'kinds', /at least one kind/],
    ['kind unknown', { url: PUBLIC_URL, kinds: ['prices'] }, 'kinds', /^0: must be one of station_status/],
    ['kind repeated', { url: PUBLIC_URL, kinds: ['events', 'events'] }, 'kinds', /events more than once/],
    ['hrs_ids empty', { url: PUBLIC_URL, kinds: ['events'], hrs_ids: [] }, 'hrs_ids', /at least one station/],
    ['hrs_id malformed', { url: PUBLIC_URL, kinds: ['events'], hrs_ids: ['berla'] }, 'hrs_ids', /^0: must be exactly five uppercase letters/],
    ['hrs_id unknown', { url: PUBLIC_URL, kinds: ['events'], hrs_ids: ['BERLA', 'ZZZZZ'] }, 'hrs_ids', /^no station ZZZZZ$/],
    ['hrs_id repeated', { url: PUBLIC_URL, kinds: ['events'], hrs_ids: ['BERLA', 'BERLA'] }, 'hrs_ids', /BERLA more than once/],
    ['too many stations', { url: PUBLIC_URL, kinds: ['events'], hrs_ids: Array.from({ length: 1001 }, () => 'BERLA') }, 'hrs_ids', /at most 1000 stations/],
    ['bbox of 3', { url: PUBLIC_URL, kinds: ['events'], bbox: [1, 2, 3] }, 'bbox', /four numbers|Too small|expected/],
    ['bbox of strings', { url: PUBLIC_URL, kinds: ['events'], bbox: ['1', 2, 3, 4] }, 'bbox', /^0: /],
    ['bbox longitude', { url: PUBLIC_URL, kinds: ['events'], bbox: [-181, 47, 15, 55] }, 'bbox', /^0: must be a longitude/],
    ['bbox latitude', { url: PUBLIC_URL, kinds: ['events'], bbox: [5, 47, 15, 95] }, 'bbox', /^3: must be a latitude/],
    ['bbox min ≥ max', { url: PUBLIC_URL, kinds: ['events'], bbox: [15, 47, 5, 47] }, 'bbox', /minLon must be less than maxLon; minLat must be less than maxLat/],
    ['description too long', { url: PUBLIC_URL, kinds: ['events'], description: 'x'.repeat(201) }, 'description', /at most 200 characters/],
    ['description with NUL', { url: PUBLIC_URL, kinds: ['events'], description: 'a\u0000b' }, 'description', /NUL/],
    ['unknown field', { url: PUBLIC_URL, kinds: ['events'], secret: 'whsec_x' }, '(body)', /secret/],
    ['url not a string', { url: 7, kinds: ['events'] }, 'url', /string/],
  ];
  for (const [what, body, field, message] of cases) {
    const res = await create(alice, body);
    const problem = conforms(t, 'POST', LIST, res, 400);
    t.match(problem, { code: 'invalid_field', errors: { [field]: message } }, what);
    t.match(problem.detail, `${field}: `, `${what}: the detail names the field`);
  }
  const malformed = await alice.call('POST', LIST, undefined, { 'Content-Type': 'application/json' });
  t.match(conforms(t, 'POST', LIST, malformed, 400), { code: 'parse_error' }, 'no body');
  t.equal((await p.sql`SELECT 1 FROM webhook_subscriptions`).length, 0, 'nothing was made');
});

t.test('addresses refused (server-side request forgery): 400 url_refused saying why', async (t) => {
  const cases: [string, RegExp][] = [
    ['https://10.1.2.3/hook', /10\.1\.2\.3 is a private address/],
    ['https://192.168.0.10/hook', /private address/],
    ['https://169.254.169.254/latest/meta-data', /169\.254\.169\.254 is a link-local address/],
    ['https://[fe80::1]/hook', /link-local address/],
    ['https://127.0.0.1/hook', /127\.0\.0\.1 is a loopback address/],
    ['https://localhost/hook', /localhost resolves to .* is a loopback address/],
    ['https://[::ffff:10.0.0.1]/hook', /::ffff:a00:1 is a private address/],
    ['https://[::ffff:169.254.169.254]/hook', /link-local address/],
    ['https://2130706433/hook', /127\.0\.0\.1 is a loopback address/],
    ['https://10.1/hook', /10\.0\.0\.1 is a private address/],
    ['https://0/hook', /0\.0\.0\.0 is a reserved address/],
    ['http://93.184.215.14/hook', /must be an https:\/\/ URL/],
    ['ftp://93.184.215.14/hook', /must be an https:\/\/ URL/],
    ['https://user:pw@93.184.215.14/hook', /user name or password/],
    ['https://93.184.215.14/hook#x', /fragment/],
    ['not a url', /absolute URL/],
  ];
  for (const [url, reason] of cases) {
    const problem = conforms(t, 'POST', LIST, await create(alice, { url, kinds: ['events'] }), 400);
    t.match(problem, { code: 'url_refused', detail: reason, errors: { url: reason } }, url);
  }
  const created = conforms(t, 'POST', LIST, await create(alice, { url: PUBLIC_URL, kinds: ['events'] }), 201);
  const patched = await alice.call('PATCH', `${LIST}/${created.id}`, { url: 'https://10.0.0.7/hook' });
  t.match(conforms(t, 'PATCH', ONE, patched, 400), { code: 'url_refused' }, 'a change to a refused URL too');
  t.equal((await alice.call('GET', `${LIST}/${created.id}`)).body.url, PUBLIC_URL, 'and the URL stays');
  await alice.call('DELETE', `${LIST}/${created.id}`);
});

t.test('loopback is allowed only where the platform says so, then plain http too', async (t) => {
  const q = await startTestPlatform(t, { sameStoreAs: p, overrides: { webhookAllowLoopback: true } });
  const client = portalClient(q, alice.cookie);
  for (const url of ['http://127.0.0.1:9/hook', 'http://localhost:9/hook', 'https://[::1]:9/hook']) {
    const res = await create(client, { url, kinds: ['events'] });
    t.equal(res.status, 201, `${url} with WEBHOOK_ALLOW_LOOPBACK`);
    await client.call('DELETE', `${LIST}/${res.body.id}`);
  }
  const res = await create(client, { url: 'http://10.0.0.7/hook', kinds: ['events'] });
  t.match(res.body, { code: 'url_refused', detail: /private address/ }, 'private addresses stay refused');
});

t.test('at most 5 per account, unsubscribed ones not counted', async (t) => {
  const ids: string[] = [];
  for (let i = 0; i < 5; i++) ids.push((await create(alice, { url: `${PUBLIC_URL}/${i}`, kinds: ['events'] })).body.id);
  t.equal(ids.filter(Boolean).length, 5);
  const refused = conforms(t, 'POST', LIST, await create(alice, { url: PUBLIC_URL, kinds: ['events'] }), 409);
  t.match(refused, { code: 'webhook_limit', detail: /5 webhook subscriptions already/ });
  t.same(refused, example('POST', LIST, 409, 'limit'), 'as documented');
  t.equal((await create(staff, { url: PUBLIC_URL, kinds: ['events'] })).status, 201, 'another account has its own 5');
  await p.sql`UPDATE webhook_subscriptions SET state = 'unsubscribed' WHERE id = ${ids[0]!}`;
  const sixth = await create(alice, { url: PUBLIC_URL, kinds: ['events'] });
  t.equal(sixth.status, 201, 'an unsubscribed one frees its place');
  t.equal((await alice.call('GET', LIST)).body.webhooks.length, 6, 'the list shows the unsubscribed one too');
  t.equal((await create(alice, { url: PUBLIC_URL, kinds: ['events'] })).status, 409);
  const again = await alice.call('PATCH', `${LIST}/${ids[0]!}`, { state: 'active' });
  t.same(conforms(t, 'PATCH', ONE, again, 409), example('PATCH', ONE, 409, 'unsubscribed'), 'an unsubscribed one is not re-enabled');
  for (const id of [...ids, sixth.body.id]) await alice.call('DELETE', `${LIST}/${id}`);
  await p.sql`DELETE FROM webhook_subscriptions`;
  // Requests at once cannot pass the limit together.
  for (let i = 0; i < 3; i++) await create(alice, { url: PUBLIC_URL, kinds: ['events'] });
  const racing = await Promise.all(Array.from({ length: 5 }, () => create(alice, { url: PUBLIC_URL, kinds: ['events'] })));
  t.same(racing.map((r) => r.status).sort(), [201, 201, 409, 409, 409], 'five at once with three made: two more');
  t.equal((await p.sql`SELECT 1 FROM webhook_subscriptions WHERE user_id = ${ACCOUNTS.none}`).length, 5);
  await p.sql`DELETE FROM webhook_subscriptions`;
});

t.test('another account\'s subscription is not found, an admin\'s request included', async (t) => {
  const mine = (await create(alice, { url: PUBLIC_URL, kinds: ['events'] })).body;
  for (const other of [staff, admin]) {
    conforms(t, 'GET', ONE, await other.call('GET', `${LIST}/${mine.id}`), 404);
    conforms(t, 'PATCH', ONE, await other.call('PATCH', `${LIST}/${mine.id}`, { description: 'mine now' }), 404);
    conforms(t, 'DELETE', ONE, await other.call('DELETE', `${LIST}/${mine.id}`), 404);
    conforms(t, 'POST', `${ONE}/rotate-secret`, await other.call('POST', `${LIST}/${mine.id}/rotate-secret`), 404);
    conforms(t, 'POST', `${ONE}/ping`, await other.call('POST', `${LIST}/${mine.id}/ping`), 404);
    conforms(t, 'GET', `${ONE}/deliveries`, await other.call('GET', `${LIST}/${mine.id}/deliveries`), 404);
    t.same((await other.call('GET', LIST)).body.webhooks, [], 'the list shows only the account\'s own');
  }
  const row = await storedRow(mine.id);
  t.equal((await alice.call('GET', `${LIST}/${mine.id}`)).body.description, '', 'unchanged');
  t.equal(row.previous_secret_sealed, null, 'not rotated');
  t.same(await pendingPings(mine.id), [], 'no ping queued');
  conforms(t, 'GET', ONE, await alice.call('GET', `${LIST}/wh_nothing`), 404);
  await alice.call('DELETE', `${LIST}/${mine.id}`);
});

t.test('the session and the Origin rule', async (t) => {
  const anonymous = portalClient(p);
  conforms(t, 'GET', LIST, await anonymous.call('GET', LIST), 401);
  conforms(t, 'POST', LIST, await anonymous.call('POST', LIST, { url: PUBLIC_URL, kinds: ['events'] }), 401);
  const foreign = await alice.call('POST', LIST, { url: PUBLIC_URL, kinds: ['events'] }, { Origin: 'https://elsewhere.example' });
  t.match(conforms(t, 'POST', LIST, foreign, 403), { code: 'forbidden_origin' });
  t.equal((await p.sql`SELECT 1 FROM webhook_subscriptions`).length, 0, 'nothing made');
});

t.test('change: fields replaced, null clears a filter, an empty change refused', async (t) => {
  const made = (await create(alice, { url: PUBLIC_URL, kinds: ['events'], hrs_ids: ['BERLA'] })).body;
  const path = `${LIST}/${made.id}`;
  const changed = conforms(t, 'PATCH', ONE, await alice.call('PATCH', path, { kinds: ['fuelling_options', 'station_status'], hrs_ids: null, bbox: [5, 47, 15, 55], description: 'Both' }), 200);
  t.match(changed, { kinds: ['fuelling_options', 'station_status'], hrs_ids: null, bbox: [5, 47, 15, 55], description: 'Both', url: PUBLIC_URL, state: 'active' });
  t.same((await alice.call('GET', path)).body, changed, 'as stored');
  t.match(conforms(t, 'PATCH', ONE, await alice.call('PATCH', path, {}), 400), { code: 'invalid_field', errors: { '(body)': /at least one field/ } });
  t.match(conforms(t, 'PATCH', ONE, await alice.call('PATCH', path, { state: 'disabled' }), 400), { errors: { state: /must be "active"/ } });
  t.match(conforms(t, 'PATCH', ONE, await alice.call('PATCH', path, { kinds: [], hrs_ids: ['ZZZZZ'] }), 400), { errors: { kinds: /at least one kind/ } });
  t.match((await alice.call('PATCH', path, { hrs_ids: ['ZZZZZ'] })).body, { code: 'invalid_field', errors: { hrs_ids: 'no station ZZZZZ' } });
  t.same((await alice.call('GET', path)).body, changed, 'a refused change changes nothing');
  t.equal(told, 0, 'an active subscription changed tells the workers nothing');
  await alice.call('DELETE', path);
});

t.test('re-enable: state, failures forgotten, the workers told', async (t) => {
  const made = (await create(alice, { url: PUBLIC_URL, kinds: ['events'] })).body;
  const path = `${LIST}/${made.id}`;
  await p.sql`
    UPDATE webhook_subscriptions SET state = 'disabled', disabled_at = now(), disabled_reason = 'failing for 24 hours',
      failing_since = now() - interval '24 hours', last_delivery_at = now() - interval '1 minute' WHERE id = ${made.id}`;
  const disabled = (await alice.call('GET', path)).body;
  t.match(disabled, { state: 'disabled', disabled_reason: 'failing for 24 hours', disabled_at: String, failing_since: String });
  const cursor = (await storedRow(made.id)).cursor_seq;
  const enabled = conforms(t, 'PATCH', ONE, await alice.call('PATCH', path, { state: 'active' }), 200);
  t.match(enabled, { state: 'active', disabled_at: null, disabled_reason: null, failing_since: null, last_delivery_at: disabled.last_delivery_at });
  t.equal((await storedRow(made.id)).cursor_seq, cursor, 'delivery resumes where it stopped');
  const [due] = await p.sql<{ next_attempt_at: Date | null }[]>`SELECT next_attempt_at FROM webhook_subscriptions WHERE id = ${made.id}`;
  t.equal(due!.next_attempt_at, null, 'due as soon as it has something to send');
  await until('the workers told', () => (told === 1 ? true : undefined));
  t.equal(conforms(t, 'PATCH', ONE, await alice.call('PATCH', path, { state: 'active' }), 200).state, 'active', 'asked again of an active one: 200');
  await until('told again', () => (told === 2 ? true : undefined));
  told = 0;
  await alice.call('DELETE', path);
});

t.test('rotate: a new secret once, the previous one valid for the overlap', async (t) => {
  const made = (await create(alice, { url: PUBLIC_URL, kinds: ['events'] })).body;
  const path = `${LIST}/${made.id}/rotate-secret`;
  const asked = Date.now();
  const res = await alice.call('POST', path);
  const rotated = conforms(t, 'POST', `${ONE}/rotate-secret`, res, 200);
  t.equal(res.headers.get('cache-control'), 'no-store');
  t.match(rotated, { secret: /^whsec_/ });
  t.not(rotated.secret, made.secret, 'a new secret');
  const until = Date.parse(rotated.previous_secret_valid_until);
  t.ok(until >= asked + OVERLAP_SECONDS * 1000 - 1000 && until <= Date.now() + OVERLAP_SECONDS * 1000 + 1000, 'valid until now + WEBHOOK_SECRET_OVERLAP');
  const row = await storedRow(made.id);
  t.equal(openSecret(KEY, row.secret_sealed, made.id), rotated.secret, 'the new one sealed as current');
  t.equal(openSecret(KEY, row.previous_secret_sealed!, made.id), made.secret, 'the first one kept as previous');
  t.equal(row.previous_secret_until!.toISOString(), rotated.previous_secret_valid_until);
  const shown = (await alice.call('GET', `${LIST}/${made.id}`)).body;
  t.match(shown, { previous_secret_valid_until: rotated.previous_secret_valid_until, secret_rotated_at: String });
  t.notOk(JSON.stringify(shown).includes(rotated.secret), 'GET never shows it');
  const again = (await alice.call('POST', path)).body;
  const twice = await storedRow(made.id);
  t.equal(openSecret(KEY, twice.previous_secret_sealed!, made.id), rotated.secret, 'rotating again: the previous is the last one, the first is gone');
  t.equal(openSecret(KEY, twice.secret_sealed, made.id), again.secret);
  await alice.call('DELETE', `${LIST}/${made.id}`);
});

t.test('ping: 202, a ping queued per request, each its own message id', async (t) => {
  const made = (await create(alice, { url: PUBLIC_URL, kinds: ['events'] })).body;
  const first = conforms(t, 'POST', `${ONE}/ping`, await alice.call('POST', `${LIST}/${made.id}/ping`), 202);
  const second = (await alice.call('POST', `${LIST}/${made.id}/ping`)).body;
  t.same([first.message_id, second.message_id], [`msg_${made.id}_ping_1`, `msg_${made.id}_ping_2`]);
  t.same(await pendingPings(made.id), [first.message_id, second.message_id], 'both queued in its row');
  await until('the workers told of each', () => (told === 2 ? true : undefined));
  told = 0;
  await alice.call('DELETE', `${LIST}/${made.id}`);
});

t.test('deliveries: newest first, at most 100', async (t) => {
  const made = (await create(alice, { url: PUBLIC_URL, kinds: ['events'] })).body;
  const path = `${LIST}/${made.id}/deliveries`;
  t.same(conforms(t, 'GET', `${ONE}/deliveries`, await alice.call('GET', path), 200), { deliveries: [] });
  await p.sql`
    INSERT INTO webhook_deliveries (subscription_id, message_id, kind, changes, attempt, status_code, error, latency_ms, at)
    SELECT ${made.id}, 'msg_' || ${made.id} || '_' || n || '_' || n, 'changes', 1, 1, CASE WHEN n % 2 = 0 THEN 204 END,
           CASE WHEN n % 2 = 1 THEN 'connection refused' END, CASE WHEN n % 2 = 0 THEN 40 + n END, now() - make_interval(secs => 200 - n)
    FROM generate_series(1, 105) n`;
  const { deliveries } = conforms(t, 'GET', `${ONE}/deliveries`, await alice.call('GET', path), 200);
  t.equal(deliveries.length, 100);
  t.same(deliveries[0], {
    message_id: `msg_${made.id}_105_105`, kind: 'changes', changes: 1, attempt: 1, status_code: null, error: 'connection refused', latency_ms: null, at: deliveries[0].at,
  });
  t.match(deliveries[1], { message_id: `msg_${made.id}_104_104`, status_code: 204, latency_ms: 144, error: null });
  t.equal(deliveries.at(-1).message_id, `msg_${made.id}_6_6`, 'the oldest 5 left out');
  await alice.call('DELETE', `${LIST}/${made.id}`);
});

t.test('without WEBHOOK_SECRET_KEY every webhook route answers 503', async (t) => {
  const q: TestPlatform = await startTestPlatform(t, { sameStoreAs: p, overrides: { webhookSecretKey: undefined } });
  const client = portalClient(q, alice.cookie);
  const routes: [string, string, string, unknown?][] = [
    ['GET', LIST, LIST],
    ['POST', LIST, LIST, { url: PUBLIC_URL, kinds: ['events'] }],
    ['GET', `${LIST}/wh_x`, ONE],
    ['PATCH', `${LIST}/wh_x`, ONE, { description: 'x' }],
    ['DELETE', `${LIST}/wh_x`, ONE],
    ['POST', `${LIST}/wh_x/rotate-secret`, `${ONE}/rotate-secret`],
    ['POST', `${LIST}/wh_x/ping`, `${ONE}/ping`],
    ['GET', `${LIST}/wh_x/deliveries`, `${ONE}/deliveries`],
  ];
  for (const [method, path, route, body] of routes) {
    const problem = conforms(t, method, route, await client.call(method, path, body), 503);
    t.match(problem, { code: 'webhooks_not_configured', detail: /WEBHOOK_SECRET_KEY/ }, `${method} ${path}`);
    t.same(problem, example(method, route, 503, 'not_configured'), 'as documented');
  }
  t.equal((await p.sql`SELECT 1 FROM webhook_subscriptions`).length, 0, 'nothing made');
  // The platform working as configured is not a failure: its request lines are info lines, none an error.
  const lines = q.logs.lines.filter((l) => l.msg === 'request' && l.status === 503);
  t.equal(lines.length, routes.length, 'each 503 has its request line');
  t.same([...new Set(lines.map((l) => l.level))], [30], 'at info, not error');
  t.same(q.logs.lines.filter((l) => (l.level as number) >= 50).map((l) => l.msg), [], 'no error line');
});

t.test('every answer checked against the document', async (t) => {
  t.ok(conformed > 60, `${conformed} answers checked`);
});
