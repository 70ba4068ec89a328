import t from 'tap';
import { connect, isDatabaseUnavailable } from '../../db/connect.js';
import { classifyUnavailable } from '../../src/api/unavailable.js';
import { loadConfig, redactUrl } from '../../src/config/config.js';
import { freshDatabase } from '../helpers/platform.js';
import { blackhole } from '../helpers/private-services.js';
import { databaseHosts, databaseName, isHostList, sessionAttrs, withDatabase } from '../../src/config/database-url.js';

/** DATABASE_URL's forms, the one-host URL and libpq's host list, and the errors a failover makes clients meet. */

const LIST = 'postgres://hrs:s%40cret@db1.example:5432,10.0.0.2:5433,db3/hrs?target_session_attrs=read-write&sslmode=require';

t.test('a host list is a valid DATABASE_URL; each host is checked', async (t) => {
  t.equal(loadConfig({ DATABASE_URL: LIST }).databaseUrl, LIST, 'taken as it is');
  t.same(databaseHosts(LIST), [
    { host: 'db1.example', port: 5432 },
    { host: '10.0.0.2', port: 5433 },
    { host: 'db3', port: 5432 },
  ]);
  t.ok(isHostList(LIST));
  t.notOk(isHostList('postgres://postgres@127.0.0.1:5432/hrs'));
  t.same(databaseHosts('postgres://postgres@127.0.0.1/hrs'), [{ host: '127.0.0.1', port: 5432 }], 'one host: as before');
  t.same(databaseHosts('postgresql://[::1]:5433/hrs'), [{ host: '[::1]', port: 5433 }], 'an IPv6 address as the single host');
  for (const bad of [
    'postgres://h1:5432,h2:99999/hrs',
    'postgres://h1:5432,,h2/hrs',
    'postgres://h1:5432,h2:port/hrs',
    'postgres://h1,[::1]:5432/hrs',
    'mysql://h1,h2/hrs',
    'not a url',
  ]) {
    t.equal(databaseHosts(bad), undefined, `refused: ${bad}`);
    t.throws(() => loadConfig({ DATABASE_URL: bad }), /invalid configuration: DATABASE_URL must be a URL/);
  }
  t.throws(() => loadConfig({ DATABASE_URL: 'postgres://h1,h2:x/hrs' }), /DATABASE_URL must be a URL starting with postgres:\/\/ or postgresql:\/\/ \(several hosts: postgres:\/\/h1:5432,h2:5432/);
});

t.test('the database, its replacement and the session attributes of a host list', async (t) => {
  t.equal(databaseName(LIST), 'hrs');
  t.equal(databaseName('postgres://h1,h2/my%20db'), 'my db');
  t.equal(databaseName('postgres://h1:1,h2:2'), '', 'none named');
  t.equal(
    withDatabase(LIST, 'postgres'),
    'postgres://hrs:s%40cret@db1.example:5432,10.0.0.2:5433,db3/postgres?target_session_attrs=read-write&sslmode=require',
    'every host, the user and the parameters kept',
  );
  t.equal(withDatabase('postgres://postgres@127.0.0.1:5432/hrs', 'postgres'), 'postgres://postgres@127.0.0.1:5432/postgres');
  t.equal(sessionAttrs(LIST), 'read-write');
  t.equal(sessionAttrs('postgres://h1/hrs'), null);
});

t.test('redactUrl hides the password of a host list and keeps every host', async (t) => {
  t.equal(redactUrl(LIST), 'postgres://hrs:***@db1.example:5432,10.0.0.2:5433,db3/hrs?target_session_attrs=read-write&sslmode=require');
  t.equal(redactUrl('postgres://h1:5432,h2:5433/hrs'), 'postgres://h1:5432,h2:5433/hrs', 'no password: as given');
  t.equal(redactUrl('postgres://u:pw@127.0.0.1:5432/hrs'), 'postgres://u:***@127.0.0.1:5432/hrs', 'one host: as before');
  t.equal(redactUrl('redis://:pw@127.0.0.1:6379'), 'redis://:***@127.0.0.1:6379', 'other URLs: as before');
  t.equal(redactUrl('postgres://u:pw@h1,h2:x/hrs'), 'postgres://u:***@h1,h2:x/hrs', 'a malformed host list: still without its password');
  t.equal(redactUrl('not a url'), '(unparseable URL)');
  t.throws(() => loadConfig({ DATABASE_URL: 'postgres://u:pw@h1,h2:x/hrs' }), /\(got "postgres:\/\/u:\*\*\*@h1,h2:x\/hrs"\)/, 'a refused URL is repeated without its password');
});

t.test('what a client meets on a standby or a server being promoted is unavailable (503), never a 500', async (t) => {
  for (const [code, what] of [
    ['25006', 'read_only_sql_transaction: a write on a standby'],
    ['57P01', 'admin_shutdown'],
    ['57P02', 'crash_shutdown'],
    ['57P03', 'cannot_connect_now: the database system is starting up / in recovery'],
    ['ECONNREFUSED', 'connection refused'],
    ['CONNECTION_CLOSED', 'the connection dropped'],
  ]) {
    const err = Object.assign(new Error(what), { code });
    t.ok(isDatabaseUnavailable(err), `${code}: ${what}`);
    t.match(classifyUnavailable(err), { status: 503, options: { headers: { 'Retry-After': '5' } } });
  }
  t.notOk(isDatabaseUnavailable(Object.assign(new Error('unique'), { code: '23505' })), 'a statement that was wrong stays an error');
});

t.test('a host list whose first host is a lost machine (accepts, never answers): the pool moves on and stays on the next', async (t) => {
  const hole = await blackhole(t);
  const { config, sql: direct } = await freshDatabase(t);
  const server = new URL(config.databaseUrl).host;
  const url = `${config.databaseUrl.replace(server, `127.0.0.1:${hole.port},${server}`)}?target_session_attrs=read-write`;
  const sql = connect(url, { timeoutMs: 1000, max: 4, connection: { application_name: 'host-list-test' } });
  t.teardown(() => sql.end({ timeout: 0 }));
  const first = await sql`SELECT 1`.catch((err: unknown) => err);
  t.ok(isDatabaseUnavailable(first), 'the first connection waited on the lost host: unavailable');
  // The pool moves on once the lost host's connection is closed (its connect timeout).
  const parallel = () => Promise.allSettled(Array.from({ length: 12 }, () => sql`SELECT pg_sleep(0.05)`));
  for (let tries = 0; tries < 10 && (await parallel()).some((r) => r.status === 'rejected'); tries++);
  // Every connection of the pool is dropped (a restart of the server, say): each opens again on the host that answered.
  await direct`SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = 'host-list-test'`;
  while ((await direct`SELECT 1 FROM pg_stat_activity WHERE application_name = 'host-list-test'`).length > 0);
  // The pool reads the end of its connections.
  await new Promise((resolve) => setTimeout(resolve, 200));
  const results = await parallel();
  t.same(results.map((r) => r.status), Array(12).fill('fulfilled'), 'no connection went back to the lost host');
});
