import t from 'tap';
import { existsSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { main } from '../../src/cli/main.js';
import type { Io } from '../../src/cli/command.js';
import { envSchema } from '../../src/config/config.js';
import { DEMO_ADMIN_TOKEN, DEMO_TOKENS } from '../../src/cli/demo/fixture.js';
import { SANDBOX_TOKEN } from '../../src/domain/sandbox.js';
import { commandsOf, platformPathsOf, platformUrlsOf, shellCommands, type Command } from '../helpers/readme-commands.js';

/**
 * What the README and its reference pages promise a newcomer stays complete and true as the code grows:
 * every environment variable the configuration reads is in docs/configuration.md's table, every `hrs`
 * command and option in its command table, every package in docs/dependencies.md with why; and every
 * command the README gives (fenced `sh` blocks and inline code alike) names what exists: npm scripts,
 * `hrs` commands, options and files, compose services, variables, tokens. Its addresses are checked
 * against the routes in test/platform/readme-urls.test.ts.
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
