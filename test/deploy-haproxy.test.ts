import t from 'tap';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { HAPROXY, badTokens, functional, killDuringImport, missing, rewrite, setUp, startProxy } from './helpers/deploy.js';
import { ROOT, freePort, waitFor } from './helpers/process.js';
import { until } from './helpers/wait.js';

/** deploy/haproxy.cfg in front of two `hrs serve` instances (see test/helpers/deploy.ts). */

t.test('HAProxy (deploy/haproxy.cfg) in front of two instances', { skip: missing(HAPROXY) }, async (t) => {
  const d = await setUp(t);
  const dir = mkdtempSync(join(tmpdir(), 'hrs-haproxy-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const port = await freePort();
  const config = rewrite(readFileSync(join(ROOT, 'deploy/haproxy.cfg'), 'utf8'), [
    [/bind 127\.0\.0\.1:8080/, `bind 127.0.0.1:${port}`],
    [/server hrs1 127\.0\.0\.1:8081 /, `server hrs1 127.0.0.1:${d.instances[0]!.port} `],
    [/server hrs2 127\.0\.0\.1:8082 /, `server hrs2 127.0.0.1:${d.instances[1]!.port} `],
  ]);
  const file = join(dir, 'haproxy.cfg');
  writeFileSync(file, config);
  const haproxy = startProxy(HAPROXY, ['-f', file, '-db']);
  t.teardown(() => haproxy.stop());
  const url = `http://127.0.0.1:${port}`;
  await waitFor(`${url}/readyz`, 200, 30_000).catch((err: Error) => {
    throw new Error(`${err.message}; haproxy said: ${haproxy.output()}`);
  });
  // Both servers pass their first checks (an HTTP/1.0 check would get no answer and mark them down).
  await new Promise((resolve) => setTimeout(resolve, 2500));
  t.notMatch(haproxy.output(), /is DOWN/, `the /readyz checks pass on both instances: ${haproxy.output()}`);

  // HAProxy would pass HTTP/1.0 on as it came, which the platform does not answer: it answers 505 itself.
  await t.test('import, export, status stream, portal, HTTP/1.0', (t) => functional(t, d, url, port, /^HTTP\/1\.1 505 /));
  await t.test('one instance killed while an importer posts', async (t) => {
    await killDuringImport(t, d, url, haproxy.output);
    t.match(haproxy.output(), /Server hrs\/hrs1 is DOWN/, 'the health check took the killed instance out');
    await until('the restarted instance back in', () => (/Server hrs\/hrs1 is UP/.test(haproxy.output()) ? true : undefined), 20_000);
    t.pass('and brought it back once it was ready again');
  });
  await t.test('an instance stopped (SIGTERM) while an importer posts is drained first', async (t) => {
    const errors = await killDuringImport(t, d, url, haproxy.output, { index: 1, signal: 'SIGTERM' });
    t.match(haproxy.output(), /Server hrs\/hrs2 is DOWN, reason: Layer7 wrong status, code: 503/, 'taken out by its readiness (503), before its port closed');
    t.same(errors, [], 'drained: no client saw an error');
  });
  await t.test('100 bad tokens from one client leave another client untouched', (t) => badTokens(t, url, '127.0.0.4', '127.0.0.5'));
});
