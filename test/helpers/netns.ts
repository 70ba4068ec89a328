import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { request, type IncomingHttpHeaders } from 'node:http';
import type { Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ROOT } from './process.js';
import { relay } from './relay.js';

/**
 * A network namespace whose resolver never answers (`ip netns`, as root): its resolv.conf names
 * 127.0.0.1:53 inside it, where a helper (./netns-inside.ts) reads every query and answers none, and
 * its hosts file names what the test gives. Programs run in it with `exec`; the test reaches their TCP
 * ports through Unix sockets (`unixPath`), and they reach TCP ports of this machine (the shared
 * PostgreSQL and Redis) through ports of the namespace that the helpers relay (`hostPorts`). The
 * namespace, its /etc/netns folder, the sockets and every process are removed when the test ends,
 * failed or not; namespaces a killed test run left behind are removed by the next.
 */

const PREFIX = 'hrs-test-';
const INSIDE = fileURLToPath(new URL('./netns-inside.ts', import.meta.url));

interface Teardown {
  teardown(fn: () => unknown): void;
}

const ip = (...args: string[]) => execFileSync('ip', args, { stdio: ['ignore', 'pipe', 'pipe'], timeout: 10_000 }).toString();

/** Removes the namespace and its files (quietly, when they are gone already). */
function removeNamespace(name: string): void {
  try {
    ip('netns', 'del', name);
  } catch {
    // Gone already.
  }
  rmSync(`/etc/netns/${name}`, { recursive: true, force: true });
}

/** Namespaces of test runs whose process is gone (a run killed before its teardown). */
function removeLeftovers(): void {
  let names: string[] = [];
  try {
    names = readdirSync('/run/netns').filter((n) => n.startsWith(PREFIX));
  } catch {
    return;
  }
  for (const name of names) {
    const pid = Number(name.slice(PREFIX.length).split('-')[0]);
    let alive = false;
    try {
      process.kill(pid, 0);
      alive = true;
    } catch {
      // No such process.
    }
    if (!alive) removeNamespace(name);
  }
}

/** Why namespaces cannot be made here (not root, no `ip`, no permission), or undefined when they can. */
export function netnsUnavailable(): string | undefined {
  if (process.getuid?.() !== 0) return 'network namespaces need root';
  const probe = `${PREFIX}${process.pid}-probe`;
  try {
    ip('netns', 'add', probe);
  } catch (err) {
    return `ip netns add failed: ${String((err as { stderr?: Buffer }).stderr ?? (err as Error).message).trim()}`;
  } finally {
    removeNamespace(probe);
  }
  return undefined;
}

export interface Namespace {
  name: string;
  /** Starts a program in the namespace, its output kept. */
  exec(command: string, args: string[], env: Record<string, string>): { child: ChildProcess; output: () => string };
  /** The Unix socket that reaches one of the namespace's `exposed` TCP ports. */
  unixPath(port: number): string;
  /** The names of the queries the silent resolver has read, in order (one per query: A and AAAA are two). */
  queries(): string[];
}

/** A namespace with its loopback up, resolv.conf naming 127.0.0.1 and `hosts` in its hosts file. */
function makeNamespace(name: string, hosts: Record<string, string>): void {
  ip('netns', 'add', name);
  ip('-n', name, 'link', 'set', 'lo', 'up');
  mkdirSync(`/etc/netns/${name}`, { recursive: true });
  writeFileSync(`/etc/netns/${name}/resolv.conf`, 'nameserver 127.0.0.1\n');
  writeFileSync(`/etc/netns/${name}/hosts`, ['127.0.0.1 localhost', ...Object.entries(hosts).map(([host, address]) => `${address} ${host}`)].join('\n') + '\n');
}

