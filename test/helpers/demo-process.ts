import { mkdtempSync, rmSync } from 'node:fs';
import { readdir, readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { simpleParser } from 'mailparser';
import { testConfig } from './platform.js';
import { TEST_REDIS_URL } from './services.js';
import { HRS, freePort, start, type Running } from './process.js';
import { until } from './wait.js';

/**
 * `hrs demo` as its user runs it: a real process (`node bin/hrs.js demo`) against a database, a Redis
 * prefix and a state folder of the test's own, its banner read from what it prints. Whatever a
 * walk-through needs (the URLs, the tokens, the accounts, the e-mail folder) comes from the banner, as a
 * newcomer would take it from the terminal.
 */

/** What the demo's banner says (each field read from its own line). */
export interface Banner {
  /** The service's base URL, `http://127.0.0.1:PORT`. */
  base: string;
  exportV2Token: string;
  dashboard: string;
  adminToken: string;
  portal: string;
  /** The portal's accounts, one per role. */
  accounts: { tokenOwner: string; staff: string; manager: string };
  /** Where the e-mails are kept as files. */
  mailFolder: string;
  /**
   * The public map (`public map: <url>`) and its GeoJSON feed (`feed: <url>`, on that line or its own);
   * undefined when the banner has no such line (the demo runs with PUBLIC_MAP=false).
   */
  map: { page: string; feed: string } | undefined;
}

export interface DemoProcess {
  banner: Banner;
  /** Everything it printed so far (stdout and stderr). */
  output(): string;
  /**
   * The sign-in link sent to the address after `since` (a `mark()` taken before asking; waits up to
   * 30 s): the terminal's `sign-in link for <email>: <url>` line when the demo prints one, else the
   * link in the newest `.eml` to the address in the banner's mail folder.
   */
  signInLink(email: string, since: { output: number; time: number }): Promise<string>;
  /** A mark to pass to `signInLink`, taken before asking for a link. */
  mark(): { output: number; time: number };
  /** SIGTERM, then its exit (SIGKILL after 20 s). */
  stop(): Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

interface Teardown {
  teardown(fn: () => unknown): void;
}

const EMAIL = '[\\w.+-]+@[\\w-]+(?:\\.[\\w-]+)+';

/** The address the banner gives a role (`<email>: <role>` or `<role>: <email>`). */
function account(text: string, role: string): string | undefined {
  return new RegExp(`(${EMAIL})\\W{0,4}${role}`).exec(text)?.[1] ?? new RegExp(`${role}\\W{0,4}(${EMAIL})`).exec(text)?.[1];
}

/** The banner's fields, or undefined while one is missing (read by what each line says, not by its place). */
export function parseBanner(text: string): Banner | undefined {
  const portal = /\bportal: (https?:\/\/\S+)/.exec(text)?.[1];
  const dashboard = /\bdashboard: (https?:\/\/\S+)/.exec(text)?.[1];
  const adminToken = /\badmin token: ([^)\s]+)/.exec(text)?.[1];
  const exportV2Token = /\bexport v2 token: (\S+)/.exec(text)?.[1];
  const mapPage = /\bpublic map: (https?:\/\/[^\s)]+)/.exec(text)?.[1];
  const mapFeed = /\bfeed: (https?:\/\/[^\s)]+)/.exec(text)?.[1]?.replace(/[.,;]$/, '');
  const mailFolder = /kept as [^\n]*? in (\/\S+)/.exec(text)?.[1]?.replace(/[.,;]$/, '');
  const accounts = { tokenOwner: account(text, 'API tokens'), staff: account(text, 'operator staff'), manager: account(text, 'originator manager') };
  if (!portal || !dashboard || !adminToken || !exportV2Token || !mailFolder || !accounts.tokenOwner || !accounts.staff || !accounts.manager) return undefined;
  return {
    base: new URL(portal).origin,
    exportV2Token,
    dashboard,
    adminToken,
    portal,
    accounts: accounts as Banner['accounts'],
    mailFolder,
    map: mapPage && mapFeed ? { page: mapPage, feed: mapFeed } : undefined,
  };
}

