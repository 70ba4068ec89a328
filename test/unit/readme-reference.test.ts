import t from 'tap';
import { existsSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { main } from '../../src/cli/main.js';
import type { Io } from '../../src/cli/command.js';
import { envSchema } from '../../src/config/config.js';
import { DEMO_ADMIN_TOKEN, DEMO_TOKENS } from '../../src/cli/demo/fixture.js';
import { SANDBOX_TOKEN } from '../../src/domain/sandbox.js';
import { commandsOf, shellCommands, type Command } from '../helpers/readme-commands.js';

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
