import { spawn, type ChildProcess } from 'node:child_process';
import { chmodSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Test } from 'tap';
import { HRS, ROOT, freePort, waitFor } from './process.js';
import { testConfig } from './platform.js';
import { until } from './wait.js';

/**
 * `hrs demo` as a process of its own on a test database, with standard input a pipe (so a test can press
 * Enter), its output kept, and a state folder of its own (its mail sink's folder is in it).
 */
export interface DemoProcess {
  child: ChildProcess;
  url: string;
  output: () => string;
  /** The output written since `mark` (a length of `output()`). */
  since: (mark: number) => string;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

/** The settings a demo of the test runs with: one database, one Redis prefix, one state folder, one port. */
export interface DemoSetting {
  env: Record<string, string | undefined>;
  port: number;
}

export async function demoSetting(t: Test, env: Record<string, string | undefined> = {}): Promise<DemoSetting> {
  const config = testConfig(t);
  const state = mkdtempSync(join(tmpdir(), 'hrs-demo-'));
  chmodSync(state, 0o755);
  t.teardown(() => rmSync(state, { recursive: true, force: true }));
  const port = await freePort();
  return {
    port,
    env: { DATABASE_URL: config.databaseUrl, REDIS_URL: config.redisUrl, REDIS_PREFIX: config.redisPrefix, PORT: String(port), HRS_STATE_DIR: state, ...env },
  };
}

/** Starts the demo and waits for its banner and readiness. */
export async function startDemo(t: Test, setting: DemoSetting, args: string[] = []): Promise<DemoProcess> {
  const child = spawn(process.execPath, [HRS, 'demo', ...args], { cwd: ROOT, env: { ...process.env, ...setting.env }, stdio: ['pipe', 'pipe', 'pipe'] });
  let output = '';
  child.stdout!.on('data', (d) => (output += d));
  child.stderr!.on('data', (d) => (output += d));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => child.on('exit', (code, signal) => resolve({ code, signal })));
  t.teardown(() => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  });
  const url = `http://127.0.0.1:${setting.port}`;
  const bannerOrExit = () => {
    if (child.exitCode !== null) throw new Error(`hrs demo exited (${child.exitCode}) before its banner; output: ${output}`);
    return /Stop with Ctrl-C/.test(output) ? true : undefined;
  };
  await until('the demo\'s banner', bannerOrExit, 120_000).catch((err: Error) => {
    throw new Error(`${err.message}; output: ${output}`);
  });
  await waitFor(`${url}/readyz`);
  return { child, url, output: () => output, since: (mark) => output.slice(mark), exited };
}

/** Stops the demo with SIGTERM and waits for it to exit. */
export async function stopDemo(demo: DemoProcess): Promise<{ code: number | null; signal: NodeJS.Signals | null }> {
  demo.child.kill('SIGTERM');
  return demo.exited;
}
