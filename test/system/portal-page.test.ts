import t, { type Test } from 'tap';
import type { ParsedMail } from 'mailparser';
import { copyFileSync, existsSync, mkdirSync, readdirSync, readFileSync } from 'node:fs';
import { randomUUID } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { chromium, type Browser, type BrowserContext, type Locator, type Page } from 'playwright-core';
import { portalPageRoutes, PORTAL_PAGE_SECURITY } from '../../src/api/portal/page.js';
import { checkExpiry, newTokenValue, tokenHint, tooManyTokensMessage, MAX_ACTIVE_PERSONAL_TOKENS, PERSONAL_TOKEN_EXPIRY } from '../../src/domain/token-values.js';
import { HttpError, json, PROBLEM_ERRORS, type Reply } from '../../src/http/errors.js';
import type { Family } from '../../src/http/family.js';
import { parseJson, type Request } from '../../src/http/request.js';
import { HttpServer } from '../../src/http/server.js';
import { ROOT_AREA } from '../../src/api/areas.js';
import { shellRoutes } from '../../src/api/index-page/shell.js';
import { createLogger } from '../../src/config/log.js';
import { startWorkers } from '../../workers/index.js';
import { baseFixture } from '../helpers/fixtures.js';
import { ADMIN_TOKEN, startTestPlatform } from '../helpers/platform.js';
import { smtpSink } from '../helpers/smtp.js';
import { until } from '../helpers/wait.js';

/**
 * The portal's page (/portal/): its files served by the platform with the strict CSP, no inline
 * script or style, every file and element it refers to there. Then, in a headless Chromium, its flows
 * against stub handlers of the portal API's contract (/portal/v1/…, kept in memory here, beside the
 * page on a server of their own): asking for a sign-in link (and a 429), a used link refused, signing
 * in by pressing a button (never by opening the link), creating a token and seeing its value once,
 * changing an expiry, revoking, the active-token limit (409), a reveal link used once and refused
 * after, signing out; and on a phone's screen. Last, the same page against the real API, signed in
 * from the link in an e-mail a local SMTP server received. Saves screenshots to test/output/; with
 * UPDATE_DOCS_SCREENSHOT=1 also to docs/portal-tokens.png and docs/portal-created.png.
 */

const CHROMIUM = '/usr/bin/chromium';
const skip = existsSync(CHROMIUM) ? false : `no Chromium at ${CHROMIUM} (install Debian's "chromium" package)`;

const OUTPUT = fileURLToPath(new URL('../output/', import.meta.url));
const DOCS = fileURLToPath(new URL('../../docs/', import.meta.url));
const PAGE_DIR = new URL('../../src/browser/portal/', import.meta.url);

/** The portal's family as the page's routes need it (its paths and problem bodies). */
const PORTAL: Family = { name: 'portal', prefix: '/portal/', errors: PROBLEM_ERRORS };

const DAY_MS = 24 * 60 * 60 * 1000;
const ZONE = 'Europe/Berlin';
const LOCALE = 'en-GB';

// --- a stub of the portal API, in memory -------------------------------------------------------------

interface StubUser {
  id: string;
  email: string;
  name: string;
}

interface StubToken {
  id: string;
  name: string;
  hint: string;
  created_at: string;
  expires_at: string;
  last_used_at: string | null;
  revoked_at: string | null;
  state: 'active' | 'expired' | 'revoked';
}

interface Seen {
  method: string;
  path: string;
  origin: string | undefined;
  contentType: string | undefined;
  body: unknown;
}

const COOKIE = 'hrs_portal_session';
const SIGN_IN_DETAIL = 'If an account has this address, we have sent it a sign-in link. It works once, for 15 minutes.';
const RATE_LIMITED = 'Too many sign-in links asked for: retry in 10 minutes.';
const LINK_GONE = 'This sign-in link was used already or has expired: ask for a new one.';
const REVEAL_GONE = 'This link was used already or has expired';

const iso = (ms: number) => new Date(ms).toISOString();

/**
 * The portal API's contract, answered from memory: users, single-use sign-in links and reveal links,
 * sessions in an HttpOnly cookie, personal tokens with the platform's expiry and active-token rules.
 * Every unsafe request must be same-origin JSON. Records each request it answers.
 */
class PortalStub {
  readonly seen: Seen[] = [];
  readonly users = new Map<string, StubUser>();
  /** Sign-in link secret → the user's e-mail; taken out when used. */
  readonly signInLinks = new Map<string, string>();
  /** Reveal link secret → the token and value issued for a user; taken out when used. */
  readonly reveals = new Map<string, { email: string; token: StubToken; value: string }>();
  readonly sessions = new Map<string, string>();
  readonly tokens = new Map<string, StubToken[]>();
  /** Every value handed out, by token id. */
  readonly values = new Map<string, string>();

  addUser(email: string, name: string): StubUser {
    const user = { id: randomUUID(), email, name };
    this.users.set(email, user);
    this.tokens.set(user.id, []);
    return user;
  }

  addToken(email: string, fields: Partial<StubToken> & { name: string }): { token: StubToken; value: string } {
    const value = newTokenValue('export_v2');
    const now = Date.now();
    const token: StubToken = {
      id: randomUUID(),
      hint: tokenHint(value),
      created_at: iso(now),
      expires_at: iso(now + 90 * DAY_MS),
      last_used_at: null,
      revoked_at: null,
      state: 'active',
      ...fields,
    };
    this.tokens.get(this.users.get(email)!.id)!.unshift(token);
    this.values.set(token.id, value);
    return { token, value };
  }

  /** A reveal link for a token an admin issued for `email` (not in the list until revealed). */
  addReveal(secret: string, email: string, name: string): void {
    const value = newTokenValue('export_v2');
    const now = Date.now();
    const token: StubToken = {
      id: randomUUID(), name, hint: tokenHint(value), created_at: iso(now), expires_at: iso(now + 90 * DAY_MS),
      last_used_at: null, revoked_at: null, state: 'active',
    };
    this.reveals.set(secret, { email, token, value });
  }

  requests(method: string, path: string): Seen[] {
    return this.seen.filter((s) => s.method === method && s.path === path);
  }

