/**
 * What every throughput scenario prints the same way: CPU per answered request (the server's, and
 * PostgreSQL's and Redis' beside it) and its goals, each said met or not.
 */
import { microsPerRequest, type Measurement } from './load.js';
import { fixed, integer } from './table.js';

/** Column headers matching `cpuCells`. */
export const CPU_HEADERS = ['server CPU', 'µs/req', 'PG µs/req', 'Redis µs/req', 'loader CPU'];

/** Server cores, server CPU µs per answered request, PostgreSQL's and Redis' per request, the loader's cores. */
export function cpuCells(r: Measurement): string[] {
  return [
    fixed(r.serverCpu, 2),
    integer(serverMicros(r)),
    integer(microsPerRequest(r.databaseCpu, r.requestsPerSecond)),
    integer(microsPerRequest(r.redisCpu, r.requestsPerSecond)),
    fixed(r.loaderCpu, 2),
  ];
}

/** The server's CPU time per answered request, in microseconds. */
export const serverMicros = (r: Measurement): number => microsPerRequest(r.serverCpu, r.requestsPerSecond);

export const CPU_LEGEND =
  'server CPU: cores the server process kept busy over the measured seconds (1.00 = one core all the time); ' +
  'µs/req: its CPU time per answered request; PG and Redis µs/req: the same for every PostgreSQL and Redis process ' +
  'of this machine (n/a without /proc); loader CPU: the load generator\'s cores.';

export interface Goal {
  what: string;
  /** The figure measured, as printed. */
  measured: string;
  /** The goal, as printed. */
  goal: string;
  met: boolean;
  /** The floor measured beside it in the same run, as printed, when the goal is held to one. */
  floor?: string;
}

/** A goal as printed in a run: its scenario's name and the round (BENCH_ROUNDS) it was measured in. */
export type PrintedGoal = Goal & { scenario: string; round: number };

/** Every goal printed in this run (for the run's closing table and `--json`). */
const printed: PrintedGoal[] = [];
let scenario = '';
let round = 1;

/** Names the scenario, and its round, whose goals are printed next (test/bench/run.ts, before each). */
export function goalsOf(name: string, of = 1): void {
  scenario = name;
  round = of;
}

/** The goals printed so far, in order. */
export function printedGoals(): readonly PrintedGoal[] {
  return printed;
}

/** One goal over the rounds that measured it: each round's figure, and in how many it was met. */
export interface GoalOverRounds {
  scenario: string;
  what: string;
  goal: string;
  /** Each round's figure, in the order the rounds ran. */
  measured: string[];
  met: number;
  rounds: number;
}

/**
 * The goals of a run of several rounds, each goal once (in the order first printed) with the figure
 * of every round that printed it and the number of rounds in which it was met. One round's verdict on
 * a goal held to a floor can flip with the machine's mood between its two measurements; the count says
 * how often it held.
 */
export function goalsOverRounds(goals: readonly PrintedGoal[]): GoalOverRounds[] {
  const byGoal = new Map<string, GoalOverRounds>();
  for (const g of goals) {
    const key = `${g.scenario}\u0000${g.what}`;
    let entry = byGoal.get(key);
    if (!entry) byGoal.set(key, (entry = { scenario: g.scenario, what: g.what, goal: g.goal, measured: [], met: 0, rounds: 0 }));
    entry.measured.push(g.measured);
    entry.rounds++;
    if (g.met) entry.met++;
  }
  return [...byGoal.values()];
}

/** `goals` as lines `what: measured (goal: …): met | NOT met`, kept for the run's closing table. */
export function printGoals(print: (line?: string) => void, goals: Goal[]): void {
  for (const g of goals) {
    print(`${g.what}: ${g.measured}${g.floor ? ` [floor: ${g.floor}]` : ''} (goal: ${g.goal}): ${g.met ? 'met' : 'NOT met'}`);
    printed.push({ ...g, scenario, round });
  }
}

/** The load generator line every scenario prints above its table. */
export function loaderLine(generator: string, connections: number, durationSeconds: number, warmupSeconds: number): string {
  return (
    `load generator: ${generator} in its own process, ${connections} connections, ${durationSeconds} s measured per target` +
    (warmupSeconds > 0 ? ` after ${warmupSeconds} s of warm-up` : ' without warm-up') +
    '; every run drains (no request left unanswered at its end)'
  );
}
