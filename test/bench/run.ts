/**
 * `npm run bench [-- NAME...] [--json[=FILE]]`: runs every scenario `test/bench/<name>.bench.ts` (or the
 * named ones) one after the other. Each exports a default `Scenario` (./lib/scenario.ts). The run ends
 * with a table of every goal printed (scenario, figure, its floor where it has one, goal, met); with
 * `--json` the same goals, the commit, the machine and the load average go to FILE (default
 * `bench-results.json`), for comparing commits.
 *
 * Environment: BENCH_DURATION (measured seconds per target, default 10), BENCH_WARMUP (seconds of
 * unmeasured load first, default 1), BENCH_CONNECTIONS (default 50), BENCH_ROUNDS (how many times each
 * scenario runs in a row, default 1: the closing table then gives each goal's figure in every round
 * and in how many it was met), BENCH_SOURCES=1 (the platform from its sources through tsx instead of
 * dist/, which the run builds first: ./lib/build.ts).
 */
import { execFileSync } from 'node:child_process';
import { readdirSync, writeFileSync } from 'node:fs';
import { availableParallelism, cpus, loadavg } from 'node:os';
import { buildForBench } from './lib/build.js';
import { Child } from './lib/child.js';
import { goalsOf, goalsOverRounds, printedGoals } from './lib/cpu-report.js';
import type { BenchOptions, Scenario } from './lib/scenario.js';

const SUFFIX = '.bench.ts';

function numberFromEnv(name: string, fallback: number, { min, integer }: { min: number; integer?: boolean }): number {
  const raw = process.env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isFinite(value) || value < min || (integer && !Number.isInteger(value))) {
    throw new Error(`${name} must be ${integer ? 'a whole number' : 'a number'} of at least ${min} (got "${raw}")`);
  }
  return value;
}