  register(server: HttpServer, family: Family): void {
    const route = (method: 'GET' | 'POST' | 'PATCH' | 'DELETE', path: string, handler: (req: Request) => Reply) =>
      server.route({
        family,
        public: true,
        method,
        path,
        body: method !== 'GET',
        handler: (req) => {
          const body = req.body && req.body.length > 0 ? safeJson(req.body) : undefined;
          this.seen.push({ method, path: req.path, origin: req.headers.origin, contentType: req.headers['content-type'], body });
          if (method !== 'GET') this.sameOriginJson(req);
          return handler(req);
        },
      });

    route('POST', '/portal/v1/sign-in', (req) => {
      const { email } = this.body(req);
      if (typeof email !== 'string' || !email.includes('@')) throw new HttpError(400, 'invalid_email', 'email: an e-mail address is required');
      if (email === 'busy@example.com') throw new HttpError(429, 'rate_limited', RATE_LIMITED, { headers: { 'Retry-After': '600' } });
      return json(202, { detail: SIGN_IN_DETAIL });
    });

    route('POST', '/portal/v1/session', (req) => {
      const { token } = this.body(req);
      const email = typeof token === 'string' ? this.signInLinks.get(token) : undefined;
      if (email === undefined) throw new HttpError(410, 'link_gone', LINK_GONE);
      this.signInLinks.delete(token as string);
      const session = randomUUID();
      this.sessions.set(session, email);
      return json(201, { user: this.users.get(email) }, { 'Set-Cookie': `${COOKIE}=${session}; Path=/portal/; HttpOnly; SameSite=Strict` });
    });

    route('GET', '/portal/v1/session', (req) => json(200, { user: this.user(req) }));

    route('GET', '/portal/v1/session/state', (req) => {
      const email = this.sessions.get(this.sessionId(req) ?? '');
      return json(200, email === undefined ? { signed_in: false } : { signed_in: true, user: this.users.get(email) });
    });

    route('DELETE', '/portal/v1/session', (req) => {
      const session = this.sessionId(req);
      if (session) this.sessions.delete(session);
      return { status: 204, headers: { 'Set-Cookie': `${COOKIE}=; Path=/portal/; HttpOnly; SameSite=Strict; Max-Age=0` } };
    });

    route('GET', '/portal/v1/tokens', (req) => {
      const user = this.user(req);
      return json(200, {
        tokens: this.tokens.get(user.id),
        limits: { max_active: MAX_ACTIVE_PERSONAL_TOKENS, min_days: PERSONAL_TOKEN_EXPIRY.minDays, max_days: PERSONAL_TOKEN_EXPIRY.maxDays, default_days: PERSONAL_TOKEN_EXPIRY.defaultDays },
      });
    });

    route('POST', '/portal/v1/tokens', (req) => {
      const user = this.user(req);
      const { name, expires_at } = this.body(req);
      if (typeof name !== 'string' || name.trim() === '') throw new HttpError(400, 'invalid_name', 'name: required');
      const expiry = this.expiry(expires_at);
      const active = this.tokens.get(user.id)!.filter((t) => t.state === 'active').length;
      if (active >= MAX_ACTIVE_PERSONAL_TOKENS) throw new HttpError(409, 'too_many_tokens', tooManyTokensMessage(active));
      const { token, value } = this.addToken(user.email, { name: name.trim(), expires_at: expiry });
      return json(201, { token, value });
    });

    route('PATCH', '/portal/v1/tokens/:id', (req) => {
      const token = this.ownToken(req);
      if (token.state !== 'active') throw new HttpError(409, 'token_inactive', 'Only an active token can be given a new expiry.');
      token.expires_at = this.expiry(this.body(req).expires_at);
      return json(200, { token });
    });

    route('POST', '/portal/v1/tokens/:id/revoke', (req) => {
      const token = this.ownToken(req);
      if (token.state === 'active') Object.assign(token, { state: 'revoked', revoked_at: iso(Date.now()) });
      return json(200, { token });
    });

    route('POST', '/portal/v1/reveal', (req) => {
      const { secret } = this.body(req);
      const reveal = typeof secret === 'string' ? this.reveals.get(secret) : undefined;
      if (!reveal) throw new HttpError(410, 'link_gone', REVEAL_GONE);
      this.reveals.delete(secret as string);
      this.tokens.get(this.users.get(reveal.email)!.id)!.unshift(reveal.token);
      this.values.set(reveal.token.id, reveal.value);
      return json(201, { token: reveal.token, value: reveal.value });
    });
  }

  /** What the real API asks of every unsafe request: sent by a page of this origin, as JSON. */
  private sameOriginJson(req: Request): void {
    if (req.headers.origin !== `http://${req.headers.host}`) throw new HttpError(403, 'cross_origin', `Origin ${String(req.headers.origin)} refused.`);
    if (!/^application\/json\b/.test(req.headers['content-type'] ?? '')) throw new HttpError(415, 'unsupported_media_type', 'Send JSON.');
  }

  private body(req: Request): Record<string, unknown> {
    const body = parseJson(req, { requireContentType: true });
    if (body === null || typeof body !== 'object' || Array.isArray(body)) throw new HttpError(400, 'invalid_body', 'A JSON object is required.');
    return body as Record<string, unknown>;
  }

  private expiry(value: unknown): string {
    const date = new Date(typeof value === 'string' ? value : Number.NaN);
    const problem = checkExpiry(date, new Date());
    if (problem) throw new HttpError(400, 'invalid_expiry', problem);
    return date.toISOString();
  }

  private sessionId(req: Request): string | undefined {
    const found = (req.headers.cookie ?? '').split(';').map((c) => c.trim().split('=')).find(([name]) => name === COOKIE);
    return found?.[1] || undefined;
  }

  private user(req: Request): StubUser {
    const email = this.sessions.get(this.sessionId(req) ?? '');
    if (email === undefined) throw new HttpError(401, 'not_signed_in', 'Sign in first.');
    return this.users.get(email)!;
  }

  private ownToken(req: Request): StubToken {
    const user = this.user(req);
    const token = this.tokens.get(user.id)!.find((t) => t.id === req.params.id);
    if (!token) throw new HttpError(404, 'not_found', 'No such token.');
    return token;
  }
}

function safeJson(body: Buffer): unknown {
  try {
    return JSON.parse(body.toString('utf8'));
  } catch {
    return body.toString('utf8');
  }
}

/**
 * The page and the stub API on an HTTP server of their own (the platform's core, without the
 * platform, whose real portal API holds the same paths).
 */
async function startStubPortal(t: { teardown(fn: () => unknown): void }, stub: PortalStub): Promise<{ url: string }> {
  const server = new HttpServer({ log: createLogger('silent'), maxBodyBytes: 64 * 1024, fallback: ROOT_AREA });
  portalPageRoutes(server, PORTAL);
  shellRoutes(server, ROOT_AREA);
  stub.register(server, PORTAL);
  const port = await server.listen('127.0.0.1', 0);
  t.teardown(() => server.closeConnections());
  return { url: `http://127.0.0.1:${port}` };
}

// --- the files, without a browser ---------------------------------------------------------------------

interface Tag {
  name: string;
  attributes: Record<string, string>;
  /** The text up to the closing tag, for script and style. */
  content?: string;
}

