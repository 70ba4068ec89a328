/**
 * Webhooks: the subscription API, its limits and the change recorder.
 *
 * One file, one process: its parts share the loaded platform code. Each part is a subtest named after
 * what it covers.
 */
import { randomBytes } from 'node:crypto';
import t, { type Test } from 'tap';
import type { RecordedChange } from '../../db/queries/recorded-changes.js';
import type { StatusChange } from '../../machines/status-change.js';
import { createLogger } from '../../src/config/log.js';
import type { StationEntry } from '../../src/domain/stations.js';
import { openSecret } from '../../src/domain/webhooks/secrets.js';
import { ChangeRecorder, FLUSH_DELAY_MS, RETRY_MS, TOPICS_EVERY_MS } from '../../src/push/webhooks/recorder.js';
import { baseFixture, berlaAssignments, TOKENS } from '../helpers/fixtures.js';
import { deref, documentAjv } from '../helpers/openapi.js';
import { ADMIN_TOKEN, get, logCapture, postSignals, startTestPlatform, type TestPlatform } from '../helpers/platform.js';
import { ACCOUNTS, grantPortalRoles, type PortalAnswer, portalClient, type PortalClient, portalFixture, signedIn } from '../helpers/portal.js';
import { privatePostgres } from '../helpers/private-services.js';
import { timedCall } from '../helpers/timed-call.js';
import { until } from '../helpers/wait.js';

