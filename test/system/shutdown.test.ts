import t from 'tap';
import { connect as netConnect } from 'node:net';
import { testConfig } from '../helpers/platform.js';
import { HRS, freePort, start, waitFor } from '../helpers/process.js';

async function serve(test: Parameters<typeof testConfig>[0], env: Record<string, string>) {
  const config = testConfig(test);
  const port = await freePort();
  const server = start(process.execPath, [HRS, 'serve'], {
    DATABASE_URL: config.databaseUrl,
    REDIS_PREFIX: config.redisPrefix,
    PORT: String(port),
    LOG_LEVEL: 'info',
    ...env,
  });
  test.teardown(() => {
    server.child.kill('SIGKILL');
  });
  const url = `http://127.0.0.1:${port}`;
  await waitFor(`${url}/readyz`);
  return { server, url };
}

t.test('SIGTERM: readiness turns 503 first, then the server stops in order and exits 0', async (t) => {
  const { server, url } = await serve(t, { SHUTDOWN_DELAY: '2' });
  server.child.kill('SIGTERM');
  await new Promise((resolve) => setTimeout(resolve, 300));
  const res = await fetch(`${url}/readyz`);
  t.equal(res.status, 503, 'load balancers are told first');
  t.same(await res.json(), { status: 'shutting-down' });
  t.equal((await fetch(`${url}/healthz`)).status, 200, 'the process is still alive while it drains');
  const exit = await server.exited;
  t.same(exit, { code: 0, signal: null }, 'a clean exit');
  await t.rejects(fetch(`${url}/healthz`), 'no longer listening');
  const messages = server
    .output()
    .split('\n')
    .filter((l) => l.startsWith('{'))
    .map((l) => JSON.parse(l).msg);
  const order = ['listening', 'shutting down', 'stopped'].map((m) => messages.indexOf(m));
  t.ok(order.every((i, k) => i >= 0 && (k === 0 || i > order[k - 1]!)), `logged in order: ${messages.join(', ')}`);
});

t.test('SIGHUP (a closing terminal) stops in order as SIGTERM does', async (t) => {
  const { server, url } = await serve(t, {});
  server.child.kill('SIGHUP');
  t.same(await server.exited, { code: 0, signal: null }, 'a clean exit, not death by the signal');
  await t.rejects(fetch(`${url}/healthz`), 'no longer listening');
  t.match(server.output(), /"reason":"SIGHUP","msg":"shutting down"/);
});

t.test('a second signal exits at once', async (t) => {
  const { server } = await serve(t, { SHUTDOWN_DELAY: '60' });
  const started = Date.now();
  server.child.kill('SIGINT');
  await new Promise((resolve) => setTimeout(resolve, 300));
  server.child.kill('SIGINT');
  const exit = await server.exited;
  t.equal(exit.code, 1);
  t.ok(Date.now() - started < 10_000, 'without waiting for the 60 s delay');
  t.match(server.output(), /second signal: exiting at once/);
});

t.test('an idle keep-alive connection does not keep the process alive', async (t) => {
  const { server, url } = await serve(t, {});
  const port = Number(new URL(url).port);
  const socket = netConnect(port, '127.0.0.1');
  t.teardown(() => socket.destroy());
  const answered = new Promise((resolve) => socket.once('data', resolve));
  socket.write('GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: keep-alive\r\n\r\n');
  await answered;
  const started = Date.now();
  server.child.kill('SIGTERM');
  t.same(await server.exited, { code: 0, signal: null });
  t.ok(Date.now() - started < 10_000, 'exits promptly');
});
