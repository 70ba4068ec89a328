import {
  createActor,
  type ActorScope,
  type ExecutableActionObject,
  type ExecutableActionsFrom,
} from 'xstate';
import {
  freshnessMachine,
  type Freshness,
  type FreshnessInput,
  type FreshnessSnapshot,
  type SignalEvent,
} from './freshness.js';

/**
 * The deadlines a freshness actor waits for, by our own names: `stale` (the machine's `staleAfter`
 * delay, from `fresh`) and `unknown` (its `unknownAfter` delay, from `stale`). xstate's names for the
 * events behind them are kept in this module.
 */
export type Deadline = 'stale' | 'unknown';

/** A deadline the machine waits for: deliver it (`FreshnessRunner.deliver`) at `due` (epoch ms). */
export interface Delayed {
  deadline: Deadline;
  due: number;
}

/** Where a signal leaves an actor (see `FreshnessRunner.classify`): its freshness and the one deadline it then waits for. */
export interface Classified {
  freshness: Freshness;
  pending: Delayed | undefined;
}

export interface Step {
  snapshot: FreshnessSnapshot;
  /** Deadlines to schedule, in order. */
  schedule: Delayed[];
  /** Deadlines no longer waited for: the state that scheduled them was left. */
  cancel: Deadline[];
}

/** Which deadline each of the machine's named delays is (the names are the machine's, not xstate's). */
const DEADLINE_OF_DELAY: Readonly<Record<string, Deadline>> = { staleAfter: 'stale', unknownAfter: 'unknown' };

/** The executable actions of a step, as xstate's public `transition` types them. */
type MachineAction = ExecutableActionsFrom<typeof freshnessMachine>;
/** A raised event; delayed when `params.delay` is a number (xstate's type for it is not exported by name). */
type RaiseAction = Extract<MachineAction, { type: 'xstate.raise' }>;
/** The cancelling of a delayed event by id: xstate hands it to the executor but leaves it out of `ExecutableActionsFrom`. */
type CancelAction = ExecutableActionObject & { type: 'xstate.cancel'; params: { sendId: string } };

const isRaise = (action: ExecutableActionObject): action is RaiseAction => action.type === 'xstate.raise';
const isCancel = (action: ExecutableActionObject): action is CancelAction =>
  action.type === 'xstate.cancel' && typeof (action.params as { sendId?: unknown } | undefined)?.sendId === 'string';

/** Thrown when the installed xstate no longer steps the machine the way this module relies on. */
function upgradeBroke(what: string): Error {
  return new Error(`xstate upgrade changed ${what}; see machines/runner.ts`);
}

/**
 * xstate's event type for each deadline and back, read from the machine's delayed transitions
 * (`StateNode.after`, public): xstate names them itself (`xstate.after.<delay>.<state id>`), so
 * nobody outside this module compares against those strings.
 */
function deadlineEvents(): { eventOf: Record<Deadline, string>; deadlineOf: Map<string, Deadline> } {
  const deadlineOf = new Map<string, Deadline>();
  for (const state of Object.values(freshnessMachine.states)) {
    for (const transition of state.after) {
      const deadline = typeof transition.delay === 'string' ? DEADLINE_OF_DELAY[transition.delay] : undefined;
      if (!deadline) throw upgradeBroke(`the freshness machine's delayed transitions (delay ${String(transition.delay)})`);
      const known = deadlineOf.get(transition.eventType);
      if (known && known !== deadline) throw upgradeBroke(`the freshness machine's delayed event ${transition.eventType}`);
      deadlineOf.set(transition.eventType, deadline);
    }
  }
  const eventOf = {} as Record<Deadline, string>;
  for (const [eventType, deadline] of deadlineOf) eventOf[deadline] = eventType;
  if (!eventOf.stale || !eventOf.unknown || deadlineOf.size !== 2) {
    throw upgradeBroke(`the freshness machine's delayed events (${[...deadlineOf.keys()].join(', ')})`);
  }
  return { eventOf, deadlineOf };
}

/**
 * Runs the freshness machine's transitions for many lightweight actors. Each actor keeps its own
 * snapshot and deadline (see LiveStatus); this runner computes steps with xstate's own transition
 * logic and hands back the deadlines the step scheduled or cancelled, for the caller's timers.
 *
 * This is the one module that relies on xstate internals, and it does so for speed. xstate's public
 * `initialTransition(logic, input)` / `transition(logic, snapshot, event)` give the same steps (the
 * contract test, test/unit/status-rules.test.ts, checks that for every state and event of the machine),
 * but each call creates an inert actor (`createActor`, which computes an initial snapshot of its own,
 * and a fresh actor system): about 11-14 µs more per call than the step itself. Measured with
 * xstate 5.33.3 on the 2-core build machine, under load from other work, 400,000 starts plus one
 * signal each, snapshots held:
 * - public functions: 50-136 µs per start (20-54 s for 400,000), 65-178 µs per signal (26-71 s);
 * - this runner: 11-19 µs per start (4.5-7.7 s for 400,000), 15-31 µs per signal (5.8-12.5 s);
 * - heap held after a full GC the same both ways, about 650 bytes per actor (260 MB for 400,000);
 *   resident memory 1.22 GB with the public functions against 0.99 GB (their garbage).
 * The public functions alone would take the restore of 100,000 stations × 4 categories past its
 * 20 s budget. So one actor scope, built here once, serves every step: `getInitialSnapshot(scope,
 * input)` and `transition(snapshot, event, scope)` of the machine with an `ActorScope` made like
 * xstate's inert one (its fields are xstate's to change: hence xstate pinned to an exact version in
 * package.json and the contract test).
 *
 * What this module relies on, all checked by the contract test: the `ActorScope` fields below; a
 * state's delayed transition handed to `actionExecutor` as `xstate.raise` with a numeric
 * `params.delay`, `params.event` and `params.id` on entry and as `xstate.cancel` with that id as
 * `params.sendId` on exit; and `StateNode.after` naming the delayed events.
 *
 * Delays are converted to due times from the instant the machine measures them from (the context's
 * `enteredAt`: the signal's `now`, or the deadline a timed transition reached), so a deadline falls
 * exactly where the machine put it however late the timer that delivered the previous one fired.
 */
