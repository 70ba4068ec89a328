/**
 * The README's addresses on a platform holding the demo's registry: every address of the platform it
 * names (links, prose, inline paths and commands alike) is a registered route, every page it sends a browser to
 * answers 200, and every `curl` it gives answers as the README says (2xx, or the status its comment
 * names), the export v1.1 sandbox on as in the demo.
 */
import t from 'tap';
import { readFileSync } from 'node:fs';
import type { HttpServer, RouteInfo } from '../../src/http/server.js';
import { DEMO_ADMIN_TOKEN, demoFixture } from '../../src/cli/demo/fixture.js';
import { commandsOf, platformPathsOf, platformUrlsOf } from '../helpers/readme-commands.js';
import { startTestPlatform } from '../helpers/platform.js';

const readme = readFileSync(new URL('../../README.md', import.meta.url), 'utf8');
const lines = readme.split('\n');

let server: HttpServer | undefined;
const p = await startTestPlatform(t, { env: { ADMIN_TOKEN: DEMO_ADMIN_TOKEN, SANDBOX: 'on' }, fixture: demoFixture(), routes: (s) => void (server = s) });

/** Whether a route's pattern (`:name` a segment) takes a path. */
const takes = (route: RouteInfo, path: string) => new RegExp(`^${route.path.replace(/[.*+?^${}()|[\]\\]/g, '\\$&').replace(/:[a-z_]+/g, '[^/]+')}$`).test(path);

t.test('every address of the platform in the README is a route', async (t) => {
  const routes = server!.routes();
  const urls = platformUrlsOf(readme, ['127.0.0.1:8080', 'localhost:8080']);
  t.ok(urls.length >= 20, `addresses checked: ${urls.length}`);
  const posted = new Set(commandsOf(readme).filter((c) => c.words[0] === 'curl' && c.words.includes('-d')).map((c) => c.words.at(-1)));
  for (const { url, line } of urls) {
    const method = posted.has(url.href) ? 'POST' : 'GET';
    t.ok(routes.some((r) => r.method === method && takes(r, url.pathname)), `line ${line}: ${method} ${url.pathname}`);
  }
});

t.test('every path of the platform the README names in its text is a route', async (t) => {
  // A route's pattern with each `:name` given a value, so that a named path (`/admin/v1/…`) can match it.
  const routes = server!.routes().map((r) => ({ method: r.method, path: r.path.replace(/:[a-z_]+/g, 'x') }));
  const paths = platformPathsOf(readme);
  t.ok(paths.length >= 10, `paths checked: ${paths.length}`);
  for (const { text, method, pattern, line } of paths) {
    t.ok(routes.some((r) => (method === undefined || r.method === method) && pattern.test(r.path)), `line ${line}: ${text}`);
  }
});

t.test('every page the README sends a browser to answers 200', async (t) => {
  const curled = new Set(commandsOf(readme).filter((c) => c.words[0] === 'curl').map((c) => c.words.at(-1)));
  const pages = platformUrlsOf(readme, ['127.0.0.1:8080', 'localhost:8080']).filter(({ url }) => url.protocol === 'http:' && !curled.has(url.href));
  t.ok(pages.length >= 8, `pages opened: ${pages.length}`);
  for (const { url, line } of pages) {
    const res = await fetch(`${p.url}${url.pathname}${url.search}`, { headers: { Accept: 'text/html' } });
    await res.arrayBuffer();
    t.equal(res.status, 200, `line ${line}: ${url.pathname}`);
  }
});

t.test('every curl of the README answers as it says', async (t) => {
  const curls = commandsOf(readme).filter((c) => c.words[0] === 'curl');
  t.ok(curls.length >= 10, `curls run: ${curls.length}`);
  for (const { words, line } of curls) {
    const headers: Record<string, string> = {};
    let body: string | undefined;
    let address = '';
    for (let i = 1; i < words.length; i += 1) {
      if (words[i] === '-H') {
        const [name, ...value] = words[(i += 1)]!.split(': ');
        headers[name!] = value.join(': ');
      } else if (words[i] === '-d') body = words[(i += 1)]!.replaceAll('$(date -u +%FT%TZ)', new Date().toISOString().replace(/\.\d+Z$/, 'Z'));
      else if (/^https?:/.test(words[i]!)) address = words[i]!;
    }
    const url = new URL(address);
    const res = await fetch(`${p.url}${url.pathname}${url.search}`, { method: body === undefined ? 'GET' : 'POST', headers, ...(body === undefined ? {} : { body }) });
    await res.arrayBuffer();
    // The status the comment on the address's line names (`# 401: says why`), else a success.
    const own = lines.slice(line - 1).find((l) => l.includes(address)) ?? '';
    const named = /\s#\s*(\d{3})\b/.exec(own)?.[1];
    if (named) t.equal(res.status, Number(named), `line ${line}: ${url.pathname}${url.search} answers ${named}, as the README says`);
    else t.ok(res.status >= 200 && res.status < 300, `line ${line}: ${url.pathname}${url.search} answers ${res.status}`);
  }
});