t.test('webhooks-api', async (t) => {
  /**
   * The portal's webhook API (`/portal/v1/webhooks`): every route, every refusal (bad fields, addresses
   * refused against request forgery, the limit of 5, another account's subscription, the Origin rule), the
   * secret shown once and stored sealed (the row holds no text of it; it opens only with the platform's key
   * and its own subscription's id), rotation's overlap window, a new subscription's start in the change
   * log, the pings and re-enabled deliveries queued in the subscription's row (the webhook workers told by
   * NOTIFY), the 503 without a key; and every
   * answer valid against the portal document.
   */
  const KEY = randomBytes(32);
  const OVERLAP_SECONDS = 5400;
  const p = await startTestPlatform(t, {
    fixture: portalFixture(),
    // The per-account limit on what reaches out has its own test (test/platform/webhooks-api.test.ts); these make dozens a minute.
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
});

t.test('webhooks-limits', async (t) => {
  /**
   * What bounds a token owner's webhooks: what reaches out (a subscription made, a URL changed, a test
   * ping) spends one budget per account, WEBHOOK_RATE_LIMIT a minute, answered 429 with Retry-After in
   * the portal's problem format past it, while other accounts and the changes that reach nowhere go on;
   * and no portal request waits past PORTAL_REQUEST_TIMEOUT, whatever it waits on (here a frozen
   * PostgreSQL with a DATABASE_TIMEOUT far longer): a 503 with Retry-After, a change's saying it may
   * still be applied.
   */
  const LIST = '/portal/v1/webhooks';
  const PUBLIC_URL = 'https://93.184.215.14/hooks/hrs';

  t.test('subscriptions made, URLs changed and pings share WEBHOOK_RATE_LIMIT per account; 429 with Retry-After past it', async (t) => {
    const p = await startTestPlatform(t, { fixture: portalFixture(), env: { WEBHOOK_SECRET_KEY: randomBytes(32).toString('hex'), WEBHOOK_RATE_LIMIT: '3' } });
    const alice = await signedIn(p, ACCOUNTS.none);
    const staff = await signedIn(p, ACCOUNTS.staff);
    const made = await alice.call('POST', LIST, { url: PUBLIC_URL, kinds: ['events'] });
    t.equal(made.status, 201, 'a subscription: the first of 3');
    t.equal(made.headers.get('ratelimit-limit'), '3');
    t.equal(made.headers.get('ratelimit-remaining'), '2');
    const id = made.body.id as string;
    t.equal((await alice.call('PATCH', `${LIST}/${id}`, { url: `${PUBLIC_URL}/2` })).status, 200, 'a URL changed: the second');
    t.equal((await alice.call('POST', `${LIST}/${id}/ping`)).status, 202, 'a test ping: the third');

    for (const [what, answer] of [
      ['a fourth subscription', await alice.call('POST', LIST, { url: PUBLIC_URL, kinds: ['events'] })],
      ['a URL changed again', await alice.call('PATCH', `${LIST}/${id}`, { url: `${PUBLIC_URL}/3` })],
      ['another ping', await alice.call('POST', `${LIST}/${id}/ping`)],
    ] as const) {
      t.equal(answer.status, 429, `${what}: 429`);
      t.match(answer.headers.get('content-type'), /^application\/problem\+json/, `${what}: a problem body`);
      t.match(answer.body, { status: 429, code: 'throttled', detail: /^Rate limit exceeded: at most 3 webhook subscriptions made, URLs changed and test pings sent per minute per account\. Retry in \d+ seconds?\.$/ });
      t.match(answer.headers.get('retry-after'), /^\d+$/, `${what}: Retry-After`);
    }
    const stored = await p.sql<{ url: string }[]>`SELECT url FROM webhook_subscriptions WHERE user_id = ${ACCOUNTS.none}`;
    t.same(stored.map((r) => r.url), [`${PUBLIC_URL}/2`], 'nothing refused was stored or changed');
    t.equal((await alice.call('PATCH', `${LIST}/${id}`, { description: 'still mine' })).status, 200, 'a change that reaches nowhere is not counted');
    t.equal((await alice.call('GET', LIST)).status, 200, 'reading is not counted');
    t.equal((await staff.call('POST', LIST, { url: PUBLIC_URL, kinds: ['events'] })).status, 201, 'another account has its own budget');
  });

  t.test('no portal request waits past PORTAL_REQUEST_TIMEOUT, whatever it waits on', async (t) => {
    const pg = await privatePostgres(t);
    const p = await startTestPlatform(t, {
      fixture: portalFixture(),
      env: { DATABASE_URL: pg.url('hrs_portal_deadline'), DATABASE_TIMEOUT: '30', PORTAL_REQUEST_TIMEOUT: '1', WEBHOOK_SECRET_KEY: randomBytes(32).toString('hex'), LOG_LEVEL: 'warn' },
    });
    const alice = await signedIn(p, ACCOUNTS.none);
    t.equal((await alice.call('GET', LIST)).status, 200, 'answered while PostgreSQL runs');
    pg.freeze();
    t.teardown(() => pg.thaw());
    const headers = { Origin: p.url, Cookie: alice.cookie!, 'Content-Type': 'application/json' };
    const [read, change] = await Promise.all([
      timedCall('a read', `${p.url}${LIST}`, { headers }),
      timedCall('a change', `${p.url}${LIST}`, { method: 'POST', headers, body: JSON.stringify({ url: PUBLIC_URL, kinds: ['events'] }) }),
    ]);
    pg.thaw();
    for (const answer of [read, change]) {
      t.equal(answer.status, 503, `${answer.name}: 503 (${Math.round(answer.ms)} ms)`);
      // A generous bound on a deadline of 1 s: DATABASE_TIMEOUT (30 s) would answer far later.
      t.ok(answer.ms < 8000, `${answer.name}: answered by the deadline, not by DATABASE_TIMEOUT`);
      t.equal(answer.retryAfter, '5', `${answer.name}: Retry-After`);
      t.match(answer.type, /^application\/problem\+json/, `${answer.name}: a problem body`);
    }
    t.match(JSON.parse(read.body), { code: 'service_unavailable', detail: 'The platform could not answer within 1 second: try again later.' });
    t.match(JSON.parse(change.body), { code: 'service_unavailable', detail: /within 1 second: the change may still be applied\. Check before sending it again/ });
    t.ok(p.logs.lines.some((l) => l.msg === 'request not answered within its deadline'), 'logged as a warning');
  });
});

t.test('webhooks-recorder', async (t) => {
  /**
   * The change log's `status` and `option` rows that every server instance records for webhooks
   * (src/push/webhooks/recorder.ts): nothing without a subscription that wants them, a row per status change
   * and per changed five-state value of a fuelling option after an import v2 signal, the freshness
   * fallback's rows, and one row per change when two instances on one database both see it; on its own
   * (a registry, a live status and a PostgreSQL of the test's): the buffer while PostgreSQL fails, the
   * change keys, the options' rows as a station closes and opens.
   */
  function fixture() {
    const f = baseFixture();
    f.assignments = berlaAssignments();
    return f;
  }

  interface LogRow {
    seq: string;
    topic: string;
    hrs_id: string;
    entity: string;
    change: string;
    change_key: string | null;
    payload: Record<string, any>;
  }

  const rows = (p: TestPlatform) =>
    p.sql<LogRow[]>`SELECT seq, topic, hrs_id, entity, change, change_key, payload FROM change_log WHERE topic IN ('status', 'option') ORDER BY seq`;

  /** An active subscription of alice's for `kinds` (the columns the recorder reads; the secret is no concern here). */
  async function subscribe(p: TestPlatform, kinds: string[]): Promise<string> {
    const id = `wh_${randomBytes(8).toString('hex')}`;
    await p.sql`
    INSERT INTO webhook_subscriptions (id, user_id, url, kinds, cursor_seq, secret_sealed)
    VALUES (${id}, 'alice', 'http://127.0.0.1:9/hook', ${kinds}, 0, ${Buffer.from([0])})`;
    return id;
  }

  /** Waits until the instance records exactly `topics` (it reads the subscriptions every TOPICS_EVERY_MS). */
  async function recording(p: TestPlatform, topics: string[]): Promise<void> {
    const want = [...topics].sort().join();
    await until(
      `the recorder to take topics ${want}`,
      () => {
        const told = p.logs.lines.filter((l) => l.msg === 'webhook changes recorded for these topics').at(-1);
        return told && [...(told.topics as string[])].sort().join() === want ? true : undefined;
      },
      TOPICS_EVERY_MS + 5000,
    );
  }

  const ago = (seconds: number) => new Date(Date.now() - seconds * 1000).toISOString();

  const availability = (datetime: string, n1 = true) => [
    { hrs: 'BERLA', datetime, nozzles: [{ id: 'N1', available: n1 }, { id: 'N2', available: false }], station: { maintenance: false, limitedly_available: false } },
  ];

  async function statusOf(p: TestPlatform): Promise<Record<string, any>> {
    const res = await get(`${p.url}/v2/hrs/BERLA/status`, TOKENS.export_v2);
    return (await res.json()) as Record<string, any>;
  }

  /** The webhook change counter of an instance's /metrics, by `topic outcome`. */
  async function counted(p: TestPlatform): Promise<Record<string, number>> {
    const text = await (await get(`${p.url}/metrics`, ADMIN_TOKEN)).text();
    const out: Record<string, number> = {};
    for (const m of text.matchAll(/^hrs_webhook_change_rows_total\{topic="(\w+)",outcome="(\w+)"\} (\d+)/gm)) out[`${m[1]} ${m[2]}`] = Number(m[3]);
    return out;
  }

  const settle = () => new Promise((resolve) => setTimeout(resolve, 400));

  t.test('nothing without a subscription; a changed signal gives the status row and a row per changed fuelling option', async (t) => {
    const p = await startTestPlatform(t, { fixture: fixture() });
    await postSignals(p, 'availability', availability(ago(60)));
    await settle();
    t.same(await rows(p), [], 'no subscription: no rows');

    // Only station_status wanted: status rows, no option rows. The status held when it became wanted is no change.
    await subscribe(p, ['station_status', 'events']);
    await recording(p, ['status']);
    const first = ago(30);
    await postSignals(p, 'availability', availability(first, false));
    const status = await until('the status row', async () => ((await rows(p)).length > 0 ? rows(p) : undefined));
    await settle();
    t.equal((await rows(p)).length, 1, 'one row, no option rows');
    const published = await statusOf(p);
    t.match(status[0], { topic: 'status', hrs_id: 'BERLA', entity: 'BERLA/availability', change: 'changed' });
    t.same(status[0]!.payload, { category: 'availability', freshness: 'fresh', status: published.availability }, 'the section as GET /v2/hrs/BERLA/status shows it');
    t.match(status[0]!.change_key, /^status\|BERLA\|availability\|/);

    // Both kinds: the next signal gives its status row and a row per option whose verdict changed, in this order.
    await subscribe(p, ['fuelling_options']);
    await recording(p, ['status', 'option']);
    const second = ago(20);
    await postSignals(p, 'availability', availability(second));
    const after = await until('two more rows', async () => {
      const all = await rows(p);
      return all.length >= 3 ? all : undefined;
    });
    await settle();
    t.equal((await rows(p)).length, 3, '350ld stayed UNAVAILABLE: no row of its own');
    t.same(after.slice(1).map((r) => r.topic), ['status', 'option']);
    t.ok(after.every((r, i) => i === 0 || BigInt(r.seq) > BigInt(after[i - 1]!.seq)), 'seq ascending');
    const at = new Date(second).toISOString();
    t.same(
      after.slice(2).map((r) => ({ entity: r.entity, payload: r.payload })),
      [{ entity: 'BERLA/700ld', payload: { fuelling_option: '700ld', status: 'AVAILABLE', reason: 'reported_available', datetime: at } }],
      'the export v1.1 summary of the option that changed',
    );
    const summary = (await (await get(`${p.url}/v1.1/hrs/BERLA/status`, TOKENS.export_v1)).json()) as { fuelling_options: { status: string; datetime: string | null }[] };
    t.same(summary.fuelling_options.map((o) => [o.status, o.datetime && new Date(o.datetime).toISOString()]), [['AVAILABLE', at], ['UNAVAILABLE', at]], 'as export v1.1 answers');

    // The same reading again, and a later one with the same states: only the times moved, so no row at all.
    await postSignals(p, 'availability', availability(second));
    await postSignals(p, 'availability', availability(ago(15)));
    // A change after them is recorded: the rows before it would have come first.
    await postSignals(p, 'availability', availability(ago(10), false));
    const changed = await until('the next change\'s rows', async () => {
      const all = await rows(p);
      return all.length >= 5 ? all : undefined;
    });
    await settle();
    t.equal((await rows(p)).length, 5, 'the readings that only moved the time made none');
    t.same(changed.slice(3).map((r) => `${r.entity} ${r.topic === 'option' ? r.payload.status : (r.payload.status as any).nozzles?.length}`), ['BERLA/availability 2', 'BERLA/700ld UNAVAILABLE']);
    t.same(await counted(p), { 'status written': 3, 'option written': 2 }, 'counted on /metrics');

    // No subscription any more: nothing recorded.
    await p.sql`UPDATE webhook_subscriptions SET state = 'disabled'`;
    await recording(p, []);
    await postSignals(p, 'availability', availability(ago(5)));
    await settle();
    t.equal((await rows(p)).length, 5, 'subscriptions disabled: no rows');
  });

  t.test('two instances on one database: one row per change, the freshness fallback included', async (t) => {
    const a = await startTestPlatform(t, { fixture: fixture(), env: { STATUS_STALE_AFTER: '1', STATUS_UNKNOWN_AFTER: '2' } });
    const b = await startTestPlatform(t, { sameStoreAs: a });
    await subscribe(a, ['station_status', 'fuelling_options']);
    await Promise.all([recording(a, ['status', 'option']), recording(b, ['status', 'option'])]);
    const datetime = new Date().toISOString();
    await postSignals(a, 'availability', availability(datetime));
    // fresh, stale, unknown: three status rows; the options' values, then UNKNOWN no_signal.
    const all = await until('the fallback recorded', async () => {
      const found = await rows(a);
      return found.some((r) => r.topic === 'option' && r.payload.reason === 'no_signal') && found.some((r) => r.payload.freshness === 'unknown') ? found : undefined;
    }, 15_000);
    await settle();
    t.equal((await rows(a)).length, all.length, 'nothing more came');
    const status = all.filter((r) => r.topic === 'status');
    t.same(status.map((r) => r.payload.freshness), ['fresh', 'stale', 'unknown'], 'one row per freshness, however many instances saw it');
    t.equal(status[1]!.payload.status.freshness, 'stale', 'the stale section says so');
    t.equal(status[2]!.payload.status, null, 'unknown: not published');
    const options = all.filter((r) => r.topic === 'option').map((r) => `${r.payload.fuelling_option} ${r.payload.status} ${r.payload.reason}`);
    t.same(options, ['700ld AVAILABLE reported_available', '350ld UNAVAILABLE reported_unavailable', '700ld UNKNOWN no_signal', '350ld UNKNOWN no_signal']);
    t.equal(new Set(all.map((r) => r.change_key)).size, all.length, 'every key once');
    // Both instances recorded every change (each as it got to it); the log kept one row of each.
    const recorded = (c: Record<string, number>, topic: string) => (c[`${topic} written`] ?? 0) + (c[`${topic} duplicate`] ?? 0);
    const rowsOf = (topic: string) => all.filter((r) => r.topic === topic).length;
    const everything = async (p: TestPlatform) => {
      const c = await counted(p);
      return ['status', 'option'].every((topic) => recorded(c, topic) >= rowsOf(topic)) ? c : undefined;
    };
    const [ca, cb] = await Promise.all([until('a to record every change', () => everything(a), 10_000), until('b to record every change', () => everything(b), 10_000)]);
    for (const topic of ['status', 'option']) {
      t.equal(recorded(ca, topic), rowsOf(topic), `${topic}: a recorded every change once`);
      t.equal(recorded(cb, topic), rowsOf(topic), `${topic}: b recorded every change once`);
      t.equal((ca[`${topic} written`] ?? 0) + (cb[`${topic} written`] ?? 0), rowsOf(topic), `${topic}: written once between them`);
    }
  });

  t.test('registry changes: a section withdrawn and back, a station removed; once each over two instances', async (t) => {
    const a = await startTestPlatform(t, { fixture: fixture() });
    const b = await startTestPlatform(t, { sameStoreAs: a });
    await subscribe(a, ['station_status', 'fuelling_options']);
    await Promise.all([recording(a, ['status', 'option']), recording(b, ['status', 'option'])]);
    const datetime = ago(10);
    await postSignals(a, 'availability', availability(datetime));
    await postSignals(a, 'pricing', [{ hrs: 'BERLA', datetime, products: [{ id: 'P700', gross_price: '13.850', currency: 'EUR' }] }]);
    await until('both status rows', async () => ((await rows(a)).filter((r) => r.topic === 'status').length === 2 ? true : undefined));
    const pricing = (await statusOf(a)).pricing;
    const reload = async (f: ReturnType<typeof fixture>) => {
      await a.load(f);
      await a.parts.bus.publish({ type: 'registry', hrs_ids: ['BERLA'], tokens: false });
    };
    const pricingRows = async (n: number) =>
      until(`${n} pricing rows`, async () => {
        const found = (await rows(a)).filter((r) => r.entity === 'BERLA/pricing');
        return found.length >= n ? found : undefined;
      });

    const f = fixture();
    f.assignments = berlaAssignments('testing');
    await reload(f);
    await pricingRows(2);
    f.assignments = berlaAssignments('live');
    await reload(f);
    const back = await pricingRows(3);
    t.same(back.map((r) => r.payload.status), [pricing, null, pricing], 'published, withdrawn (no live source), published again');
    t.match(back[1]!.change_key, /\|r\d+$/, 'a registry change: the registry version in its key');
    t.not(back[2]!.change_key, back[0]!.change_key, 'the same section again is a change of its own');

    f.stations = f.stations.filter((s) => s.hrs_id !== 'BERLA');
    f.assignments = f.assignments.filter((x) => x.hrs_id !== 'BERLA');
    await reload(f);
    const removed = await until('the removal rows', async () => {
      const found = (await rows(a)).filter((r) => r.topic === 'status').slice(4);
      return found.length >= 2 ? found : undefined;
    });
    await new Promise((resolve) => setTimeout(resolve, 1000));
    const all = await rows(a);
    t.same(removed.map((r) => [r.entity, r.payload.freshness, r.payload.status]).sort(), [['BERLA/availability', null, null], ['BERLA/pricing', null, null]], 'the station left: its sections are gone');
    t.same(all.filter((r) => r.topic === 'option').map((r) => `${r.entity} ${r.payload.status}`), ['BERLA/700ld AVAILABLE', 'BERLA/350ld UNAVAILABLE'], 'the pricing assignment and the removal change no option value');
    t.equal(all.filter((r) => r.topic === 'status').length, 6, 'two signals, two registry changes of pricing, two removals: once each');
  });

  // --- the recorder on its own, over a registry, a live status and a PostgreSQL of the test's -----------

  const LAYOUT = {
    nozzles: new Map([['N1', { dispenser: 'D1', fuellingOptions: ['700ld'] }]]),
    dispensers: new Map([['D1', ['N1']]]),
    storages: new Set<string>(),
    products: new Set<string>(),
  };

  /** One station open 10:00-22:00 (UTC) with a held availability reading; PostgreSQL that can fail; listeners the test calls. */
  function world(options: { bufferRows?: number; kinds: string[] }) {
    let now = new Date('2026-11-30T21:59:00Z');
    let version = 1000;
    const station: StationEntry = { hrsId: 'BERLA', name: 'Berlin', heavyDuty: false, layout: LAYOUT, openingHours: 'Mo-Su 10:00-22:00', timeZone: 'UTC', point: null };
    const reading = { datetime: Date.parse('2026-11-30T21:58:00Z'), receivedAt: Date.parse('2026-11-30T21:58:01Z'), payload: { station: { maintenance: false, limitedly_available: false }, nozzles: [{ id: 'N1', available: true }] } };
    const statusListeners = new Set<(c: StatusChange) => void>();
    const openingListeners = new Set<(c: { hrsId: string }) => void>();
    const stored: RecordedChange[] = [];
    const keys = new Set<string>();
    const logs = logCapture();
    const counts: Record<string, number> = {};
    const w = {
      down: false,
      kinds: new Set(options.kinds),
      stored,
      logs,
      counts,
      setNow: (iso: string) => (now = new Date(iso)),
      bumpRegistry: () => version++,
      listeners: () => statusListeners.size + openingListeners.size,
      /** The usage section the live status holds when the status topic becomes wanted (null: none held). */
      held: null as Record<string, unknown> | null,
      change(datetime: number, cause: StatusChange['cause'] = 'signal', section: Record<string, unknown> | null = { datetime, value: datetime }, freshness: StatusChange['freshness'] = 'fresh') {
        for (const l of statusListeners) l({ hrsId: 'BERLA', category: 'usage', cause, previous: 'fresh', freshness, section, datetime, receivedAt: datetime, originatorId: 'mon-1' });
      },
      openingChanged: () => {
        for (const l of openingListeners) l({ hrsId: 'BERLA' });
      },
      recorder: undefined as unknown as ChangeRecorder,
    };
    w.recorder = new ChangeRecorder({
      stations: {
        station: (id) => (id === 'BERLA' ? station : undefined),
        stationIds: () => ['BERLA'][Symbol.iterator](),
        hasLiveSource: () => true,
        get loadedVersionUs() {
          return version;
        },
      },
      status: {
        published: () => ({ reading, freshness: 'fresh' }),
        availabilityVersion: 0,
        onChange: (l) => (statusListeners.add(l), () => statusListeners.delete(l)),
        categories: () => (w.held === null ? {} : { usage: { freshness: 'fresh', section: w.held } }),
      },
      opening: { onChange: (l) => (openingListeners.add(l), () => openingListeners.delete(l)) },
      wantedKinds: async () => w.kinds,
      write: async (rows) => {
        if (w.down) throw new Error('connection refused');
        const written: Record<string, number> = {};
        for (const row of rows) {
          if (keys.has(row.change_key)) continue;
          keys.add(row.change_key);
          stored.push(row);
          written[row.topic] = (written[row.topic] ?? 0) + 1;
        }
        return written;
      },
      log: createLogger('info', logs.stream),
      counted: (topic, outcome, n) => void (counts[`${topic} ${outcome}`] = (counts[`${topic} ${outcome}`] ?? 0) + n),
      now: () => now,
      topicsEveryMs: 60_000,
      bufferRows: options.bufferRows,
    });
    return w;
  }

  const flushed = () => new Promise((resolve) => setTimeout(resolve, FLUSH_DELAY_MS + 30));

  t.test('PostgreSQL failing: the rows wait in order, the oldest past the buffer are dropped and counted', async (t) => {
    const w = world({ bufferRows: 5, kinds: ['station_status'] });
    await w.recorder.start();
    t.teardown(() => w.recorder.close());
    w.down = true;
    for (let i = 1; i <= 3; i++) w.change(i);
    await flushed();
    t.same(w.stored, [], 'nothing written while it fails');
    t.equal(w.logs.lines.filter((l) => l.msg === 'recording webhook changes failed: they are kept and tried again').length, 1, 'warned once');
    for (let i = 4; i <= 8; i++) w.change(i);
    await until('the buffer to overflow', () => (w.counts['status dropped'] === 3 ? true : undefined), 5000);
    t.match(w.logs.lines.find((l) => l.msg === 'webhook changes dropped: PostgreSQL has not taken them and the buffer is full'), { level: 40, dropped: 3, kept: 5 });
    w.down = false;
    await until('the kept rows written', () => (w.stored.length === 5 ? true : undefined), RETRY_MS + 3000);
    t.same(w.stored.map((r) => r.payload.status), [4, 5, 6, 7, 8].map((datetime) => ({ datetime, value: datetime })), 'the newest five, in order');
    t.ok(w.logs.lines.some((l) => l.msg === 'webhook changes recorded again'), 'the recovery said');
    t.same(w.counts, { 'status dropped': 3, 'status written': 5, 'status duplicate': 0 });
    // The same change again: nothing a subscriber is told of moved, so no row is even made.
    w.change(8);
    await flushed();
    t.equal(w.stored.length, 5, 'a change recorded already is not recorded again');
    t.same(w.counts, { 'status dropped': 3, 'status written': 5, 'status duplicate': 0 }, 'nor written');
    // A registry change bringing back a section seen before is a change of its own.
    w.bumpRegistry();
    w.change(8, 'registry');
    await flushed();
    t.equal(w.stored.length, 6);
    t.match(w.stored[5]!.change_key, /\|r1001$/, 'the registry version in the key');
  });

  t.test('status rows only for what a subscriber is told of: not for a reading that only moves the time', async (t) => {
    const w = world({ kinds: [] });
    w.held = { datetime: '2026-11-30T21:50:00.000Z', received_datetime: '2026-11-30T21:50:01.000Z', freshness: 'fresh', nozzles: [{ id: 'N1', usage_status: 'free' }] };
    await w.recorder.start();
    t.teardown(() => w.recorder.close());
    w.kinds = new Set(['station_status']);
    await w.recorder.refreshTopics();
    const section = (minute: number, usage: string) => ({
      datetime: `2026-11-30T21:${minute}:00.000Z`,
      received_datetime: `2026-11-30T21:${minute}:01.000Z`,
      freshness: 'fresh',
      nozzles: [{ id: 'N1', usage_status: usage }],
    });
    w.change(Date.parse('2026-11-30T21:51:00Z'), 'signal', section(51, 'free'));
    await flushed();
    t.same(w.stored, [], 'the section held when the topic became wanted, a minute later: no row');
    w.change(Date.parse('2026-11-30T21:52:00Z'), 'signal', section(52, 'in_use'));
    await flushed();
    w.change(Date.parse('2026-11-30T21:53:00Z'), 'signal', section(53, 'in_use'));
    w.change(Date.parse('2026-11-30T21:54:00Z'), 'signal', section(54, 'in_use'));
    await flushed();
    t.same(w.stored.map((r) => (r.payload.status as any).nozzles[0].usage_status), ['in_use'], 'in use: one row, and none for the readings that followed it');
    w.change(Date.parse('2026-11-30T21:54:00Z'), 'freshness', { ...section(54, 'in_use'), freshness: 'stale' }, 'stale');
    await flushed();
    t.same(w.stored.map((r) => r.payload.freshness), ['fresh', 'stale'], 'turning stale is a change');
    w.change(Date.parse('2026-11-30T21:54:00Z'), 'freshness', null, 'unknown');
    w.change(Date.parse('2026-11-30T21:55:00Z'), 'signal', section(55, 'in_use'));
    await flushed();
    t.same(w.stored.map((r) => r.payload.freshness), ['fresh', 'stale', 'unknown', 'fresh'], 'unknown, then fresh again with the same usage: both told');
    t.same(w.counts, { 'status written': 4, 'status duplicate': 0 });
  });

  t.test('options: seeded without a row, a row per change of the opening period, none for what did not change', async (t) => {
    const w = world({ kinds: [] });
    await w.recorder.start();
    t.teardown(() => w.recorder.close());
    t.equal(w.listeners(), 0, 'no topic wanted: nothing listened to');
    w.kinds = new Set(['fuelling_options']);
    await w.recorder.refreshTopics();
    t.same([...w.recorder.topics], ['option']);
    t.equal(w.listeners(), 2, 'the live status and the opening clock');
    w.openingChanged();
    await flushed();
    t.same(w.stored, [], 'the value it started with is no change');
    w.change(Date.parse('2026-11-30T21:58:00Z'));
    await flushed();
    t.same(w.stored, [], 'a status change of another category leaves the options alone');

    const value = () => w.stored.map((r) => `${r.payload.status} ${r.payload.reason}`);
    w.setNow('2026-11-30T22:00:00Z');
    w.openingChanged();
    await flushed();
    w.setNow('2026-12-01T10:00:00Z');
    w.openingChanged();
    await flushed();
    w.openingChanged();
    await flushed();
    w.setNow('2026-12-01T22:00:00Z');
    w.openingChanged();
    await flushed();
    t.same(value(), ['CLOSED outside_opening_hours', 'AVAILABLE reported_available', 'CLOSED outside_opening_hours'], 'closed, open, closed again; nothing for a change that changed nothing');
    t.same(w.stored[0]!.payload, { fuelling_option: '700ld', status: 'CLOSED', reason: 'outside_opening_hours', datetime: '2026-11-30T21:58:00.000Z' });
    t.match(w.stored[0]!.change_key, `|p${Date.parse('2026-12-01T10:00:00Z')}|`, 'the period named by its end');
    t.equal(new Set(w.stored.map((r) => r.change_key)).size, 3, 'closed twice: two keys');
    t.same(w.stored.map((r) => r.entity), ['BERLA/700ld', 'BERLA/700ld', 'BERLA/700ld']);

    w.kinds = new Set();
    await w.recorder.refreshTopics();
    t.equal(w.listeners(), 0, 'no subscription any more: nothing listened to');
  });
});
