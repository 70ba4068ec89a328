import t from 'tap';
import { chmodSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { NGINX, badTokens, functional, killDuringImport, missing, rewrite, setUp, startProxy } from './helpers/deploy.js';
import { ROOT, freePort, waitFor } from './helpers/process.js';
import { rawExchange } from './helpers/raw-http.js';

/** deploy/nginx.conf in front of two `hrs serve` instances (see test/helpers/deploy.ts). */

t.test('nginx (deploy/nginx.conf) in front of two instances', { skip: missing(NGINX) }, async (t) => {
  const d = await setUp(t);
  const prefix = mkdtempSync(join(tmpdir(), 'hrs-nginx-'));
  // The master (root here) hands the worker processes, another user, the prefix.
  chmodSync(prefix, 0o755);
  t.teardown(() => rmSync(prefix, { recursive: true, force: true }));
  const port = await freePort();
  const config = rewrite(readFileSync(join(ROOT, 'deploy/nginx.conf'), 'utf8'), [
    [/^worker_processes auto;/m, 'worker_processes 1;'],
    [/listen 127\.0\.0\.1:8080;/, `listen 127.0.0.1:${port};`],
    [/server 127\.0\.0\.1:8081 /, `server 127.0.0.1:${d.instances[0]!.port} `],
    [/server 127\.0\.0\.1:8082 /, `server 127.0.0.1:${d.instances[1]!.port} `],
  ]);
  const file = join(prefix, 'nginx.conf');
  writeFileSync(file, config);
  const nginx = startProxy(NGINX, ['-p', `${prefix}/`, '-c', file, '-e', 'stderr', '-g', 'daemon off;']);
  t.teardown(() => nginx.stop());
  const url = `http://127.0.0.1:${port}`;
  await waitFor(`${url}/readyz`, 200, 30_000).catch((err: Error) => {
    throw new Error(`${err.message}; nginx said: ${nginx.output()}`);
  });

  // nginx passes HTTP/1.0 on as HTTP/1.1 (proxy_http_version): the platform's own answer.
  await t.test('import, export, status stream, portal, HTTP/1.0', (t) => functional(t, d, url, port, /^HTTP\/1\.1 200 /));
  await t.test('one instance killed while an importer posts', (t) => killDuringImport(t, d, url, nginx.output));
  await t.test('requests the platform cannot parse take no instance out', async (t) => {
    const request = (header: string) => `GET /healthz HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n${header}\r\n\r\n`;
    // Names nginx finds invalid are dropped (its defaults): the request is answered.
    const names = await Promise.all([..."_.~'|+^#&*!$%"].map((c) => rawExchange(url, request(`X${c}Y: 1`), 8_000)));
    names.forEach((answer, i) => t.equal(answer.status, 200, `header name with ${JSON.stringify("_.~'|+^#&*!$%"[i])}: dropped by nginx, answered`));
    // Control characters in values pass nginx: the platform closes after its idle timeout, nginx answers
    // 502. Six of them at once, then valid requests: both instances are still in.
    const bad = Promise.all(Array.from({ length: 6 }, () => rawExchange(url, request('X-A: a\x01b'), 40_000)));
    await new Promise((resolve) => setTimeout(resolve, 500));
    const during = await Promise.all(Array.from({ length: 4 }, () => fetch(`${url}/healthz`).then(async (r) => (await r.arrayBuffer(), r.status))));
    t.same(during, [200, 200, 200, 200], 'valid requests meanwhile are answered');
    const answers = await bad;
    t.ok(answers.every((a) => a.status === 502 || a.status === 400), `a control character in a value: a 502 (or 400), not silence (${answers.map((a) => a.status).join(', ')})`);
    const after = await Promise.all(Array.from({ length: 4 }, () => fetch(`${url}/healthz`).then(async (r) => (await r.arrayBuffer(), r.status))));
    // (nginx logs "no live upstreams" for each bad request once it has tried both instances: that is
    // the request's own retries running out, not an instance marked down.)
    t.same(after, [200, 200, 200, 200], 'and afterwards: no instance was taken out');
  });
  await t.test('100 bad tokens from one client leave another client untouched', (t) => badTokens(t, url, '127.0.0.2', '127.0.0.3'));
});
