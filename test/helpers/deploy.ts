import type { Test } from 'tap';
import { spawn, type ChildProcess } from 'node:child_process';
import { accessSync, chmodSync, constants, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import { connect as tcpConnect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadFixture } from '../../src/registry/file/load.js';
import { baseFixture, TOKENS } from './fixtures.js';
import { freshDatabase } from './platform.js';
import { signedIn } from './portal.js';
import { HRS, ROOT, freePort, start, waitFor, type Running } from './process.js';
import { until } from './wait.js';
import { WsClient } from './ws.js';
import type { Sql } from '../../db/connect.js';

/**
 * The deployment docs/operations.md describes, tested by test/system/deploy-nginx.test.ts and test/system/deploy-haproxy.test.ts:
 * nginx and HAProxy (Debian's packages) in front of two `hrs serve` instances, each proxy run from a copy of its configuration in deploy/ with this test's
 * ports and folders written in. Through each proxy: import, export, the status stream, the portal and
 * HTTP/1.0; one instance killed while an importer posts signals (every signal answered 2xx is stored;
 * clients see at most a retryable error, which they retry); and 100 bad tokens from one client leave
 * another client's valid requests untouched (TRUST_PROXY is the proxy's address).
 */

export const NGINX = '/usr/sbin/nginx';
export const HAPROXY = '/usr/sbin/haproxy';

export const missing = (path: string) => {
  try {
    accessSync(path, constants.X_OK);
    return undefined;
  } catch {
    return `${path} is not installed (Debian package ${path.split('/').pop()}; CI installs it in .ci/run)`;
  }
};

export const STATIONS = Array.from({ length: 10 }, (_, i) => `PRX${String.fromCharCode(65 + Math.floor(i / 26))}${String.fromCharCode(65 + (i % 26))}`);

/** Every replacement must happen: a shipped config that no longer has the line fails loudly. */
export function rewrite(text: string, replacements: [RegExp, string][]): string {
  let out = text;
  for (const [pattern, value] of replacements) {
    if (!pattern.test(out)) throw new Error(`the shipped config has no ${pattern}`);
    out = out.replace(pattern, value);
  }
  return out;
}

interface Instance {
  port: number;
  running: Running;
}

export interface Deployment {
  sql: Sql;
  env: Record<string, string>;
  instances: Instance[];
}

export async function startInstance(d: Deployment, port: number): Promise<Instance> {
  const running = start(process.execPath, [HRS, 'serve', '--no-workers'], { ...d.env, PORT: String(port) });
  await waitFor(`http://127.0.0.1:${port}/readyz`, 200, 60_000);
  return { port, running };
}

/** A proxy as a child process (not a daemon), its output kept. */
export function startProxy(command: string, args: string[]): { child: ChildProcess; output: () => string; stop: () => Promise<void> } {
  const child = spawn(command, args, { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout!.on('data', (d) => (output += d));
  child.stderr!.on('data', (d) => (output += d));
  const exited = new Promise<void>((resolve) => child.on('exit', () => resolve()));
  return {
    child,
    output: () => output,
    stop: async () => {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
      await Promise.race([exited, new Promise((resolve) => setTimeout(resolve, 5000))]);
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    },
  };
}

/** A GET from a given local address (127.0.0.x: a client of its own as far as the proxy can tell). */
function getFrom(localAddress: string, url: string, token: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(url, { localAddress, agent: false, headers: { Authorization: `Bearer ${token}` } }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode!));
    });
    req.on('error', reject);
    req.end();
  });
}

/** A raw HTTP/1.0 request; resolves with the status line. */
function http10(port: number, path: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = tcpConnect(port, '127.0.0.1', () => socket.write(`GET ${path} HTTP/1.0\r\n\r\n`));
    let data = '';
    socket.on('data', (d) => (data += d));
    socket.on('end', () => resolve(data.split('\r\n')[0]!));
    socket.on('error', reject);
    socket.setTimeout(10_000, () => socket.destroy(new Error('no answer to HTTP/1.0 within 10 s')));
  });
}

/** An import v2 availability item for a station with one nozzle N1. */
/** A proxy started in front of a deployment's two instances, answering on `url`. */
export interface Proxy {
  url: string;
  port: number;
  output: () => string;
}

/** Waits for the proxy's first /readyz answer, failing with what the proxy said. */
async function proxyReady(name: string, port: number, output: () => string): Promise<Proxy> {
  const url = `http://127.0.0.1:${port}`;
  await waitFor(`${url}/readyz`, 200, 30_000).catch((err: Error) => {
    throw new Error(`${err.message}; ${name} said: ${output()}`);
  });
  return { url, port, output };
}

/** The shipped deploy/nginx.conf (one worker) in front of `d`'s instances, with `more` rewrites of a test's own. */
export async function startNginx(t: Test, d: Deployment, more: [RegExp, string][] = []): Promise<Proxy> {
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
    ...more,
  ]);
  const file = join(prefix, 'nginx.conf');
  writeFileSync(file, config);
  const nginx = startProxy(NGINX, ['-p', `${prefix}/`, '-c', file, '-e', 'stderr', '-g', 'daemon off;']);
  t.teardown(() => nginx.stop());
  return proxyReady('nginx', port, nginx.output);
}

