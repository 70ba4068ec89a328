import t from 'tap';
import { testConfig } from '../helpers/platform.js';
import { freePort, hrs, HRS, start, waitFor } from '../helpers/process.js';

/** `hrs serve` on a port another `hrs serve` listens on: refused with one line and exit 1, never shared. */
t.test('a second hrs serve on a busy port exits 1 with "cannot listen on HOST:PORT (address in use …)"', async (t) => {
  const config = testConfig(t);
  const port = await freePort();
  const env = { DATABASE_URL: config.databaseUrl, REDIS_PREFIX: config.redisPrefix, HOST: '127.0.0.1', PORT: String(port), LOG_LEVEL: 'warn' };
  const first = start(process.execPath, [HRS, 'serve', '--no-workers'], env);
  t.teardown(async () => {
    first.child.kill('SIGTERM');
    await first.exited;
  });
  await waitFor(`http://127.0.0.1:${port}/healthz`);

  const second = await hrs(['serve', '--no-workers'], env, 30_000);
  t.equal(second.code, 1, 'exit 1');
  const lines = second.stderr.trim().split('\n');
  t.equal(lines.length, 1, 'one line on stderr');
  t.equal(lines[0], `hrs serve: cannot listen on 127.0.0.1:${port} (address in use or not available)`);
  t.equal((await fetch(`http://127.0.0.1:${port}/healthz`)).status, 200, 'the first one goes on serving');
});