export class FreshnessRunner {
  private actions: ExecutableActionObject[] = [];
  private readonly scope: ActorScope<FreshnessSnapshot, SignalEvent>;
  private readonly events = deadlineEvents();

  constructor() {
    // Like xstate's own inert scope for `transition()`, made once: actions are collected, not run.
    const self = createActor(freshnessMachine, {
      input: { policy: { staleAfterMs: 1, unknownAfterMs: null }, datetime: 0, now: 0 },
    });
    this.scope = {
      self,
      defer: () => {},
      id: '',
      logger: () => {},
      sessionId: '',
      stopChild: () => {},
      system: self.system,
      emit: () => {},
      actionExecutor: (action) => {
        this.actions.push(action);
      },
    };
  }

  /** The first state of an actor whose first reading is `input.datetime`, handled at `input.now`. */
  start(input: FreshnessInput): Step {
    this.actions = [];
    return this.step(freshnessMachine.getInitialSnapshot(this.scope, input));
  }

  /**
   * The machine's step for a signal (or its start) without stepping it. From any state, `signal`
   * re-enters `classifying`, which places the reading by its age at `input.now`: `unknown` past the
   * unknown deadline (nothing more to wait for), `stale` past the stale deadline (waiting for `unknown`
   * at `datetime + unknownAfterMs`, or for nothing in a category that never turns unknown), else `fresh`
   * (waiting for `stale` at `datetime + staleAfterMs`); leaving the previous state cancels whatever it
   * waited for. The snapshot reached is the one `start(input)` gives (the context holds the policy,
   * `datetime` and `now`, nothing else), so a caller may keep `input` and make the snapshot only when a
   * deadline needs it. This saves the machine's step (about 10 µs, and the snapshot's few hundred bytes
   * held per actor) on the import path and on the restore of every stored reading at start; the
   * contract test checks it against xstate's own step for every state and ages on both sides of each
   * deadline.
   */
  classify(input: FreshnessInput): Classified {
    const age = input.now - input.datetime;
    const { staleAfterMs, unknownAfterMs } = input.policy;
    if (unknownAfterMs !== null && age >= unknownAfterMs) return { freshness: 'unknown', pending: undefined };
    if (age >= staleAfterMs) {
      return { freshness: 'stale', pending: unknownAfterMs === null ? undefined : { deadline: 'unknown', due: input.datetime + unknownAfterMs } };
    }
    return { freshness: 'fresh', pending: { deadline: 'stale', due: input.datetime + staleAfterMs } };
  }

  /** Delivers a signal. */
  send(snapshot: FreshnessSnapshot, event: SignalEvent): Step {
    this.actions = [];
    return this.step(freshnessMachine.transition(snapshot, event, this.scope));
  }

  /** Delivers a deadline now due (one of a state that was left changes nothing). */
  deliver(snapshot: FreshnessSnapshot, deadline: Deadline): Step {
    this.actions = [];
    // The machine's event type is a delayed event of its own, outside SignalEvent.
    const event = { type: this.events.eventOf[deadline] } as unknown as SignalEvent;
    return this.step(freshnessMachine.transition(snapshot, event, this.scope));
  }

  private step(snapshot: FreshnessSnapshot): Step {
    const from = snapshot.context.enteredAt;
    const schedule: Delayed[] = [];
    const cancel: Deadline[] = [];
    for (const action of this.actions) {
      if (isRaise(action) && typeof action.params.delay === 'number') {
        schedule.push({ deadline: this.deadlineOf(action.params.id ?? action.params.event.type), due: from + action.params.delay });
      } else if (isCancel(action)) {
        cancel.push(this.deadlineOf(action.params.sendId));
      }
    }
    this.actions = [];
    return { snapshot, schedule, cancel };
  }

  private deadlineOf(eventType: string): Deadline {
    const deadline = this.events.deadlineOf.get(eventType);
    if (!deadline) throw upgradeBroke(`the freshness machine's delayed event ids (unexpected ${eventType})`);
    return deadline;
  }
}
