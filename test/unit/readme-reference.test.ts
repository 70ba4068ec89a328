import t from 'tap';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { main } from '../../src/cli/main.js';
import type { Io } from '../../src/cli/command.js';
import { envSchema } from '../../src/config/config.js';

/**
 * What the README promises a newcomer stays complete as the code grows: every environment variable the
 * configuration reads is in its Configuration table, every `hrs` command and option in its command table,
 * and every package in its Dependencies (and in full in docs/dependencies.md).
 */

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const readme = readFileSync(`${ROOT}README.md`, 'utf8');

/** The text of one `## ` section of the README, up to the next. */
function section(title: string): string {
  const start = readme.indexOf(`\n## ${title}\n`);
  if (start === -1) throw new Error(`no section "## ${title}" in the README`);
  const end = readme.indexOf('\n## ', start + 1);
  return readme.slice(start, end === -1 ? undefined : end);
}

async function hrsOut(args: string[]): Promise<string> {
  const lines: string[] = [];
  const io = { out: (line: string) => lines.push(line), err: (line: string) => lines.push(line), env: {} } as unknown as Io;
  await main(args, io);
  return lines.join('\n');
}

t.test('every environment variable of the configuration is in the Configuration table', async (t) => {
  const table = section('Configuration');
  const variables = Object.keys(envSchema.shape);
  t.ok(variables.length > 30, `the configuration reads ${variables.length} variables`);
  for (const name of variables) t.match(table, new RegExp(`^\\| \`${name}\` \\|`, 'm'), name);
  t.match(section('`PORT` and the address'), /`PORT=9090 npx hrs demo`/, 'PORT has its own section with an example');
});

t.test('every hrs command and option is in the command table', async (t) => {
  const table = section('The `hrs` command');
  const help = await hrsOut(['--help']);
  const commands = [...help.matchAll(/^ {2}([a-z-]+) {2,}/gm)].map((m) => m[1]!);
  t.ok(commands.length >= 8, `hrs --help lists ${commands.join(', ')}`);
  for (const command of commands) {
    t.match(table, new RegExp(`\`hrs ${command}[ \`]`), `hrs ${command}`);
    const usage = /^Usage: (.*)$/m.exec(await hrsOut([command, '--help']))?.[1] ?? '';
    for (const [option] of usage.matchAll(/--[a-z-]+/g)) t.ok(table.includes(option), `hrs ${command} ${option}`);
  }
});

t.test('every package is in the Dependencies, with why', async (t) => {
  const pkg = JSON.parse(readFileSync(`${ROOT}package.json`, 'utf8')) as Record<string, Record<string, string>>;
  const short = section('Dependencies');
  const full = readFileSync(`${ROOT}docs/dependencies.md`, 'utf8');
  for (const kind of ['dependencies', 'devDependencies']) {
    for (const name of Object.keys(pkg[kind]!)) {
      const named = name.startsWith('@types/') ? '`@types/*`' : `\`${name}\``;
      t.match(short, new RegExp(`^\\|[^\\n]*${named.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')}[^\\n]*\\| \\S`, 'm'), `${name} (${kind}) in the README, with a reason`);
      t.ok(full.includes(named), `${name} in docs/dependencies.md`);
    }
  }
});
