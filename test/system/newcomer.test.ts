import t from 'tap';
import { testConfig } from '../helpers/platform.js';
import { freePort, run, start, waitFor } from '../helpers/process.js';

// What the README tells a newcomer: load the example fixture with npx, then `npm start`.
t.test('npx hrs load on the README example, then npm start, serve the example tokens', async (t) => {
  const config = testConfig(t);
  const port = await freePort();
  const env = { DATABASE_URL: config.databaseUrl, REDIS_PREFIX: config.redisPrefix, PORT: String(port) };

  const loaded = await run('npx', ['hrs', 'load', 'examples/fixture.json'], env, 120_000);
  t.equal(loaded.code, 0, loaded.stderr);
  t.match(loaded.stdout, /loaded examples\/fixture\.json: operators \+1/);

  const server = start('npm', ['start'], env, { detached: true });
  t.teardown(() => {
    try {
      process.kill(-server.child.pid!, 'SIGKILL');
    } catch {
      // already gone
    }
  });
  const url = `http://127.0.0.1:${port}`;
  await waitFor(`${url}/readyz`, 200, 60_000);

  const auth = (token: string) => ({ headers: { Authorization: `Bearer ${token}` } });
  let res = await fetch(`${url}/import/v2/active-stations/`, auth('example-import-v2-token'));
  t.equal(res.status, 200);
  t.match(await res.json(), { stations: { availability: { live: ['BERLA'], testing: ['HAMHD'] } } });
  res = await fetch(`${url}/v2/fuel-type`, auth('example-export-v2-token'));
  t.equal(res.status, 200);
  res = await fetch(`${url}/v2/fuel-type`, auth('example-export-v1-token'));
  t.equal(res.status, 401);

  process.kill(-server.child.pid!, 'SIGTERM');
  const exit = await server.exited;
  t.ok(exit.code === 0 || exit.signal === 'SIGTERM', `npm start stops on SIGTERM (${JSON.stringify(exit)})`);
});
