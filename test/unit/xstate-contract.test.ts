/**
 * The contract between machines/runner.ts and xstate. The runner steps the freshness machine through
 * an actor scope of its own (for speed; see the runner's comment), which relies on xstate internals;
 * these tests fail, saying so, when an xstate upgrade changes what it relies on. Every reachable state
 * of the machine gets every event (a signal at ages around each deadline of each policy, and each
 * deadline delivered, due or not), and the runner's step must equal what xstate's public
 * `initialTransition` / `transition` produce: the same state, the same context, the same delays
 * scheduled (as due times) and cancelled. The installed xstate must be the version package.json pins.
 */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { isDeepStrictEqual } from 'node:util';
import t, { type Test } from 'tap';
import { initialTransition, transition, type EventObject, type ExecutableActionObject } from 'xstate';
import { freshnessMachine, type FreshnessPolicy, type FreshnessSnapshot, type SignalEvent } from '../../machines/freshness.js';
import { FreshnessRunner, type Deadline, type Step } from '../../machines/runner.js';

const SECOND = 1000;
const MINUTE = 60 * SECOND;
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;
const T0 = Date.parse('2025-03-01T12:00:00.000Z');

const broke = (what: string) => `xstate upgrade changed ${what}; see machines/runner.ts`;

/** Passes saying what holds, or fails naming an xstate upgrade as the cause and `changed` as what broke. */
function holds(t: Test, found: unknown, wanted: unknown, what: string, changed: string): void {
  t.same(found, wanted, isDeepStrictEqual(found, wanted) ? what : broke(changed));
}

/** The platform's policies (availability and usage, hydrogen storage, pricing) and short ones as tests use. */
const POLICIES: Record<string, FreshnessPolicy> = {
  availability: { staleAfterMs: 5 * MINUTE, unknownAfterMs: 30 * MINUTE },
  storage: { staleAfterMs: 5 * MINUTE, unknownAfterMs: null },
  pricing: { staleAfterMs: 25 * HOUR, unknownAfterMs: null },
  short: { staleAfterMs: 200, unknownAfterMs: 400 },
  'stale at once': { staleAfterMs: 0, unknownAfterMs: 400 },
};

/** Ages of a reading when handled: in the future, new, and either side of each deadline. */
function ages(policy: FreshnessPolicy): number[] {
  const around = (deadline: number) => [deadline - 1, deadline, deadline + 1];
  const all = [-2 * SECOND, 0, ...around(policy.staleAfterMs), ...(policy.unknownAfterMs === null ? [] : around(policy.unknownAfterMs)), 400 * DAY];
  return [...new Set(all)];
}

/** A step as xstate's public functions give it: the snapshot, delayed events raised (with due times), ids cancelled. */
interface Reference {
  snapshot: FreshnessSnapshot;
  raised: { id: string; event: EventObject; due: number }[];
  cancelled: string[];
  /** Executable actions of any other type (none expected). */
  other: string[];
}

function reference(snapshot: FreshnessSnapshot, actions: readonly ExecutableActionObject[]): Reference {
  const out: Reference = { snapshot, raised: [], cancelled: [], other: [] };
  for (const action of actions) {
    const params = (action.params ?? {}) as { delay?: unknown; event?: EventObject; id?: unknown; sendId?: unknown };
    if (action.type === 'xstate.raise' && typeof params.delay === 'number' && params.event) {
      out.raised.push({ id: String(params.id ?? params.event.type), event: params.event, due: snapshot.context.enteredAt + params.delay });
    } else if (action.type === 'xstate.cancel' && typeof params.sendId === 'string') out.cancelled.push(params.sendId);
    else out.other.push(action.type);
  }
  return out;
}

/**
 * Compares a runner step with xstate's, learning which of xstate's delayed-event ids each of the
 * runner's deadlines stands for (it must always be the same one, and a different one per deadline).
 */
class Contract {
  readonly mismatches: string[] = [];
  readonly ids = new Map<Deadline, string>();
  readonly events = new Map<Deadline, EventObject>();
  readonly seen = { states: new Set<string>(), scheduled: new Set<Deadline>(), cancelled: new Set<Deadline>(), delivered: new Set<Deadline>() };
  steps = 0;