/** The namespace's port for each of this machine's ports: the same number, so a URL only changes its host. */
function relayPlan(dir: string, hostPorts: number[], exposed: number[]) {
  const forwards = [
    ...hostPorts.map((port) => ({ listen: port, target: join(dir, `host-${port}.sock`) })),
    ...exposed.map((port) => ({ listen: join(dir, `ns-${port}.sock`), target: port })),
  ];
  return { forwards };
}

type Started = { child: ChildProcess; output: () => string };

/** Resolves once the helper inside listens; from then on its `query NAME` lines fill `queries`. */
function insideReady(inside: Started, queries: string[]): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    let seen = 0;
    inside.child.stdout!.on('data', () => {
      const lines = inside.output().split('\n').slice(0, -1);
      for (const line of lines.slice(seen)) {
        if (line === 'ready') resolve();
        else if (line.startsWith('query ')) queries.push(line.slice(6));
      }
      seen = lines.length;
    });
    inside.child.once('exit', (code) => reject(new Error(`the namespace's helper exited (${code}): ${inside.output()}`)));
  });
}

/**
 * A namespace with a silent resolver and `hosts` (name → address lines) as its hosts file, relaying
 * `hostPorts` of this machine into it and exposing its `exposed` ports as Unix sockets.
 */
export async function silentResolverNamespace(t: Teardown, options: { hosts: Record<string, string>; hostPorts: number[]; exposed: number[] }): Promise<Namespace> {
  removeLeftovers();
  const name = `${PREFIX}${process.pid}-${Date.now().toString(36)}`;
  const dir = mkdtempSync(join(tmpdir(), 'hrs-netns-'));
  const children: ChildProcess[] = [];
  const servers: Server[] = [];
  t.teardown(async () => {
    for (const child of children) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    await Promise.all(children.map((child) => (child.exitCode === null && child.signalCode === null ? new Promise((resolve) => child.once('exit', resolve)) : undefined)));
    for (const server of servers) server.close();
    removeNamespace(name);
    rmSync(dir, { recursive: true, force: true });
  });
  makeNamespace(name, options.hosts);
  for (const port of options.hostPorts) servers.push(await relay(join(dir, `host-${port}.sock`), port));

  const queries: string[] = [];
  const exec = (command: string, args: string[], env: Record<string, string>): Started => {
    const child = spawn('ip', ['netns', 'exec', name, command, ...args], { cwd: ROOT, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
    children.push(child);
    let output = '';
    child.stdout!.on('data', (d) => (output += d));
    child.stderr!.on('data', (d) => (output += d));
    return { child, output: () => output };
  };
  const inside = exec(process.execPath, ['--import', 'tsx', INSIDE, JSON.stringify(relayPlan(dir, options.hostPorts, options.exposed))], {});
  await insideReady(inside, queries);
  return {
    name,
    exec,
    unixPath: (port) => join(dir, `ns-${port}.sock`),
    queries: () => [...queries],
  };
}

export interface UnixAnswer {
  status: number;
  headers: IncomingHttpHeaders;
  body: string;
  ms: number;
}

/** An HTTP request over a Unix socket; status 0 and the error as body when it fails or takes longer than `timeoutMs`. */
export function unixRequest(
  socketPath: string,
  path: string,
  init: { method?: string; headers?: Record<string, string>; body?: string; timeoutMs?: number } = {},
): Promise<UnixAnswer> {
  const started = performance.now();
  return new Promise((resolve) => {
    const req = request({ socketPath, path, method: init.method ?? 'GET', headers: { Host: '127.0.0.1', ...(init.headers ?? {}) }, agent: false }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (body += chunk));
      res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, body, ms: performance.now() - started }));
      res.on('error', (err) => resolve({ status: 0, headers: {}, body: err.message, ms: performance.now() - started }));
    });
    req.setTimeout(init.timeoutMs ?? 30_000, () => req.destroy(new Error(`no answer within ${init.timeoutMs ?? 30_000} ms`)));
    req.on('error', (err) => resolve({ status: 0, headers: {}, body: err.message, ms: performance.now() - started }));
    req.end(init.body);
  });
}
