import t from 'tap';
import { SANDBOX_TOKEN } from '../../src/domain/sandbox.js';
import { until } from '../helpers/wait.js';
import { connect } from '../../db/connect.js';
import { isAbsolute, join } from 'node:path';
import { readdir, readFile, stat } from 'node:fs/promises';
import { randomBytes } from 'node:crypto';
import { hashSecret } from '../../src/api/secrets.js';
import { DEMO_ADMIN_TOKEN, DEMO_LEGACY_STATIONS, DEMO_TOKENS, DEMO_USER_EMAIL, demoFixture } from '../../src/cli/demo/fixture.js';
import { readPhoto } from '../../src/registry/file/photo.js';
import { testConfig } from '../helpers/platform.js';
import { HRS, freePort, start, waitFor } from '../helpers/process.js';
import { datex2Errors } from '../helpers/datex2.js';

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
  // The banner comes once the week of history is backfilled, and the originator starts with it.
  await until('the banner', () => (/Stop with Ctrl-C/.test(demo.output()) ? true : undefined), 120_000);
  const sql = connect(config.databaseUrl);
  t.teardown(() => sql.end({ timeout: 1 }));

  let rows: { category: string; n: number }[] = [];
  for (let i = 0; i < 100; i++) {
    rows = [...(await sql<{ category: string; n: number }[]>`
      SELECT category, count(*)::int AS n FROM published_signals WHERE originator_id <> 'sandbox-simulator' GROUP BY category ORDER BY category`)];
    if (rows.length === 4 && rows.every((r) => r.n === 12)) break;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  t.same(rows, [
    { category: 'availability', n: 12 },
    { category: 'hydrogen-storage', n: 12 },
    { category: 'pricing', n: 12 },
    { category: 'usage', n: 12 },
  ]);
  const before = (await sql`SELECT count(*)::int AS n FROM signal_history WHERE originator_id <> 'sandbox-simulator'`)[0]!.n;
  await new Promise((resolve) => setTimeout(resolve, 2500));
  const after = (await sql`SELECT count(*)::int AS n FROM signal_history WHERE originator_id <> 'sandbox-simulator'`)[0]!.n;
  t.ok(after >= before + 36, `signals keep coming (${before} → ${after})`);

  t.match(demo.output(), new RegExp(`export v2 token: ${DEMO_TOKENS.export_v2}`));
  t.match(demo.output(), /^ {2}PostgreSQL: postgres:\/\/\S+, named by DATABASE_URL$/m, 'the banner says which PostgreSQL, and that the environment named it');
  t.match(
    demo.output(),
    new RegExp(`^ {2}Redis: redis://\\S+, (named by REDIS_URL|found running on its default port \\(REDIS_URL is not set\\)); namespace ${config.redisPrefix} \\(REDIS_PREFIX\\)$`, 'm'),
    'and which Redis, whether it was found running, and the namespace there',
  );
  t.match(demo.output(), new RegExp(`live dashboard: ${url}/admin/ \\(admin token: ${DEMO_ADMIN_TOKEN}\\)`));
  t.match(demo.output(), new RegExp(`public map: ${url}/ \\(no token; the feed: ${url}/map/v1/stations\\.geojson\\)`), 'the public map first');
  t.equal((await fetch(`${url}/admin/`)).status, 200, 'the dashboard is served');
  // Webhooks work with no setting: the demo's own key in its state folder, receivers on this machine allowed.
  const keyLine = /webhooks: on the portal's Webhooks page \(their secrets sealed with a key kept in (\S+); receivers on this machine allowed\)/.exec(demo.output());
  t.ok(keyLine, 'the banner says where the webhook key is kept');
  if (keyLine) t.equal((await stat(keyLine[1]!)).mode & 0o777, 0o600, 'the key is readable by its owner only');
  const [user] = await sql<{ id: string }[]>`SELECT id FROM users WHERE lower(email) = ${DEMO_USER_EMAIL}`;
  const session = randomBytes(32).toString('base64url');
  await sql`INSERT INTO portal_sessions (hash, user_id, expires_at) VALUES (${hashSecret(session)}, ${user!.id}, clock_timestamp() + interval '1 hour')`;
  const subscribed = await fetch(`${url}/portal/v1/webhooks`, {
    method: 'POST',
    headers: { Origin: url, Cookie: `hrs_portal=${session}`, 'Content-Type': 'application/json' },
    body: JSON.stringify({ url: 'http://127.0.0.1:9/hook', kinds: ['events'] }),
  });
  t.equal(subscribed.status, 201, 'the demo user subscribes a receiver on this machine');
  const calls = await fetch(`${url}/admin/v1/call-logs`, { headers: { Authorization: `Bearer ${DEMO_ADMIN_TOKEN}` } });
  t.not(calls.status, 401, 'the demo admin token works');
  const res = await fetch(`${url}/import/v2/active-stations/`, { headers: { Authorization: `Bearer ${DEMO_TOKENS.import_v2}` } });
  t.equal((await res.json()).stations.pricing.live.length, 12);
  t.equal((await fetch(`${url}/v2/fuel-type`, { headers: { Authorization: `Bearer ${DEMO_TOKENS.export_v2}` } })).status, 200);
  const exported = (path: string) => fetch(`${url}/v2${path}`, { headers: { Authorization: `Bearer ${DEMO_TOKENS.export_v2}` } });
  const photo = await exported('/hrs/BERAP/photo');
  t.equal(photo.status, 200, 'a station has a photo');
  t.equal(photo.headers.get('content-type'), 'image/png');
  t.ok((await photo.arrayBuffer()).byteLength > 1000, 'an image, not a placeholder');
  const upcoming = await exported('/hrs/BERAP/events');
  t.equal(upcoming.status, 200);
  t.match(await upcoming.json(), [{ kind: 'maintenance' }], 'an upcoming event');
  const ongoing = await exported('/hrs/HAMPT/events');
  t.match(await ongoing.json(), [{ kind: 'limited-service' }], 'an ongoing event');
  t.notMatch(demo.output(), /transmission refused/, 'the simulated originator never sends anything the platform refuses');
  const legacy = await sql<{ hrs_id: string; source: string }[]>`
    SELECT hrs_id, payload->>'source' AS source FROM published_signals
    WHERE category = 'availability' AND payload ? 'source' AND originator_id <> 'sandbox-simulator' ORDER BY hrs_id`;
  t.same(legacy, DEMO_LEGACY_STATIONS.map((hrs_id) => ({ hrs_id, source: 'import_v1.1' })).sort((a, b) => a.hrs_id.localeCompare(b.hrs_id)), 'the legacy originator reports its stations through import v1.1');
  const copen = await exported('/hrs/COPEN/status');
  t.match(await copen.json(), { availability: { nozzles: [], fuelling_options: [{ fuelling_option: '700ld' }] } }, 'shown per fuelling option on export v2');
  t.match(demo.output(), new RegExp(`import v1/v1\\.1 token: ${DEMO_TOKENS.import_v1}`));
  const summary = await fetch(`${url}/v1.1/hrs/status`, { headers: { Authorization: `Bearer ${DEMO_TOKENS.export_v1}` } });
  t.equal(summary.status, 200, 'the five-state summary with the demo export v1 token');
  const stations = (await summary.json()) as { hrs_id: string; fuelling_options: { status: string }[] }[];
  t.equal(stations.length, 12);
  t.ok(stations.every((s) => s.fuelling_options.length > 0), 'every demo station provides options');

  // The DATEX II publications of the living demo: every station, valid against the 3.7 schema set.
  t.match(demo.output(), new RegExp(`DATEX II publications: ${url}/datex2/v3/table and ${url}/datex2/v3/status`), 'the banner names them');
  const datex2 = (path: string) => fetch(`${url}/datex2/v3/${path}`, { headers: { Authorization: `Bearer ${DEMO_TOKENS.export_v2}` } }).then((r) => r.text());
  const table = await datex2('table');
  const status = await datex2('status');
  t.same(await datex2Errors(table, status), [], 'the demo\'s DATEX II table and status are valid');
  t.equal(table.match(/<aegi:energyInfrastructureSite /g)?.length, 12, 'every demo station is a site');
  t.equal(status.match(/<aegi:energyInfrastructureSiteStatus>/g)?.length, 12, 'and has a status');
  t.match(status, /<aegi:energyRateUpdate>/, 'prices as rate updates');
  t.match(status, /<aegi:status>(available|occupied|reserved|outOfOrder)<\/aegi:status>/, 'signals give refill points their status');
  t.match(demo.output(), new RegExp(`export v1\\.1 sandbox token: ${SANDBOX_TOKEN.replace(/\./g, '\\.')} \\(public; 8 sample stations`), 'the banner publishes the sandbox token');
  const sandbox = await until('the first simulated sandbox readings', async () => {
    const r = await fetch(`${url}/v1.1/hrs/SBXBE/status`, { headers: { Authorization: `Bearer ${SANDBOX_TOKEN}` } });
    const body = (await r.json()) as { fuelling_options: { datetime: string | null; status: string }[] };
    return body.fuelling_options[0]?.datetime ? body : undefined;
  });
  t.equal(sandbox.fuelling_options[0]!.status, 'AVAILABLE', 'the sandbox runs in the demo, its signals simulated by the worker');

  // The e-mails: without SMTP_URL, kept as .eml files by a local SMTP sink; a sign-in link shows the way in.
  const folder = /kept as \.eml files in (\S+)/.exec(demo.output())?.[1];
  t.ok(folder, 'the banner says where the e-mails are kept');
  t.match(
    demo.output(),
    new RegExp(`portal: ${url}/portal/ \\(sign in with a link e-mailed to demo-user@demo-h2\\.example: API tokens; staff@demo-h2\\.example: operator staff; manager@demo-monitoring\\.example: originator manager\\)`),
    'the banner names the portal accounts of each role',
  );
  const asked = await fetch(`${url}/portal/v1/sign-in`, {
    method: 'POST',
    headers: { Origin: url, 'Content-Type': 'application/json' },
    body: JSON.stringify({ email: 'demo-user@demo-h2.example' }),
  });
  t.equal(asked.status, 202);
  const eml = await until('the sign-in e-mail in the folder', async () => {
    const names = await readdir(folder!).catch(() => [] as string[]);
    for (const name of names.filter((n) => n.endsWith('.eml'))) {
      const text = await readFile(join(folder!, name), 'utf8');
      if (text.includes('#sign-in=')) return text;
    }
    return undefined;
  });
  t.match(eml, /^To: demo-user@demo-h2\.example/m, 'a real message, as the SMTP sink received it');

  demo.child.kill('SIGTERM');
  t.same(await demo.exited, { code: 0, signal: null });
});

t.test('the demo photos are found wherever hrs demo is started from, and every event is to come or ongoing', async (t) => {
  const now = Date.now();
  const stations = demoFixture(now).stations;
  const photos = stations.flatMap((s) => (s.photo === null ? [] : [s.photo]));
  t.ok(photos.length >= 3, 'several stations have a photo');
  for (const path of photos) {
    t.ok(isAbsolute(path), `${path} is absolute`);
    t.equal((await readPhoto('/nonexistent-working-directory', path)).mediaType, 'image/png', 'readable whatever the base directory');
  }
  const events = stations.flatMap((s) => s.events);
  t.ok(events.length >= 3, 'several events');
  for (const event of events) t.ok(event.ends_at === null || Date.parse(event.ends_at) > now, `${event.id} is not over`);
});