  compare(label: string, step: Step | Error, ref: Reference): void {
    this.steps++;
    const wrong = (what: string) => this.mismatches.push(`${label}: ${what}`);
    if (step instanceof Error) return void wrong(`the runner threw: ${step.message}`);
    this.seen.states.add(String(ref.snapshot.value));
    if (ref.other.length > 0) wrong(`xstate handed over actions the runner does not know: ${ref.other.join(', ')}`);
    if (!isDeepStrictEqual(step.snapshot.value, ref.snapshot.value)) wrong(`state ${JSON.stringify(step.snapshot.value)}, xstate ${JSON.stringify(ref.snapshot.value)}`);
    if (step.snapshot.status !== ref.snapshot.status) wrong(`status ${step.snapshot.status}, xstate ${ref.snapshot.status}`);
    if (!isDeepStrictEqual(step.snapshot.context, ref.snapshot.context)) wrong(`context ${JSON.stringify(step.snapshot.context)}, xstate ${JSON.stringify(ref.snapshot.context)}`);
    if (step.schedule.length !== ref.raised.length) return void wrong(`schedules ${JSON.stringify(step.schedule)}, xstate raised ${JSON.stringify(ref.raised)}`);
    step.schedule.forEach((delayed, i) => {
      const raised = ref.raised[i]!;
      if (delayed.due !== raised.due) wrong(`${delayed.deadline} due at ${delayed.due}, xstate's delay ends at ${raised.due}`);
      this.learn(delayed.deadline, raised, wrong);
      this.seen.scheduled.add(delayed.deadline);
    });
    const cancelled = step.cancel.map((deadline) => this.ids.get(deadline) ?? `(${deadline}: never scheduled)`);
    if (!isDeepStrictEqual(cancelled, ref.cancelled)) wrong(`cancels ${JSON.stringify(step.cancel)}, xstate cancelled ${JSON.stringify(ref.cancelled)}`);
    for (const deadline of step.cancel) this.seen.cancelled.add(deadline);
  }

  private learn(deadline: Deadline, raised: Reference['raised'][number], wrong: (what: string) => void): void {
    const known = this.ids.get(deadline);
    if (known === undefined) {
      const other = [...this.ids].find(([, id]) => id === raised.id);
      if (other) wrong(`deadlines ${other[0]} and ${deadline} are both xstate's ${raised.id}`);
      this.ids.set(deadline, raised.id);
      this.events.set(deadline, raised.event);
    } else if (known !== raised.id) wrong(`${deadline} was xstate's ${known}, now ${raised.id}`);
  }
}

const attempt = (run: () => Step): Step | Error => {
  try {
    return run();
  } catch (err) {
    return err instanceof Error ? err : new Error(String(err));
  }
};

interface Node {
  label: string;
  policy: FreshnessPolicy;
  mine: FreshnessSnapshot;
  theirs: FreshnessSnapshot;
}

/** Every event for one state: signals at each age (handled a minute after the state was entered), each deadline. */
function stepAll(runner: FreshnessRunner, contract: Contract, node: Node): Node[] {
  const next: Node[] = [];
  const follow = (label: string, step: Step | Error, ref: Reference) => {
    contract.compare(label, step, ref);
    if (!(step instanceof Error)) next.push({ label, policy: node.policy, mine: step.snapshot, theirs: ref.snapshot });
  };
  for (const age of ages(node.policy)) {
    const now = node.theirs.context.enteredAt + MINUTE;
    const event: SignalEvent = { type: 'signal', datetime: now - age, now };
    const label = `${node.label} → signal ${age} ms old`;
    follow(label, attempt(() => runner.send(node.mine, event)), reference(...transition(freshnessMachine, node.theirs, event)));
  }
  for (const deadline of ['stale', 'unknown'] as const) {
    const event = contract.events.get(deadline);
    if (!event) continue;
    contract.seen.delivered.add(deadline);
    const label = `${node.label} → ${deadline} deadline`;
    follow(label, attempt(() => runner.deliver(node.mine, deadline)), reference(...transition(freshnessMachine, node.theirs, event as SignalEvent)));
  }
  return next;
}

t.test('the runner steps the freshness machine exactly as xstate does', async (t) => {
  let runner: FreshnessRunner;
  try {
    runner = new FreshnessRunner();
  } catch (err) {
    const message = err instanceof Error ? err.message : String(err);
    t.fail(message.startsWith('xstate upgrade changed') ? message : broke(`what the runner reads from the freshness machine (${message})`));
    return;
  }
  const contract = new Contract();
  let nodes: Node[] = [];
  for (const [name, policy] of Object.entries(POLICIES)) {
    for (const age of ages(policy)) {
      const input = { policy, datetime: T0 - age, now: T0 };
      const label = `${name}: start ${age} ms old`;
      const step = attempt(() => runner.start(input));
      const ref = reference(...initialTransition(freshnessMachine, input));
      contract.compare(label, step, ref);
      if (!(step instanceof Error)) nodes.push({ label, policy, mine: step.snapshot, theirs: ref.snapshot });
    }
  }
  holds(t, [...contract.ids.keys()].sort(), ['stale', 'unknown'], 'the starts schedule both deadlines', 'the delayed events of the freshness machine (a deadline never scheduled)');
  // Two more events from every start: each state reached, and the deadlines of the states reached.
  for (let depth = 0; depth < 2; depth++) nodes = nodes.flatMap((node) => stepAll(runner, contract, node));

  holds(
    t,
    contract.mismatches.slice(0, 20),
    [],
    `${contract.steps} steps: the runner's equal xstate's public initialTransition / transition`,
    `how the freshness machine steps (${contract.mismatches.length} of ${contract.steps} steps differ from xstate's public transition)`,
  );
  const states = ['fresh', 'stale', 'staleForGood', 'unknown'];
  holds(t, [...contract.seen.states].sort(), states, 'every state was reached', 'the states the freshness machine reaches');
  for (const kind of ['scheduled', 'cancelled', 'delivered'] as const) {
    holds(t, [...contract.seen[kind]].sort(), ['stale', 'unknown'], `both deadlines ${kind}`, `the delayed events of the freshness machine (not every deadline ${kind})`);
  }
  t.ok(contract.steps > 4000, 'every start, and two events further from each');
});

