import t from 'tap';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  BROWSER_EXTENSIONS,
  bodyParsing,
  formatViolation,
  importGraph,
  importsOf,
  importViolations,
  mutualImports,
  packageImports,
  sqlTemplates,
  type ImportRule,
  type SqlTemplate,
} from '../helpers/architecture.js';

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
  'public map': ['map'],
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
 * schema's issues can say. Every other route declares its body's schema.
 */
const BODY_PARSING = {
  allowed: ['src/http/contract.ts', 'src/api/import-v2/signals.ts', 'src/api/legacy-import/signals.ts'],
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
    "src/http/store.ts:1 → redis: src/http/** never imports redis, @redis/ (the HTTP core holds no storage: the rate limiter and its Redis are infrastructure (src/infra/))",
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
