import t from 'tap';
import { connect } from '../db/connect.js';
import { DEMO_ADMIN_TOKEN, DEMO_TOKENS } from '../src/cli/demo/fixture.js';
import { testConfig } from './helpers/platform.js';
import { HRS, freePort, start, waitFor } from './helpers/process.js';

t.test('hrs demo serves a living platform: every station gets all four signal types', async (t) => {
  const config = testConfig(t);
  const port = await freePort();
  const demo = start(process.execPath, [HRS, 'demo', '--interval', '1'], {
    DATABASE_URL: config.databaseUrl,
    REDIS_PREFIX: config.redisPrefix,
    PORT: String(port),
    LOG_LEVEL: 'warn',
  });
  t.teardown(() => demo.child.kill('SIGKILL'));
  const url = `http://127.0.0.1:${port}`;
  await waitFor(`${url}/readyz`);
  const sql = connect(config.databaseUrl);
  t.teardown(() => sql.end({ timeout: 1 }));

  let rows: { category: string; n: number }[] = [];
  for (let i = 0; i < 100; i++) {
    rows = [...(await sql<{ category: string; n: number }[]>`SELECT category, count(*)::int AS n FROM published_signals GROUP BY category ORDER BY category`)];
    if (rows.length === 4 && rows.every((r) => r.n === 12)) break;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  t.same(rows, [
    { category: 'availability', n: 12 },
    { category: 'hydrogen-storage', n: 12 },
    { category: 'pricing', n: 12 },
    { category: 'usage', n: 12 },
  ]);
  const before = (await sql`SELECT count(*)::int AS n FROM signal_history`)[0]!.n;
  await new Promise((resolve) => setTimeout(resolve, 2500));
  const after = (await sql`SELECT count(*)::int AS n FROM signal_history`)[0]!.n;
  t.ok(after >= before + 36, `signals keep coming (${before} → ${after})`);

  t.match(demo.output(), new RegExp(`export v2 token: ${DEMO_TOKENS.export_v2}`));
  t.match(demo.output(), new RegExp(`live dashboard: ${url}/admin/ \\(admin token: ${DEMO_ADMIN_TOKEN}\\)`));
  t.equal((await fetch(`${url}/admin/`)).status, 200, 'the dashboard is served');
  const calls = await fetch(`${url}/admin/v1/call-logs`, { headers: { Authorization: `Bearer ${DEMO_ADMIN_TOKEN}` } });
  t.not(calls.status, 401, 'the demo admin token works');
  const res = await fetch(`${url}/import/v2/active-stations/`, { headers: { Authorization: `Bearer ${DEMO_TOKENS.import_v2}` } });
  t.equal((await res.json()).stations.pricing.live.length, 12);
  t.equal((await fetch(`${url}/v2/fuel-type`, { headers: { Authorization: `Bearer ${DEMO_TOKENS.export_v2}` } })).status, 200);
  t.notMatch(demo.output(), /transmission refused/, 'the simulated originator never sends anything the platform refuses');

  demo.child.kill('SIGTERM');
  t.same(await demo.exited, { code: 0, signal: null });
});