async function main(argv: string[]): Promise<number> {
  const jsonArg = argv.find((arg) => arg === '--json' || arg.startsWith('--json='));
  const jsonFile = jsonArg === undefined ? undefined : jsonArg === '--json' ? 'bench-results.json' : jsonArg.slice('--json='.length);
  const args = argv.filter((arg) => arg !== jsonArg);
  const available = readdirSync(new URL('.', import.meta.url))
    .filter((file) => file.endsWith(SUFFIX))
    .map((file) => file.slice(0, -SUFFIX.length))
    .sort();
  if (args.includes('--help') || args.includes('-h')) {
    console.log(`usage: npm run bench [-- NAME...] [--json[=FILE]]\nscenarios: ${available.join(', ')}`);
    return 0;
  }
  const unknown = args.filter((name) => !available.includes(name));
  if (unknown.length > 0) {
    console.error(`unknown scenario ${unknown.join(', ')}; available: ${available.join(', ')}`);
    return 2;
  }
  const options: BenchOptions = {
    durationSeconds: numberFromEnv('BENCH_DURATION', 10, { min: 1, integer: true }),
    warmupSeconds: numberFromEnv('BENCH_WARMUP', 1, { min: 0, integer: true }),
    connections: numberFromEnv('BENCH_CONNECTIONS', 50, { min: 1, integer: true }),
    print: (line = '') => console.log(line),
  };
  const rounds = numberFromEnv('BENCH_ROUNDS', 1, { min: 1, integer: true });

  const load = loadavg();
  await buildForBench(options.print);
  let failed = 0;
  const ran: string[] = [];
  scenarios: for (const name of args.length > 0 ? args : available) {
    ran.push(name);
    const { default: scenario } = (await import(new URL(`./${name}${SUFFIX}`, import.meta.url).href)) as { default: Scenario };
    for (let round = 1; round <= rounds; round++) {
      goalsOf(name, round);
      console.log(`\n== ${name}${rounds > 1 ? ` (round ${round} of ${rounds})` : ''}: ${scenario.description}\n`);
      const started = performance.now();
      try {
        await scenario.run(options);
        console.log(`\n(${name} took ${((performance.now() - started) / 1000).toFixed(1)} s)`);
      } catch (err) {
        failed++;
        if (interrupted) console.error(`\n${name} interrupted; its processes are stopped and its data removed`);
        else console.error(`\n${name} failed: ${(err as Error).stack ?? String(err)}`);
      }
      if (interrupted) break scenarios;
    }
  }
  const goals = printedGoals();
  if (goals.length > 0 && rounds === 1) {
    console.log('\n== goals of this run\n');
    console.log(leftAligned(['scenario', 'what', 'measured', 'floor', 'goal', ''], goals.map((g) => [g.scenario, g.what, g.measured, g.floor ?? '', g.goal, g.met ? 'met' : 'NOT met'])));
    console.log(`\n${goals.filter((g) => g.met).length} of ${goals.length} goals met`);
  } else if (goals.length > 0) {
    const over = goalsOverRounds(goals);
    console.log(`\n== goals of this run, over ${rounds} rounds of each scenario\n`);
    console.log(
      leftAligned(
        ['scenario', 'what', 'measured, round by round', 'goal', 'met'],
        over.map((g) => [g.scenario, g.what, g.measured.join(' | '), g.goal, `in ${g.met} of ${g.rounds}`]),
      ),
    );
    console.log(`\n${over.filter((g) => g.met === g.rounds).length} of ${over.length} goals met in every round; ${over.filter((g) => g.met > g.rounds / 2).length} in most rounds`);
  }
  if (jsonFile !== undefined) {
    const commit = gitCommit();
    const report = {
      commit,
      at: new Date().toISOString(),
      machine: { cpus: availableParallelism(), model: cpus()[0]?.model.trim() ?? null, node: process.version, load_average_at_start: load.map((x) => Math.round(x * 100) / 100) },
      options: { duration_seconds: options.durationSeconds, warmup_seconds: options.warmupSeconds, connections: options.connections, rounds, built: process.env.BENCH_BUILT === '1' },
      scenarios: ran,
      failed,
      goals,
      ...(rounds > 1 ? { goals_over_rounds: goalsOverRounds(goals) } : {}),
    };
    writeFileSync(jsonFile, `${JSON.stringify(report, null, 2)}\n`);
    console.log(`goals written to ${jsonFile}`);
  }
  return interrupted ? 130 : failed > 0 ? 1 : 0;
}

/** A table of text: every column left-aligned (./lib/table.ts right-aligns figures). */
function leftAligned(header: string[], rows: string[][]): string {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const line = (cells: string[]) => cells.map((cell, i) => cell.padEnd(widths[i]!)).join('  ').trimEnd();
  return [line(header), line(widths.map((w) => '-'.repeat(w))), ...rows.map(line)].join('\n');
}

/** The checked-out commit (with `+changes` when the tree differs from it), or null outside a git checkout. */
function gitCommit(): string | null {
  try {
    const head = execFileSync('git', ['rev-parse', 'HEAD'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim();
    const dirty = execFileSync('git', ['status', '--porcelain'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim() !== '';
    return dirty ? `${head}+changes` : head;
  } catch {
    return null;
  }
}

let interrupted = false;
let interruptedAt = 0;
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.on(signal, () => {
    // Ctrl-C reaches this process directly and again relayed by npm and tsx: repeats within a second
    // are the same interrupt.
    if (interrupted) {
      if (Date.now() - interruptedAt > 1000) process.exit(130);
      return;
    }
    interrupted = true;
    interruptedAt = Date.now();
    console.error(`\n${signal}: stopping the benchmark processes (again to quit at once)`);
    // A scenario waiting on a child sees it exit, fails, and cleans up after itself.
    void Child.stopAll();
  });
}

process.exitCode = await main(process.argv.slice(2)).catch((err: unknown) => {
  console.error((err as Error).stack ?? String(err));
  return 1;
});
// Everything is closed by now and the process ends on its own; should a handle stay open anyway,
// say so and end rather than hang.
setTimeout(() => {
  console.error('bench: something kept the process alive after the run; exiting');
  process.exit(process.exitCode ?? 1);
}, 5000).unref();