/** The tags of an HTML document (comments skipped), with their attributes; enough for the page's own markup. */
function parseTags(html: string): Tag[] {
  const tags: Tag[] = [];
  const text = html.replace(/<!--[\s\S]*?-->/g, '');
  const tag = /<([a-zA-Z][\w-]*)((?:\s+[^\s"'>/=]+(?:\s*=\s*(?:"[^"]*"|'[^']*'|[^\s"'=<>`]+))?)*)\s*\/?>/g;
  const attribute = /([^\s"'>/=]+)(?:\s*=\s*(?:"([^"]*)"|'([^']*)'|([^\s"'=<>`]+)))?/g;
  for (let m = tag.exec(text); m; m = tag.exec(text)) {
    const name = m[1]!.toLowerCase();
    const attributes: Record<string, string> = {};
    for (let a = attribute.exec(m[2]!); a; a = attribute.exec(m[2]!)) attributes[a[1]!.toLowerCase()] = a[2] ?? a[3] ?? a[4] ?? '';
    const found: Tag = { name, attributes };
    if (name === 'script' || name === 'style') {
      const end = text.toLowerCase().indexOf(`</${name}`, tag.lastIndex);
      found.content = end === -1 ? text.slice(tag.lastIndex) : text.slice(tag.lastIndex, end);
    }
    tags.push(found);
  }
  return tags;
}

const TYPES: Record<string, RegExp> = {
  html: /^text\/html; charset=utf-8$/,
  js: /^text\/javascript; charset=utf-8$/,
  css: /^text\/css; charset=utf-8$/,
};
/** Every file of the page's folder, served under /portal/ (index.html as the folder itself). */
const FILES = readdirSync(PAGE_DIR)
  .sort()
  .map((file) => ({ path: file === 'index.html' ? '/portal/' : `/portal/${file}`, file, type: TYPES[file.split('.').pop()!]! }));
/** The page's ES modules, by file name. */
const MODULES = FILES.filter(({ file }) => file.endsWith('.js')).map(({ file }) => file);

/** The strict policy, widened for the station pin's map: MapLibre's worker, blob images and the labels' font. */
const CSP =
  "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data: blob:; connect-src 'self'; font-src 'self'; worker-src 'self'; " +
  "base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

