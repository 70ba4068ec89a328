import t from 'tap';
import { chmodSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { HAPROXY, NGINX, rewrite, setUp, startProxy } from './helpers/deploy.js';
import { ROOT, freePort, waitFor } from './helpers/process.js';
import { rawExchange } from './helpers/raw-http.js';

t.test('explore', async (t) => {
  const d = await setUp(t);
  const prefix = mkdtempSync(join(tmpdir(), 'hrs-nginx-'));
  chmodSync(prefix, 0o755);
  t.teardown(() => rmSync(prefix, { recursive: true, force: true }));
  const port = await freePort();
  const config = rewrite(readFileSync(join(ROOT, process.env.NGINX_CONF ?? 'deploy/nginx.conf'), 'utf8'), [
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
  await waitFor(`${url}/readyz`, 200, 30_000);
  const hport = await freePort();
  const hconfig = rewrite(readFileSync(join(ROOT, 'deploy/haproxy.cfg'), 'utf8'), [
    [/bind 127\.0\.0\.1:8080/, `bind 127.0.0.1:${hport}`],
    [/server hrs1 127\.0\.0\.1:8081 /, `server hrs1 127.0.0.1:${d.instances[0]!.port} `],
    [/server hrs2 127\.0\.0\.1:8082 /, `server hrs2 127.0.0.1:${d.instances[1]!.port} `],
  ]);
  const hfile = join(prefix, 'haproxy.cfg');
  writeFileSync(hfile, hconfig);
  const haproxy = startProxy(HAPROXY, ['-f', hfile, '-db']);
  t.teardown(() => haproxy.stop());
  const hurl = `http://127.0.0.1:${hport}`;
  await waitFor(`${hurl}/readyz`, 200, 30_000);
  const direct = `http://127.0.0.1:${d.instances[0]!.port}`;
  const request = (headers: string) => `GET /healthz HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n${headers}\r\n\r\n`;
  const cases: [string, string][] = [
    ['ctl', 'X-A: a\x01b'],
    ['obsfold', 'X-A: a\r\n b'],
    ['obsfold-tab', 'X-A: a\r\n\tb'],
    ['space-before-colon', 'X-A : b'],
    ['tab-before-colon', 'X-A\t: b'],
    ['no colon', 'XA'],
    ['space in name', 'X A: b'],
    ['nonascii name', 'X-\xe9: b'],
    ['NUL value', 'X-A: a\x00b'],
    ['bare CR value', 'X-A: a\rb'],
    ['120 headers', Array.from({ length: 118 }, (_, i) => `X-H${i}: v`).join('\r\n')],
    ['99 headers', Array.from({ length: 97 }, (_, i) => `X-H${i}: v`).join('\r\n')],
  ];
  for (const [target, u] of [['direct', direct], ['nginx', url], ['haproxy', hurl]] as const) {
    const results = await Promise.all(cases.map(async ([name, h]) => {
      const s = Date.now();
      const a = await rawExchange(u, Buffer.from(request(h), 'latin1'), 40_000);
      return `${target} ${name}: ${a.status} ${a.timedOut ? 'timedOut' : ''} ${((Date.now() - s) / 1000).toFixed(1)} s ${a.raw.slice(0, 40).replace(/\r\n/g, ' ')}`;
    }));
    for (const r of results) t.comment(r);
  }
  t.comment(nginx.output().slice(-3000));
});