/** A sign-in URL in a text: the portal's address with `#sign-in=` and its secret. */
const LINK = /https?:\/\/\S+?\/portal\/#sign-in=[A-Za-z0-9_-]+/;

/** The terminal's line for the address after `from`, when the demo prints such lines. */
function terminalLink(output: string, email: string, from: number): string | undefined {
  const escaped = email.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  const lines = [...output.slice(from).matchAll(new RegExp(`sign-in link for ${escaped}: (\\S+)`, 'g'))];
  const last = lines.at(-1)?.[1];
  return last && LINK.test(last) ? last : undefined;
}

/** The link of the newest `.eml` to the address written at or after `time`, decoded with mailparser. */
async function mailedLink(folder: string, email: string, time: number): Promise<string | undefined> {
  const names = (await readdir(folder).catch(() => [] as string[])).filter((n) => n.endsWith('.eml')).sort().reverse();
  for (const name of names) {
    const raw = await readFile(join(folder, name));
    const mail = await simpleParser(raw);
    const to = (Array.isArray(mail.to) ? mail.to : mail.to ? [mail.to] : []).flatMap((a) => a.value.map((v) => v.address?.toLowerCase()));
    if (!to.includes(email.toLowerCase())) continue;
    if (mail.date && mail.date.getTime() < time - 1000) continue;
    const link = LINK.exec(mail.text ?? '')?.[0] ?? LINK.exec(typeof mail.html === 'string' ? mail.html : '')?.[0];
    if (link) return link;
  }
  return undefined;
}

/**
 * The sign-in link for the address sent after the mark: from the terminal's line when the output has
 * one, else from the newest `.eml` to the address in the folder; undefined while there is none.
 */
export async function findSignInLink(output: string, folder: string, email: string, since: { output: number; time: number }): Promise<string | undefined> {
  return terminalLink(output, email, since.output) ?? (await mailedLink(folder, email, since.time));
}

/**
 * Starts `hrs demo` and waits for its banner (bounded; an early exit fails with its output). The process
 * is stopped, and its state folder deleted, when the test ends (before its database is dropped).
 */
export async function startDemo(t: Teardown, options: { interval?: number } = {}): Promise<DemoProcess> {
  const config = testConfig(t);
  const port = await freePort();
  const state = mkdtempSync(join(tmpdir(), 'hrs-demo-walk-'));
  t.teardown(() => rmSync(state, { recursive: true, force: true }));
  const running: Running = start(process.execPath, [HRS, 'demo', '--interval', String(options.interval ?? 30)], {
    DATABASE_URL: config.databaseUrl,
    REDIS_URL: TEST_REDIS_URL,
    REDIS_PREFIX: config.redisPrefix,
    PORT: String(port),
    HRS_STATE_DIR: state,
    LOG_LEVEL: 'warn',
    // The demo's own admin token and mail sink, as a newcomer has them.
    ADMIN_TOKEN: undefined,
    SMTP_URL: undefined,
    BASE_URL: undefined,
  });
  let exited = false;
  void running.exited.then(() => (exited = true));
  const stop = async () => {
    if (!exited) running.child.kill('SIGTERM');
    const timer = setTimeout(() => running.child.kill('SIGKILL'), 20_000);
    const result = await running.exited;
    clearTimeout(timer);
    return result;
  };
  t.teardown(stop);
  const banner = await until(
    'the demo banner',
    () => {
      if (exited) throw new Error(`hrs demo exited before its banner:\n${running.output()}`);
      return parseBanner(running.output());
    },
    90_000,
    100,
  ).catch((err: Error) => {
    throw new Error(`${err.message}\n--- hrs demo printed:\n${running.output()}`);
  });
  return {
    banner,
    output: running.output,
    mark: () => ({ output: running.output().length, time: Date.now() }),
    signInLink: (email, since) => until(`a sign-in link for ${email}`, () => findSignInLink(running.output(), banner.mailFolder, email, since), 30_000, 200),
    stop,
  };
}