t.test('the page, its script and style sheet are served public, with the strict CSP (widened for the pin\'s map only)', async (t) => {
  t.equal(PORTAL_PAGE_SECURITY['Content-Security-Policy'], CSP);
  // The platform as deployed: the portal's family serves the page.
  const p = await startTestPlatform(t);
  for (const { path, file, type } of FILES) {
    const res = await fetch(`${p.url}${path}`);
    t.equal(res.status, 200, `GET ${path}`);
    t.match(res.headers.get('content-type'), type, `${path}: its type`);
    t.equal(res.headers.get('content-security-policy'), CSP, `${path}: the CSP`);
    t.equal(res.headers.get('referrer-policy'), 'no-referrer', `${path}: no referrer`);
    t.equal(res.headers.get('x-content-type-options'), 'nosniff');
    t.equal(res.headers.get('cache-control'), 'no-cache');
    const body = Buffer.from(await res.arrayBuffer());
    t.same(body, readFileSync(new URL(file, PAGE_DIR)), `${path} is ${file}`);
    const again = await fetch(`${p.url}${path}`, { headers: { 'If-None-Match': res.headers.get('etag')! } });
    t.equal(again.status, 304, `${path}: revalidated with its ETag`);
  }
  // The words the domain owns, made for the page from the domain (src/domain/page-words.ts).
  const vocabulary = await fetch(`${p.url}/portal/vocabulary.js`);
  t.match(vocabulary.headers.get('content-type'), TYPES.js, 'vocabulary.js: a script');
  t.equal(vocabulary.headers.get('content-security-policy'), CSP, 'vocabulary.js: the CSP');
  t.match(await vocabulary.text(), /^export const CATEGORIES = \[/m, 'vocabulary.js: an ES module of constants');
  const head = await fetch(`${p.url}/portal/`, { method: 'HEAD' });
  t.equal(head.status, 200, 'HEAD answered');
  const missing = await fetch(`${p.url}/portal/nothing.js`);
  t.equal(missing.status, 404, 'no other file');
  t.match(missing.headers.get('content-type'), /^application\/problem\+json/, 'answered as a problem');
});

t.test('no inline script or style; every file and element referred to exists', async (t) => {
  const html = readFileSync(new URL('index.html', PAGE_DIR), 'utf8');
  const script = MODULES.map((file) => readFileSync(new URL(file, PAGE_DIR), 'utf8')).join('\n');
  const css = ['portal.css', 'registry.css', 'timeline.css', 'webhooks.css'].map((file) => readFileSync(new URL(file, PAGE_DIR), 'utf8')).join('\n');
  const tags = parseTags(html);

  const scripts = tags.filter((tag) => tag.name === 'script');
  t.same(scripts.map((s) => [s.attributes.src, s.attributes.type]), [['/portal/portal.js', 'module']], 'one script, an ES module from a file');
  // The modules the entry imports, and what they import, are the folder's (and vocabulary.js, made by the server).
  const imported = new Set<string>();
  for (const file of MODULES) {
    for (const m of readFileSync(new URL(file, PAGE_DIR), 'utf8').matchAll(/^import (?:[^'"]* from )?'\.\/([\w-]+\.js)';$/gm)) imported.add(m[1]!);
  }
  t.same([...imported].filter((file) => file !== 'vocabulary.js' && !MODULES.includes(file)), [], 'every module imported is in the folder');
  t.same(MODULES.filter((file) => file !== 'portal.js' && !imported.has(file)), [], 'every module of the folder is imported');
  t.ok(scripts.every((s) => s.content!.trim() === ''), 'with nothing inline');
  t.same(tags.filter((tag) => tag.name === 'style'), [], 'no style element');
  const styled = tags.filter((tag) => 'style' in tag.attributes).map((tag) => tag.name);
  t.same(styled, [], 'no style attribute');
  const handlers = tags.flatMap((tag) => Object.keys(tag.attributes).filter((name) => name.startsWith('on')).map((name) => `${tag.name} ${name}`));
  t.same(handlers, [], 'no inline event handler');
  const jsUrls = tags.flatMap((tag) => Object.values(tag.attributes)).filter((value) => /^\s*javascript:/i.test(value));
  t.same(jsUrls, [], 'no javascript: URL');

  // Every file the page loads is one of those served, and answers.
  const referred = tags.flatMap((tag) => [tag.attributes.src, tag.name === 'link' ? tag.attributes.href : undefined]).filter((v): v is string => v !== undefined);
  t.same(
    referred.sort(),
    ['/portal/portal.css', '/portal/portal.js', '/portal/registry.css', '/portal/timeline.css', '/portal/webhooks.css', '/favicon.svg'].sort(),
    'the page loads its entry module, its style sheets and the service\'s icon',
  );
  for (const path of referred.filter((r) => r.startsWith('/portal/'))) {
    t.ok(existsSync(new URL(path.replace('/portal/', ''), PAGE_DIR)), `${path} exists in src/browser/portal/`);
  }
  const p = await startTestPlatform(t);
  for (const path of referred.filter((r) => r.startsWith('/'))) t.equal((await fetch(`${p.url}${path}`)).status, 200, `${path} is served`);

  // Every element the script looks up by id, and every label's field, is in the page; ids are unique.
  const ids = tags.map((tag) => tag.attributes.id).filter((id): id is string => id !== undefined);
  t.equal(new Set(ids).size, ids.length, 'ids are unique');
  const looked = [...script.matchAll(/\$\('([\w-]+)'\)/g)].map((m) => m[1]!);
  const views = [...script.matchAll(/VIEWS = \[([^\]]*)\]/g)].flatMap((m) => [...m[1]!.matchAll(/'([\w-]+)'/g)].map((v) => `view-${v[1]}`));
  const headings = [...(/HEADINGS = \{([^}]*)\}/.exec(script)?.[1] ?? '').matchAll(/'([\w-]+-title)'/g)].map((m) => m[1]!);
  t.ok(looked.length > 30 && views.length === 6 && headings.length === 6, 'the script names its elements');
  for (const id of [...looked, ...views, ...headings]) t.ok(ids.includes(id), `#${id} is in the page`);
  for (const label of tags.filter((tag) => tag.name === 'label')) t.ok(ids.includes(label.attributes.for!), `the label for #${label.attributes.for} has its field`);
  for (const tag of tags.filter((tag) => tag.name === 'input' && tag.attributes.type !== 'hidden')) {
    t.ok(tags.some((l) => l.name === 'label' && l.attributes.for === tag.attributes.id), `#${tag.attributes.id} is labelled`);
  }
  t.ok(tags.filter((tag) => tag.name === 'button').every((tag) => tag.attributes.type === 'button' || tag.attributes.type === 'submit'), 'every button says its type');
  t.ok(tags.some((tag) => tag.attributes['aria-live'] === 'polite' && tag.attributes.id === 'notice'), 'messages are announced');
  t.ok(tags.some((tag) => tag.name === 'meta' && tag.attributes.name === 'viewport'), 'a viewport for phones');

  // Nothing the CSP forbids or that turns text into code or markup.
  for (const [what, pattern] of [
    ['eval', /\beval\s*\(/],
    ['new Function', /\bnew\s+Function\b|\bFunction\s*\(/],
    ['a string given to setTimeout', /set(Timeout|Interval)\s*\(\s*['"`]/],
    ['innerHTML', /\b(inner|outer)HTML\b/],
    ['insertAdjacentHTML', /insertAdjacentHTML/],
    ['document.write', /document\.write/],
    ['an inline style set', /\.style\s*[.=[]|setAttribute\(\s*'style'/],
    // The SVG namespace is a name, not an address: nothing is loaded from it.
    ['another origin', /https?:\/\/(?!www\.w3\.org\/2000\/svg')/],
  ] as const) {
    t.notMatch(script, pattern, `the page's modules use no ${what}`);
  }
  t.notMatch(css, /@import|url\(\s*['"]?(https?:|\/\/)/, 'the style sheet loads nothing from elsewhere');
});

// --- in a browser, against the stub ----------------------------------------------------------------------

let browser: Browser | undefined;
t.teardown(() => browser?.close());

interface Opened {
  context: BrowserContext;
  page: Page;
  /** Script errors, CSP violations, console errors other than the API's expected 4xx answers. */
  problems: string[];
}

/** A context of its own (own cookies), in Berlin time and British English; problems collected. */
async function openPage(t: { teardown(fn: () => unknown): void }, options: { phone?: boolean } = {}): Promise<Opened> {
  browser ??= await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox'], headless: true });
  const context = await browser.newContext({
    viewport: options.phone ? { width: 390, height: 844 } : { width: 1280, height: 800 },
    deviceScaleFactor: options.phone ? 2 : 1,
    isMobile: options.phone ?? false,
    hasTouch: options.phone ?? false,
    locale: LOCALE,
    timezoneId: ZONE,
  });
  t.teardown(() => context.close());
  const problems: string[] = [];
  await context.exposeBinding('reportViolation', (_source, text: string) => problems.push(`CSP violation: ${text}`));
  await context.addInitScript(`document.addEventListener('securitypolicyviolation', (e) => {
    window.reportViolation(e.violatedDirective + ' ' + e.blockedURI + ' ' + e.sourceFile + ':' + e.lineNumber);
  });`);
  const page = await context.newPage();
  page.setDefaultTimeout(10_000);
  page.on('pageerror', (err) => problems.push(`page error: ${err.message}`));
  page.on('console', (message) => {
    if (message.type() !== 'error') return;
    // The API's refusals the flows ask for (401 not signed in, 409, 410, 429) are logged by the browser; nothing else may be.
    const expected = /^Failed to load resource: the server responded with a status of (401|409|410|429)\b/.test(message.text()) && message.location().url.includes('/portal/v1/');
    if (!expected) problems.push(message.text());
  });
  return { context, page, problems };
}

const view = (page: Page) => page.locator('body').getAttribute('data-view');
const waitView = (page: Page, name: string) => page.waitForSelector(`body[data-view="${name}"]`);
const row = (page: Page, name: string) => page.locator('#token-rows tr').filter({ has: page.locator('.token-name', { hasText: new RegExp(`^${name}$`) }) });
/** A computed style property of the element a locator finds. */
const computed = (locator: Locator, property: string) =>
  locator.evaluate((el, name) => (globalThis as unknown as { getComputedStyle(e: unknown): Record<string, string> }).getComputedStyle(el)[name], property);
const rowNames = (page: Page) => page.locator('#token-rows .token-name').allTextContents();

/** yyyy-mm-dd of an instant in the browser's time zone. */
const berlinDate = (ms: number) => new Intl.DateTimeFormat('en-CA', { timeZone: ZONE, year: 'numeric', month: '2-digit', day: '2-digit' }).format(new Date(ms));
/** An instant as the page shows it: the browser's locale and time zone. */
const shown = (isoText: string) => new Intl.DateTimeFormat(LOCALE, { dateStyle: 'medium', timeStyle: 'short', timeZone: ZONE }).format(new Date(isoText));

async function screenshot(page: Page, name: string, docs: boolean): Promise<string> {
  mkdirSync(OUTPUT, { recursive: true });
  const path = `${OUTPUT}${name}.png`;
  await page.screenshot({ path, fullPage: true });
  if (docs && process.env.UPDATE_DOCS_SCREENSHOT === '1') {
    mkdirSync(DOCS, { recursive: true });
    copyFileSync(path, `${DOCS}${name}.png`);
  }
  return path;
}

t.test('sign in by link, create, see the value once, change expiry, revoke, reveal, sign out', { skip }, async (t) => {
  const stub = new PortalStub();
  stub.addUser('ada@example.com', 'Ada Lovelace');
  const now = Date.now();
  stub.addToken('ada@example.com', { name: 'Old dashboard', created_at: iso(now - 200 * DAY_MS), expires_at: iso(now + 100 * DAY_MS), revoked_at: iso(now - 20 * DAY_MS), last_used_at: iso(now - 21 * DAY_MS), state: 'revoked' });
  stub.addToken('ada@example.com', { name: 'Trial script', created_at: iso(now - 120 * DAY_MS), expires_at: iso(now - 30 * DAY_MS), state: 'expired' });
  stub.addToken('ada@example.com', { name: 'Fleet monitor', created_at: iso(now - 40 * DAY_MS), expires_at: iso(now + 50 * DAY_MS), last_used_at: iso(now - 3 * 60_000) });
  stub.signInLinks.set('abc', 'ada@example.com');
  stub.addReveal('xyz', 'ada@example.com', 'Station feed');
  const p = await startStubPortal(t, stub);
  const { context, page, problems } = await openPage(t);
  await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: p.url });

  // Not signed in: the sign-in form.
  const res = await page.goto(`${p.url}/portal/`);
  t.equal(res?.status(), 200, 'GET /portal/ serves the page');
  t.equal(res?.headers()['content-security-policy'], CSP, 'with the strict CSP');
  await waitView(page, 'sign-in');
  t.ok(await page.getByLabel('E-mail address').isVisible(), 'the sign-in form is shown');
  t.notOk(await page.locator('#account').isVisible(), 'nobody is signed in');

  // An address that is no address is refused by the page itself, and said why.
  await page.getByLabel('E-mail address').fill('ada');
  await page.getByRole('button', { name: 'Send me a sign-in link' }).click();
  t.match(await page.locator('#sign-in-message').textContent(), /Enter your e-mail address/, 'a wrong address is explained');
  t.equal(await page.getByLabel('E-mail address').getAttribute('aria-invalid'), 'true', 'and the field marked');
  t.equal(stub.requests('POST', '/portal/v1/sign-in').length, 0, 'nothing sent');

  // Asking for a link, with the keyboard: the 202's detail is shown.
  await page.getByLabel('E-mail address').fill('ada@example.com');
  await page.getByLabel('E-mail address').press('Enter');
  await page.locator('#sign-in-message[data-kind="ok"]').waitFor();
  t.equal(await page.locator('#sign-in-message').textContent(), SIGN_IN_DETAIL, 'the answer is shown');
  t.equal(await page.locator('#sign-in-message').getAttribute('aria-live'), 'polite', 'and announced');
  const asked = stub.requests('POST', '/portal/v1/sign-in')[0]!;
  t.same(asked.body, { email: 'ada@example.com' }, 'the address was sent');
  t.equal(asked.origin, p.url, 'from this origin');
  t.equal(asked.contentType, 'application/json', 'as JSON');

  // Rate-limited: the 429's detail.
  await page.getByLabel('E-mail address').fill('busy@example.com');
  await page.getByRole('button', { name: 'Send me a sign-in link' }).click();
  await page.locator('#sign-in-message[data-kind="error"]').waitFor();
  t.equal(await page.locator('#sign-in-message').textContent(), RATE_LIMITED, 'the 429 is explained');

  // A used link: the button, then the 410's detail and the sign-in form.
  await page.goto(`${p.url}/portal/#sign-in=used-already`);
  await waitView(page, 'link');
  t.equal(page.url(), `${p.url}/portal/`, 'the secret is gone from the address bar');
  await page.getByRole('button', { name: 'Sign in', exact: true }).click();
  await waitView(page, 'sign-in');
  t.equal(await page.locator('#notice').textContent(), LINK_GONE, 'a used link: the detail');
  t.equal(await page.locator('#notice').getAttribute('data-kind'), 'error');
  t.ok(await page.getByLabel('E-mail address').isVisible(), 'and the sign-in form');

  // The link: opening it does not sign in (mail scanners open links); the button does.
  await page.goto(`${p.url}/portal/#sign-in=abc`);
  await waitView(page, 'link');
  t.equal(page.url(), `${p.url}/portal/`, 'the secret is gone from the address bar');
  await page.waitForTimeout(300);
  t.equal(stub.requests('POST', '/portal/v1/session').filter((s) => (s.body as { token: string }).token === 'abc').length, 0, 'opening the link used nothing');
  t.ok(stub.signInLinks.has('abc'), 'the link still works');
  t.equal(await page.evaluate<string | undefined>('document.activeElement?.id'), 'link-title', 'the focus is on the heading');
  await page.keyboard.press('Tab');
  t.equal(await page.evaluate<string | null | undefined>('document.activeElement?.textContent'), 'Sign in', 'Tab reaches the button');
  await page.keyboard.press('Enter');
  await waitView(page, 'tokens');
  t.same(stub.requests('POST', '/portal/v1/session').at(-1)!.body, { token: 'abc' }, 'the secret was sent once pressed');
  t.notOk(stub.signInLinks.has('abc'), 'and used');
  t.equal(await page.locator('#account-email').textContent(), 'ada@example.com', 'the header says who is signed in');
  t.equal((await page.locator('body').innerText()).split('Signed in as').length - 1, 1, '"Signed in as" once, in the header');
  t.equal(await page.evaluate<string>('document.cookie'), '', 'the session cookie is out of the script’s reach');

  // The list.
  t.same(await rowNames(page), ['Fleet monitor', 'Trial script', 'Old dashboard'], 'every token, as listed by the API');
  const fleet = stub.tokens.get(stub.users.get('ada@example.com')!.id)!.find((tk) => tk.name === 'Fleet monitor')!;
  const fleetRow = row(page, 'Fleet monitor');
  t.equal(await fleetRow.locator('td[data-label="Token"]').textContent(), `…${fleet.hint}`, 'the hint');
  t.equal(await fleetRow.locator('td[data-label="Created"]').textContent(), shown(fleet.created_at), 'dates in the browser’s locale and time zone');
  t.equal(await fleetRow.locator('td[data-label="Created"] time').getAttribute('datetime'), fleet.created_at, 'machine-readable too');
  t.equal(await fleetRow.locator('td[data-label="Expires"]').textContent(), shown(fleet.expires_at));
  t.equal(await fleetRow.locator('td[data-label="Last used"]').textContent(), shown(fleet.last_used_at!));
  t.equal(await row(page, 'Trial script').locator('td[data-label="Last used"]').textContent(), 'never');
  t.equal(await fleetRow.locator('td[data-label="State"]').textContent(), 'active');
  t.equal(await row(page, 'Trial script').locator('td[data-label="State"]').textContent(), 'expired');
  t.match(await row(page, 'Old dashboard').locator('td[data-label="State"]').textContent(), /^revoked /, 'revoked, and when');
  t.equal(await row(page, 'Trial script').getByRole('button').count(), 0, 'an expired token has no actions');
  t.equal(await row(page, 'Old dashboard').getByRole('button').count(), 0, 'nor has a revoked one');
  t.match(await page.locator('#active-count').textContent(), /You have 1 of 5 active tokens\./);

  // Creating: the date input offers the API's bounds, 90 days ahead by default.
  const expires = page.getByLabel('Expires on', { exact: true });
  t.equal(await expires.inputValue(), berlinDate(Date.now() + 90 * DAY_MS), 'the default expiry is 90 days ahead');
  t.equal(await expires.getAttribute('min'), berlinDate(Date.now() + DAY_MS + 10 * 60_000), 'a day ahead at the earliest');
  t.equal(await expires.getAttribute('max'), berlinDate(Date.now() + 366 * DAY_MS - 10 * 60_000), '366 days at the latest');
  await page.getByRole('button', { name: 'Create token' }).click();
  t.match(await page.locator('#create-message').textContent(), /Give the token a name/, 'a name is asked for');
  await page.getByLabel('Name', { exact: true }).fill('CI export');
  await expires.fill(berlinDate(Date.now() + 400 * DAY_MS));
  await page.getByRole('button', { name: 'Create token' }).click();
  t.match(await page.locator('#create-message').textContent(), /^Choose a date no later than /, 'a date out of bounds is refused by the page');
  const chosen = berlinDate(Date.now() + 30 * DAY_MS);
  await expires.fill(chosen);
  await page.getByRole('button', { name: 'Create token' }).click();
  await waitView(page, 'created');
  const created = stub.requests('POST', '/portal/v1/tokens').at(-1)!.body as { name: string; expires_at: string };
  t.equal(created.name, 'CI export', 'the name was sent');
  t.equal(berlinDate(Date.parse(created.expires_at)), chosen, 'and an expiry on the chosen day');
  t.ok(Math.abs(Date.parse(created.expires_at) - (Date.now() + 30 * DAY_MS)) < 2 * 60 * 60_000, 'at about this time of day');

  // The value, once, with a copy button.
  const ci = stub.tokens.get(stub.users.get('ada@example.com')!.id)!.find((tk) => tk.name === 'CI export')!;
  const value = stub.values.get(ci.id)!;
  t.equal(await page.locator('#created-title').textContent(), 'Token created');
  t.equal(await page.locator('#token-value').textContent(), value, 'the value is shown');
  t.equal(await page.locator('#created-hint').textContent(), `…${ci.hint}`);
  t.match(await page.locator('.warning').textContent(), /will not be shown again/, 'with the warning');
  t.equal(await page.evaluate<string | undefined>('document.activeElement?.id'), 'created-title', 'the focus is on the heading');
  await page.getByRole('button', { name: 'Copy' }).click();
  await page.locator('#copy-message[data-kind="ok"]').waitFor();
  t.equal(await page.locator('#copy-message').textContent(), 'Copied to the clipboard.');
  t.equal(await page.evaluate<string>('navigator.clipboard.readText()'), value, 'the clipboard holds the value');
  const createdShot = await screenshot(page, 'portal-created', true);
  t.ok(existsSync(createdShot), 'screenshot saved to test/output/portal-created.png');

  await page.getByRole('button', { name: 'Back to my tokens' }).click();
  await waitView(page, 'tokens');
  t.notOk((await page.content()).includes(value), 'once left, the value is nowhere in the page');
  t.equal(await page.locator('#token-value').textContent(), '', 'its element is empty');
  t.same(await rowNames(page), ['CI export', 'Fleet monitor', 'Trial script', 'Old dashboard'], 'the new token is listed');
  t.equal(await row(page, 'CI export').locator('td[data-label="Token"]').textContent(), `…${ci.hint}`, 'by its hint');
  t.equal(await page.getByLabel('Name', { exact: true }).inputValue(), '', 'the form is ready for another');

  // Changing the expiry.
  await page.getByRole('button', { name: 'Change expiry of “CI export”' }).click();
  const newDate = row(page, 'CI export').getByLabel('New expiry date');
  t.equal(await newDate.inputValue(), chosen, 'the form starts at the present expiry');
  t.equal(await page.getByRole('button', { name: 'Change expiry of “CI export”' }).getAttribute('aria-expanded'), 'true');
  const later = berlinDate(Date.now() + 200 * DAY_MS);
  await newDate.fill(later);
  await screenshot(page, 'portal-change-expiry', false);
  await newDate.press('Enter');
  await page.locator('#notice[data-kind="ok"]').waitFor();
  const patched = stub.seen.filter((s) => s.method === 'PATCH').at(-1)!;
  t.equal(patched.path, `/portal/v1/tokens/${ci.id}`, 'PATCH on the token');
  t.equal(berlinDate(Date.parse((patched.body as { expires_at: string }).expires_at)), later, 'with the new day');
  t.equal(await row(page, 'CI export').locator('td[data-label="Expires"]').textContent(), shown(ci.expires_at), 'the row shows the new expiry');
  t.equal(await page.locator('#notice').textContent(), `“CI export” now expires on ${shown(ci.expires_at)}.`, 'and says so');
  t.equal(await page.evaluate<string | null | undefined>("document.activeElement?.getAttribute('aria-label')"), 'Change expiry of “CI export”', 'the focus is back on the row');

  // Revoking asks first; cancelling (or Escape) leaves the token alone.
  await page.getByRole('button', { name: 'Revoke “CI export”' }).click();
  const dialog = page.getByRole('dialog', { name: 'Revoke this token?' });
  await dialog.waitFor();
  t.match(await dialog.textContent(), new RegExp(`“CI export” \\(…${ci.hint}\\) stops working at once`), 'the dialog names the token');
  await dialog.getByRole('button', { name: 'Cancel' }).click();
  await dialog.waitFor({ state: 'hidden' });
  await page.getByRole('button', { name: 'Revoke “CI export”' }).click();
  await dialog.waitFor();
  await page.keyboard.press('Escape');
  await dialog.waitFor({ state: 'hidden' });
  t.equal(stub.seen.filter((s) => s.path.endsWith('/revoke')).length, 0, 'nothing revoked');
  t.equal(ci.state, 'active');
  await page.getByRole('button', { name: 'Revoke “CI export”' }).click();
  await dialog.getByRole('button', { name: 'Revoke token' }).click();
  await page.locator('#token-rows tr[data-state="revoked"]').filter({ hasText: 'CI export' }).waitFor();
  t.equal(ci.state, 'revoked', 'revoked once confirmed');
  t.equal(stub.seen.filter((s) => s.path === `/portal/v1/tokens/${ci.id}/revoke`).length, 1, 'with one POST');
  t.equal(await page.locator('#notice').textContent(), '“CI export” is revoked.');
  t.equal(await row(page, 'CI export').getByRole('button').count(), 0, 'its actions are gone');

  // The limit of five active tokens: the 409's detail.
  for (const name of ['Reporting', 'Route planner', 'Price watch', 'Backup job']) {
    await page.getByLabel('Name', { exact: true }).fill(name);
    await page.getByRole('button', { name: 'Create token' }).click();
    await waitView(page, 'created');
    await page.getByRole('button', { name: 'Back to my tokens' }).click();
    await waitView(page, 'tokens');
  }
  t.match(await page.locator('#active-count').textContent(), /You have 5 of 5 active tokens: revoke one/, 'the page says the limit is reached');
  await page.getByLabel('Name', { exact: true }).fill('One too many');
  await page.getByRole('button', { name: 'Create token' }).click();
  await page.locator('#create-message[data-kind="error"]').waitFor();
  t.equal(await page.locator('#create-message').textContent(), tooManyTokensMessage(5), 'the 409 is explained');
  t.equal(await view(page), 'tokens', 'and the list stays');
  await page.getByLabel('Name', { exact: true }).fill('');
  await page.getByLabel('Name', { exact: true }).blur();
  const tokensShot = await screenshot(page, 'portal-tokens', true);
  t.ok(existsSync(tokensShot), 'screenshot saved to test/output/portal-tokens.png');

  // A reveal link: the button, the value once; then the same link is refused.
  await page.goto(`${p.url}/portal/#reveal=xyz`);
  await waitView(page, 'reveal');
  t.equal(page.url(), `${p.url}/portal/`, 'the secret is gone from the address bar');
  await page.waitForTimeout(300);
  t.equal(stub.requests('POST', '/portal/v1/reveal').length, 0, 'opening the link used nothing');
  await page.getByRole('button', { name: 'Show my token' }).click();
  await waitView(page, 'created');
  const revealed = stub.tokens.get(stub.users.get('ada@example.com')!.id)!.find((tk) => tk.name === 'Station feed')!;
  const revealedValue = stub.values.get(revealed.id)!;
  t.same(stub.requests('POST', '/portal/v1/reveal')[0]!.body, { secret: 'xyz' }, 'the secret was sent once pressed');
  t.equal(await page.locator('#created-title').textContent(), 'Your API token');
  t.equal(await page.locator('#token-value').textContent(), revealedValue, 'the revealed value is shown');
  t.match(await page.locator('.warning').textContent(), /will not be shown again/);
  await page.getByRole('button', { name: 'Back to my tokens' }).click();
  await waitView(page, 'tokens');
  t.notOk((await page.content()).includes(revealedValue), 'once left, the value is gone');
  t.ok((await rowNames(page)).includes('Station feed'), 'the token is in the list');

  await page.goto(`${p.url}/portal/#reveal=xyz`);
  await waitView(page, 'reveal');
  await page.getByRole('button', { name: 'Show my token' }).click();
  await page.locator('#notice[data-kind="error"]').waitFor();
  t.equal(await page.locator('#notice').textContent(), REVEAL_GONE, 'a used reveal link: the 410’s detail');
  t.equal(await view(page), 'tokens', 'and the signed-in user’s tokens');

  // Signing out.
  await page.getByRole('button', { name: 'Sign out' }).click();
  await waitView(page, 'sign-in');
  t.equal(await page.locator('#notice').textContent(), 'You are signed out.');
  t.equal(stub.sessions.size, 0, 'the session is ended');
  t.equal(stub.requests('DELETE', '/portal/v1/session')[0]!.origin, p.url, 'by a same-origin DELETE');
  t.notOk(await page.locator('#account').isVisible(), 'nobody is signed in');
  t.equal(await page.locator('#token-rows tr').count(), 0, 'no token left on the page');
  await page.reload();
  await waitView(page, 'sign-in');
  t.same([await view(page), await page.locator('#account').isVisible(), stub.sessions.size], ['sign-in', false, 0], 'after a reload: still signed out');

  for (const s of stub.seen.filter((s) => s.method !== 'GET')) {
    t.equal(s.origin, p.url, `${s.method} ${s.path} sent its Origin`);
    t.equal(s.contentType, 'application/json', `${s.method} ${s.path} as JSON`);
  }
  t.same(problems, [], 'no script errors, no CSP violations');
});

t.test('on a phone: readable, no sideways scrolling; copying falls back to selecting the value', { skip }, async (t) => {
  const stub = new PortalStub();
  stub.addUser('grace@example.com', 'Grace Hopper');
  const now = Date.now();
  stub.addToken('grace@example.com', { name: 'Old phone app', expires_at: iso(now - DAY_MS), state: 'expired' });
  stub.addToken('grace@example.com', { name: 'Hydrogen map', last_used_at: iso(now - 3600_000) });
  stub.signInLinks.set('phone', 'grace@example.com');
  const p = await startStubPortal(t, stub);
  const { page, problems } = await openPage(t, { phone: true });
  // A browser refusing the clipboard: the page selects the value for a manual copy.
  await page.addInitScript(`Object.defineProperty(navigator, 'clipboard', {
    value: { writeText: () => Promise.reject(new DOMException('refused', 'NotAllowedError')) },
  });`);

  const fits = () => page.evaluate<boolean>('document.documentElement.scrollWidth <= window.innerWidth');
  await page.goto(`${p.url}/portal/`);
  await waitView(page, 'sign-in');
  t.ok(await fits(), 'the sign-in form fits the screen');
  await page.goto(`${p.url}/portal/#sign-in=phone`);
  await page.getByRole('button', { name: 'Sign in', exact: true }).tap();
  await waitView(page, 'tokens');
  t.ok(await fits(), 'the token list fits the screen');
  t.equal(await computed(page.locator('.token-table thead'), 'position'), 'absolute', 'the table head is out of sight');
  t.equal(await computed(row(page, 'Hydrogen map'), 'display'), 'block', 'each token is a card');
  const fontSize = parseFloat(String(await computed(page.locator('.token-name').first(), 'fontSize')));
  t.ok(fontSize >= 15, `names are readable (${fontSize}px)`);
  await screenshot(page, 'portal-phone', false);

  await page.getByLabel('Name', { exact: true }).fill('Phone export');
  await page.getByRole('button', { name: 'Create token' }).tap();
  await waitView(page, 'created');
  t.ok(await fits(), 'the value fits the screen');
  const token = stub.tokens.get(stub.users.get('grace@example.com')!.id)!.find((tk) => tk.name === 'Phone export')!;
  const value = stub.values.get(token.id)!;
  await page.getByRole('button', { name: 'Copy' }).tap();
  await page.locator('#copy-message[data-kind="info"]').waitFor();
  t.match(await page.locator('#copy-message').textContent(), /^The value is selected: copy it with Ctrl\+C/, 'the page says the value is selected');
  t.equal(await page.evaluate<string>('String(window.getSelection())'), value, 'and it is');
  await screenshot(page, 'portal-phone-created', false);
  await page.getByRole('button', { name: 'Back to my tokens' }).tap();
  await waitView(page, 'tokens');
  t.equal(await page.evaluate<string>('String(window.getSelection())'), '', 'the selection went with the value');
  t.notOk((await page.content()).includes(value), 'and the value with its view');
  t.same(problems, [], 'no script errors, no CSP violations');
});

// --- in a browser, against the real portal API ----------------------------------------------------------

const MAIL_FROM = 'HRS signal platform <no-reply@hrs.example>';


/** The first link to the portal page with this fragment in an e-mail to `to` received after `from`. */
function mailedLink(received: { to: string[]; mail: ParsedMail }[], to: string, fragment: 'sign-in' | 'reveal', from = 0) {
  return until(`the ${fragment} e-mail to ${to}`, () => {
    for (const { to: recipients, mail } of received.slice(from)) {
      const link = new RegExp(`https?://\\S+/portal/#${fragment}=[\\w-]{43}`).exec(mail.text ?? '')?.[0];
      if (recipients.includes(to) && link) return link;
    }
    return undefined;
  });
}

t.test('the real portal API: signed in from the e-mailed link, a token created, changed, revoked, one revealed', { skip }, async (t) => {
  const smtp = await smtpSink(t);
  const p = await startTestPlatform(t, { fixture: baseFixture(), env: { SMTP_URL: `smtp://127.0.0.1:${smtp.port}`, MAIL_FROM } });
  const workers = startWorkers(p.parts.config, p.parts.redis, p.sql, createLogger('silent'));
  t.teardown(() => workers.close());
  const { context, page, problems } = await openPage(t);
  await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: p.url });
  const exportStatus = async (value: string) => (await fetch(`${p.url}/v2/fuel-type`, { headers: { Authorization: `Bearer ${value}` } })).status;

  await page.goto(`${p.url}/portal/`);
  await waitView(page, 'sign-in');
  await page.getByLabel('E-mail address').fill('alice@example.org');
  await page.getByRole('button', { name: 'Send me a sign-in link' }).click();
  await page.locator('#sign-in-message[data-kind="ok"]').waitFor();
  t.match(await page.locator('#sign-in-message').textContent(), /^If an account has this address, a sign-in link is on its way/, 'the API’s answer is shown');

  const link = await mailedLink(smtp.received, 'alice@example.org', 'sign-in');
  t.ok(link.startsWith(`${p.url}/portal/#sign-in=`), 'the e-mail links to the page');
  await page.goto(link);
  await waitView(page, 'link');
  t.equal(page.url(), `${p.url}/portal/`, 'the secret is gone from the address bar');
  t.equal((await (await page.request.get(`${p.url}/portal/v1/session`)).status()), 401, 'opening the link signed nobody in');
  await page.getByRole('button', { name: 'Sign in', exact: true }).click();
  await waitView(page, 'tokens');
  t.equal(await page.locator('#account-email').textContent(), 'alice@example.org', 'signed in');
  t.same(await rowNames(page), ['laptop'], 'the fixture’s token is listed');

  // Created with the default expiry: the value once, and it works on export v2.
  await page.getByLabel('Name', { exact: true }).fill('browser test');
  await page.getByRole('button', { name: 'Create token' }).click();
  await waitView(page, 'created');
  const value = (await page.locator('#token-value').textContent())!;
  t.match(value, /^hrs_pat_[0-9A-Za-z]{49}$/, 'the value is shown');
  t.equal(await exportStatus(value), 200, 'and works on export v2');
  await page.getByRole('button', { name: 'Copy' }).click();
  await page.locator('#copy-message[data-kind="ok"]').waitFor();
  t.equal(await page.evaluate<string>('navigator.clipboard.readText()'), value, 'copied');
  await page.getByRole('button', { name: 'Back to my tokens' }).click();
  await waitView(page, 'tokens');
  t.notOk((await page.content()).includes(value), 'once left, the value is nowhere in the page');
  const createdRow = row(page, 'browser test');
  t.equal(await createdRow.locator('td[data-label="Token"]').textContent(), `…${value.slice(-4)}`, 'listed by its hint');
  const [stored] = await p.sql<{ expires_at: Date }[]>`SELECT expires_at FROM tokens WHERE name = 'browser test'`;
  t.equal(berlinDate(stored!.expires_at.getTime()), berlinDate(Date.now() + 90 * DAY_MS), 'expiring in 90 days');

  // A new expiry, then revoked.
  await page.getByRole('button', { name: 'Change expiry of “browser test”' }).click();
  const later = berlinDate(Date.now() + 300 * DAY_MS);
  await createdRow.getByLabel('New expiry date').fill(later);
  await createdRow.getByRole('button', { name: /^Save/ }).click();
  await page.locator('#notice[data-kind="ok"]').waitFor();
  const [changed] = await p.sql<{ expires_at: Date }[]>`SELECT expires_at FROM tokens WHERE name = 'browser test'`;
  t.equal(berlinDate(changed!.expires_at.getTime()), later, 'the new expiry is stored');
  t.equal(await createdRow.locator('td[data-label="Expires"]').textContent(), shown(changed!.expires_at.toISOString()), 'and shown');
  await page.getByRole('button', { name: 'Revoke “browser test”' }).click();
  await page.getByRole('dialog').getByRole('button', { name: 'Revoke token' }).click();
  await page.locator('#token-rows tr[data-state="revoked"]').filter({ hasText: 'browser test' }).waitFor();
  t.equal(await exportStatus(value), 401, 'the revoked token is refused at once');

  // A token an admin issues for the address: revealed once by its link, then 410.
  const issued = await fetch(`${p.url}/admin/v1/personal-tokens`, {
    method: 'POST',
    headers: { Authorization: `Bearer ${ADMIN_TOKEN}`, 'Content-Type': 'application/json' },
    body: JSON.stringify({ email: 'alice@example.org', token_name: 'issued by admin' }),
  });
  t.equal(issued.status, 201, 'an admin issues a token');
  const reveal = await mailedLink(smtp.received, 'alice@example.org', 'reveal');
  await page.goto(reveal);
  await waitView(page, 'reveal');
  t.equal(page.url(), `${p.url}/portal/`, 'the secret is gone from the address bar');
  await page.getByRole('button', { name: 'Show my token' }).click();
  await waitView(page, 'created');
  const revealed = (await page.locator('#token-value').textContent())!;
  t.match(revealed, /^hrs_pat_/, 'the value is shown');
  t.equal(await exportStatus(revealed), 200, 'and works');
  await page.getByRole('button', { name: 'Back to my tokens' }).click();
  await waitView(page, 'tokens');
  t.ok((await rowNames(page)).includes('issued by admin'), 'the issued token is listed');
  await page.goto(reveal);
  await page.getByRole('button', { name: 'Show my token' }).click();
  await page.locator('#notice[data-kind="error"]').waitFor();
  t.match(await page.locator('#notice').textContent(), /^This link was used already or has expired/, 'a second use: the 410’s detail');

  await page.getByRole('button', { name: 'Sign out' }).click();
  await waitView(page, 'sign-in');
  t.equal((await (await page.request.get(`${p.url}/portal/v1/session`)).status()), 401, 'signed out');
  t.same(problems, [], 'no script errors, no CSP violations');
});
