/**
 * One e-mail address rule (src/domain/text.ts `emailAddress`) wherever an address is accepted: sign-in,
 * the admin API's accounts and token owners, registry files' users, operators and station contacts,
 * and ADMIN_EMAILS. A domain label neither starts nor ends with a hyphen: `x@example-.org` was taken by
 * sign-in while `x@-example.org` was refused. The length is checked first (at most 254 characters).
 */
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import t from 'tap';
import { loadConfig } from '../../src/config/config.js';
import { emailAddress } from '../../src/domain/text.js';
import { FixtureError, loadFixture } from '../../src/registry/file/load.js';
import { ADMIN_TOKEN, startTestPlatform } from '../helpers/platform.js';
import { portalClient, portalFixture } from '../helpers/portal.js';

const p = await startTestPlatform(t, { fixture: portalFixture() });

const GOOD = ['alice@example.org', 'o\'neil+hrs@mail.example-h2.de', 'a_b-c.d@x1.example.co', 'x@1-2.org', `${'a'.repeat(64)}@${'b'.repeat(63)}.org`];
const BAD = [
  'x@example-.org', // a label ending with a hyphen
  'x@-example.org', // a label starting with a hyphen
  'x@mail.-example.org',
  'x@mail-.example.org',
  'x@example.-org',
  `x@${'b'.repeat(64)}.org`, // a label of more than 63 characters
  'x@example', // no top-level label
  'x@example.o', // a top-level label of one letter
  'x@example..org',
  '.x@example.org',
  'x.@example.org',
  'x..y@example.org',
  'x@@example.org',
  'x y@example.org',
  '@example.org',
  'x@',
];

t.test('the rule', async (t) => {
  const schema = emailAddress();
  for (const address of GOOD) t.ok(schema.safeParse(address).success, `${address}: accepted`);
  for (const address of BAD) t.same(schema.safeParse(address).error?.issues.map((i) => i.message), ['must be an e-mail address'], `${address}: refused`);
  const long = `${'a'.repeat(250)}@example.org`;
  t.same(schema.safeParse(long).error?.issues.map((i) => i.message), ['must be an e-mail address (at most 254 characters)'], 'the length first, alone');
  // Linear: the longest address the limit lets through, made to be refused as late as possible, at once.
  const started = performance.now();
  for (let i = 0; i < 200; i++) schema.safeParse(`${'a.'.repeat(60)}a@${'b-'.repeat(60)}-.org`);
  t.ok(performance.now() - started < 200, 'checked in well under a millisecond each');
});

t.test('no other e-mail check in the sources: every address goes through emailAddress', async (t) => {
  const found: string[] = [];
  const walk = async (dir: string): Promise<void> => {
    for (const entry of await readdir(dir, { withFileTypes: true })) {
      const path = join(dir, entry.name);
      if (entry.isDirectory()) await walk(path);
      else if (path.endsWith('.ts') && path !== join('src', 'domain', 'text.ts') && /\bz\.email\(|\.email\(\)/.test(await readFile(path, 'utf8'))) found.push(path);
    }
  };
  await walk('src');
  t.same(found, [], 'z.email is used only by src/domain/text.ts');
});

t.test('ADMIN_EMAILS: the same rule', async (t) => {
  t.throws(() => loadConfig({ ADMIN_EMAILS: 'ops@example.org,noc@example-.org' }), /ADMIN_EMAILS/);
  t.throws(() => loadConfig({ ADMIN_EMAILS: 'noc@-example.org' }), /ADMIN_EMAILS/);
  t.same(loadConfig({ ADMIN_EMAILS: 'ops@example.org, noc@h2-ops.example.org' }).adminEmails, ['ops@example.org', 'noc@h2-ops.example.org']);
});

t.test('sign-in, the admin API and registry files: both hyphen forms refused alike, in each one\'s format', async (t) => {
  const portal = portalClient(p);
  const admin = (path: string, body: unknown) =>
    fetch(`${p.url}${path}`, { method: 'POST', headers: { Authorization: `Bearer ${ADMIN_TOKEN}`, 'Content-Type': 'application/json' }, body: JSON.stringify(body) })
      .then(async (res) => ({ status: res.status, body: (await res.json()) as Record<string, unknown> }));
  const users = async () => (await p.sql`SELECT email FROM users ORDER BY email`).map((r) => r.email as string);
  const before = await users();
  for (const address of ['x@example-.org', 'x@-example.org']) {
    const signIn = await portal.call('POST', '/portal/v1/sign-in', { email: address });
    t.equal(signIn.status, 400, `sign-in ${address}: 400`);
    t.match(signIn.body, { code: 'invalid_body', detail: 'email: must be an e-mail address' }, `sign-in ${address}: a problem naming the field`);
    const account = await admin('/admin/v1/users', { email: address, name: 'X' });
    t.same(account, { status: 400, body: { detail: 'email: must be an e-mail address' } }, `admin account ${address}`);
    const owner = await admin('/admin/v1/personal-tokens', { email: address, token_name: 'laptop' });
    t.same(owner, { status: 400, body: { detail: 'email: must be an e-mail address' } }, `admin token owner ${address}`);
    for (const [where, change] of [
      ['users[0].email', (f: ReturnType<typeof portalFixture>) => ((f.users[0] as { email: string }).email = address)],
      ['operators[0].email', (f: ReturnType<typeof portalFixture>) => ((f.operators[0] as { email: string | null }).email = address)],
      ['stations[0].details.contact.email', (f: ReturnType<typeof portalFixture>) => ((f.stations[0] as { details: object }).details = { contact: { email: address } })],
    ] as const) {
      const fixture = portalFixture();
      change(fixture);
      const err = await loadFixture(p.sql, fixture, { baseDir: '.' }).catch((e: unknown) => e);
      t.ok(err instanceof FixtureError && err.problems.includes(`${where}: must be an e-mail address`), `registry file ${where} = ${address}: ${(err as Error).message}`);
    }
  }
  t.same(await users(), before, 'no account made');
  const good = await admin('/admin/v1/users', { email: 'x@example-h2.org', name: 'X' });
  t.equal(good.status, 201, 'a hyphen inside a label is fine');
  const signIn = await portal.call('POST', '/portal/v1/sign-in', { email: 'x@example-h2.org' });
  t.equal(signIn.status, 202, 'and that account can ask for a sign-in link');
});