/** The shipped deploy/haproxy.cfg in front of `d`'s instances, with `more` rewrites of a test's own. */
export async function startHaproxy(t: Test, d: Deployment, more: [RegExp, string][] = []): Promise<Proxy> {
  const dir = mkdtempSync(join(tmpdir(), 'hrs-haproxy-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const port = await freePort();
  const config = rewrite(readFileSync(join(ROOT, 'deploy/haproxy.cfg'), 'utf8'), [
    [/bind 127\.0\.0\.1:8080/, `bind 127.0.0.1:${port}`],
    [/server hrs1 127\.0\.0\.1:8081 /, `server hrs1 127.0.0.1:${d.instances[0]!.port} `],
    [/server hrs2 127\.0\.0\.1:8082 /, `server hrs2 127.0.0.1:${d.instances[1]!.port} `],
    ...more,
  ]);
  const file = join(dir, 'haproxy.cfg');
  writeFileSync(file, config);
  const haproxy = startProxy(HAPROXY, ['-f', file, '-db']);
  t.teardown(() => haproxy.stop());
  return proxyReady('haproxy', port, haproxy.output);
}

export const availability = (hrs: string, id: string, available: boolean) => ({
  hrs,
  datetime: new Date().toISOString(),
  transmission_id: id,
  nozzles: [{ id: 'N1', available }],
  station: { maintenance: false, limitedly_available: false },
});

/** The test's deployment: a database with the proxy test's stations, two instances with `env` added to theirs. */
export async function setUp(t: Test, extraEnv: Record<string, string> = {}): Promise<Deployment> {
  const { sql, config } = await freshDatabase(t);
  const f = baseFixture();
  const layout = (f.stations[0] as { layout: unknown }).layout;
  // Coordinates put them on the public map, whose stream the stream tests follow.
  f.stations.push(...STATIONS.map((hrs_id, i) => ({ hrs_id, operator: 'h2-demo', name: `Station ${hrs_id}`, layout, details: { coordinates: { lat: 50 + i / 10, lon: 10 } } }) as never));
  f.assignments.push(...STATIONS.map((hrs_id) => ({ originator: 'mon-1', hrs_id, signal_type: 'availability', state: 'live' })));
  await loadFixture(sql, f, { baseDir: '.' });
  const env = {
    DATABASE_URL: config.databaseUrl,
    REDIS_PREFIX: config.redisPrefix,
    LOG_LEVEL: 'warn',
    // The proxies connect from 127.0.0.1: what they forward names the client.
    TRUST_PROXY: '127.0.0.1',
    IMPORT_V2_RATE_LIMIT: '1000000',
    EXPORT_V2_RATE_LIMIT_MINUTE: '1000000',
    EXPORT_V2_RATE_LIMIT_DAY: '1000000',
    // As deploy/haproxy.cfg asks: longer than two failed checks a second apart.
    SHUTDOWN_DELAY: '3',
    ...extraEnv,
  };
  const d: Deployment = { sql, env, instances: [] };
  const [a, b] = [await freePort(), await freePort()];
  d.instances = await Promise.all([startInstance(d, a), startInstance(d, b)]);
  t.teardown(() => {
    for (const instance of d.instances) instance.running.child.kill('SIGKILL');
  });
  return d;
}

/** Import, export, the status stream, the portal and HTTP/1.0 through the proxy. */
export async function functional(t: Test, d: Deployment, url: string, port: number, http10Answer: RegExp): Promise<void> {
  const stream = await WsClient.connect(`${url.replace('http:', 'ws:')}/v2/hrs/status/stream`, { Authorization: `Bearer ${TOKENS.export_v2}` });
  t.teardown(() => stream.close());
  t.match(await stream.next(), { type: 'authenticated' }, 'status stream: the WebSocket upgrade passes the proxy');
  stream.send({ type: 'subscribe', hrs_ids: [STATIONS[0]], id: 's1' });
  t.match(await stream.next(), { type: 'subscribed', id: 's1' });
  t.match(await stream.next(), { type: 'snapshot' });

  // Several posts: round robin sends them to both instances, and the stream (on one) hears each.
  for (let i = 0; i < 4; i++) {
    const res = await fetch(`${url}/import/v2/signal/availability/`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${TOKENS.import_v2}`, 'Content-Type': 'application/json' },
      body: JSON.stringify([availability(STATIONS[0]!, `functional-${port}-${i}`, i % 2 === 0)]),
    });
    t.equal(res.status, 204, `import ${i + 1} through the proxy`);
    await res.arrayBuffer();
    const change = await stream.next(10_000);
    t.equal(change.type, 'status', `the stream hears import ${i + 1}, whichever instance took it`);
  }

  const status = await fetch(`${url}/v2/hrs/${STATIONS[0]}/status`, { headers: { Authorization: `Bearer ${TOKENS.export_v2}` } });
  t.equal(status.status, 200, 'export through the proxy');
  t.match(await status.json(), { hrs_id: STATIONS[0] });

  const portal = await signedIn({ url, sql: d.sql } as never, 'alice');
  t.match(await portal.call('GET', '/portal/v1/session'), { status: 200, body: { user: { id: 'alice' } } }, 'the portal session through the proxy');
  const page = await fetch(`${url}/portal/`);
  t.equal(page.status, 200, 'the portal page');
  await page.arrayBuffer();

  t.match(await http10(port, '/healthz'), http10Answer, 'an HTTP/1.0 client is answered at once');
}

/**
 * An importer (8 concurrent clients) posts signals through the proxy; one instance is killed (SIGKILL)
 * once some are acknowledged. 502/503 and connection errors are retried (a new transmission id each
 * time); anything else fails the test. Every signal answered 2xx must be stored.
 */
export async function killDuringImport(t: Test, d: Deployment, url: string, proxyOutput: () => string, how: { index: number; signal: NodeJS.Signals } = { index: 0, signal: 'SIGKILL' }): Promise<string[]> {
  const acknowledged: string[] = [];
  const retryable: string[] = [];
  /** Answers neither 2xx nor retryable: the client that met one stops. */
  const other: string[] = [];
  let sequence = 0;
  let stop = false;
  const client = async (c: number) => {
    while (!stop) {
      const id = `kill-${url.split(':').pop()}-${c}-${++sequence}`;
      try {
        const res = await fetch(`${url}/import/v2/signal/availability/`, {
          method: 'POST',
          headers: { Authorization: `Bearer ${TOKENS.import_v2}`, 'Content-Type': 'application/json' },
          body: JSON.stringify([availability(STATIONS[sequence % STATIONS.length]!, id, sequence % 2 === 0)]),
        });
        const text = await res.text();
        if (res.status >= 200 && res.status < 300) acknowledged.push(id);
        else if (res.status === 502 || res.status === 503) {
          retryable.push(`${res.status}`);
          await new Promise((resolve) => setTimeout(resolve, 50));
        } else {
          other.push(`${res.status} ${text}`);
          return;
        }
      } catch (err) {
        retryable.push((err as Error).message);
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
    }
  };
  const clients = Array.from({ length: 8 }, (_, c) => client(c));
  await until('signals acknowledged before the kill', () => (acknowledged.length >= 60 ? true : undefined), 60_000);
  const victim = d.instances[how.index]!;
  victim.running.child.kill(how.signal);
  const exit = await victim.running.exited;
  if (how.signal === 'SIGTERM') t.same(exit, { code: 0, signal: null }, 'the instance stopped in order');
  const atKill = acknowledged.length;
  await until('signals acknowledged after the kill', () => (acknowledged.length >= atKill + 120 ? true : undefined), 60_000);
  stop = true;
  await Promise.all(clients);

  const rows = await d.sql<{ transmission_id: string }[]>`
    SELECT transmission_id FROM signal_history WHERE transmission_id = ANY(${acknowledged})`;
  const stored = new Set(rows.map((r) => r.transmission_id));
  const lost = acknowledged.filter((id) => !stored.has(id));
  t.same(lost, [], `every acknowledged signal is stored (${acknowledged.length} acknowledged, ${atKill} before the kill)`);
  const kinds = [...new Set(retryable)].map((kind) => `${retryable.filter((r) => r === kind).length}× ${kind}`);
  t.same(other, [], `clients saw ${retryable.length} retryable errors (${kinds.join(', ') || 'none'}) and nothing else`);
  if (process.env.DEPLOY_TEST_VERBOSE) t.comment(proxyOutput().split('\n').slice(-40).join('\n'));
  // The stopped instance back on its port, for what follows.
  d.instances[how.index] = await startInstance(d, victim.port);
  return retryable;
}

/** 100 bad tokens from one client; another client's valid requests, interleaved, are all answered 200. */
export async function badTokens(t: Test, url: string, attacker: string, honest: string): Promise<void> {
  const bad: number[] = [];
  const good: number[] = [];
  for (let i = 0; i < 100; i++) {
    bad.push(await getFrom(attacker, `${url}/v2/fuel-type`, `no-such-token-${i}`));
    if (i % 5 === 0) good.push(await getFrom(honest, `${url}/v2/fuel-type`, TOKENS.export_v2));
  }
  t.same(new Set(good), new Set([200]), `another client's ${good.length} valid requests are all answered 200`);
  t.equal(bad.filter((s) => s === 401).length, 30, 'the failing client gets 30 401s in the minute');
  t.equal(bad.filter((s) => s === 429).length, 70, 'then 429s: it is the one slowed down');
  t.equal(await getFrom(attacker, `${url}/v2/fuel-type`, TOKENS.export_v2), 200, 'a valid token from the failing client\'s own address still passes');
  t.equal(await getFrom(honest, `${url}/v2/fuel-type`, 'no-such-token-honest'), 401, 'the other client\'s own mistake is a plain 401');
}