/**
 * The fresh path (FreshnessRunner.freshSignal): wherever it answers, xstate's step from the same state
 * reaches the snapshot `start` gives for the signal's input, with the stale deadline at the time the
 * path names, and cancels only what the state left waited for; where it does not answer, the reading
 * was not fresh on arrival.
 */
t.test('the fresh path of a signal is the machine\'s own step', async (t) => {
  const runner = new FreshnessRunner();
  const wrong: string[] = [];
  let taken = 0;
  let declined = 0;
  for (const [name, policy] of Object.entries(POLICIES)) {
    // Every state: starts at every age, then one further event of each kind.
    let nodes: { label: string; snapshot: FreshnessSnapshot }[] = ages(policy).map((age) => ({
      label: `${name}: start ${age} ms old`,
      snapshot: initialTransition(freshnessMachine, { policy, datetime: T0 - age, now: T0 })[0],
    }));
    nodes = nodes.flatMap((node) => [
      node,
      ...ages(policy).map((age) => {
        const now = node.snapshot.context.enteredAt + MINUTE;
        return { label: `${node.label} → signal ${age} ms old`, snapshot: transition(freshnessMachine, node.snapshot, { type: 'signal', datetime: now - age, now })[0] };
      }),
    ]);
    for (const node of nodes) {
      for (const age of [...ages(policy), 1, 999, -1]) {
        const now = node.snapshot.context.enteredAt + MINUTE;
        const input = { policy, datetime: now - age, now };
        const fast = runner.freshSignal(input);
        const [snapshot, actions] = transition(freshnessMachine, node.snapshot, { type: 'signal', datetime: input.datetime, now });
        const ref = reference(snapshot, actions);
        const label = `${node.label} → signal ${age} ms old`;
        if (!fast) {
          declined++;
          if (snapshot.value === 'fresh') wrong.push(`${label}: declined, but xstate reaches fresh`);
          continue;
        }
        taken++;
        const started = runner.start(input).snapshot;
        if (snapshot.value !== 'fresh') wrong.push(`${label}: taken, but xstate reaches ${JSON.stringify(snapshot.value)}`);
        if (!isDeepStrictEqual(started.value, snapshot.value) || !isDeepStrictEqual(started.context, snapshot.context)) {
          wrong.push(`${label}: start gives ${JSON.stringify([started.value, started.context])}, xstate ${JSON.stringify([snapshot.value, snapshot.context])}`);
        }
        if (ref.raised.length !== 1 || ref.raised[0]!.due !== fast.due || fast.deadline !== 'stale') {
          wrong.push(`${label}: the path waits for ${fast.deadline} at ${fast.due}, xstate raised ${JSON.stringify(ref.raised)}`);
        }
      }
    }
  }
  t.same(wrong.slice(0, 20), [], `${taken} signals taken by the fresh path and ${declined} declined: each as xstate steps it`);
  t.ok(taken > 500 && declined > 500, 'both sides of each deadline were tried');
});

t.test('xstate is the exact version package.json pins', async (t) => {
  const require = createRequire(import.meta.url);
  const installed = (require('xstate/package.json') as { version: string }).version;
  const manifest = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { dependencies: Record<string, string> };
  const lock = JSON.parse(readFileSync(new URL('../../package-lock.json', import.meta.url), 'utf8')) as {
    packages: Record<string, { version?: string; dependencies?: Record<string, string> }>;
  };
  const pinned = manifest.dependencies.xstate;
  const exact = /^\d+\.\d+\.\d+$/.test(pinned ?? '');
  t.ok(exact, exact ? `package.json pins xstate ${pinned}` : `package.json must pin xstate to an exact version, not ${pinned}: the runner relies on xstate internals checked against one version; see machines/runner.ts`);
  t.equal(installed, pinned, installed === pinned ? 'the installed xstate is the pinned one' : broke(`the installed version (${installed}; package.json pins ${pinned})`));
  t.equal(lock.packages['']?.dependencies?.xstate, pinned, 'package-lock.json asks for the pinned version');
  t.equal(lock.packages['node_modules/xstate']?.version, pinned, 'package-lock.json locks the pinned version');
});
