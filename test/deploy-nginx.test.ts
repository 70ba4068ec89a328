import t from 'tap';
import { chmodSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { NGINX, badTokens, functional, killDuringImport, missing, rewrite, setUp, startProxy } from './helpers/deploy.js';
import { ROOT, freePort, waitFor } from './helpers/process.js';

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
  await t.test('100 bad tokens from one client leave another client untouched', (t) => badTokens(t, url, '127.0.0.2', '127.0.0.3'));
});
