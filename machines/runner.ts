import { createActor, type ActorScope, type AnyEventObject } from 'xstate';
import {
  freshnessMachine,
  type FreshnessInput,
  type FreshnessSnapshot,
  type SignalEvent,
} from './freshness.js';

/** A delayed event the machine asked for: deliver `event` at `due` (epoch ms) unless cancelled by `id`. */
export interface Delayed {
  id: string;
  event: AnyEventObject;
  due: number;
}

export interface Step {
  snapshot: FreshnessSnapshot;
  /** Delayed events to schedule, in order. */
  schedule: Delayed[];
  /** Ids of delayed events to cancel. */
  cancel: string[];
}

type Action = { type: string; params?: unknown };

/**
 * Runs the freshness machine's transitions for many lightweight actors. Each actor keeps its own
 * snapshot and timer (see LiveStatus); this runner computes steps with xstate's own transition logic
 * (`getInitialSnapshot` / `transition` of the machine, the functions `createActor` drives) and hands
 * back the delayed events the step raised or cancelled, for the caller's timers. One actor scope
 * serves every actor: a full xstate actor per station and category costs about 5 kB and 50 µs to
 * create, which 400,000 of them cannot afford; a snapshot costs about 600 bytes.
 *
 * Delays are converted to due times from the instant the machine measures them from (the context's
 * `enteredAt`: the signal's `now`, or the deadline a timed transition reached), so a deadline falls
 * exactly where the machine put it however late the timer that delivered the previous one fired.
 */
export class FreshnessRunner {
  private actions: Action[] = [];
  private readonly scope: ActorScope<FreshnessSnapshot, SignalEvent>;

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
      actionExecutor: (action: { type: string; params?: unknown }) => {
        this.actions.push(action);
      },
    } as unknown as ActorScope<FreshnessSnapshot, SignalEvent>;
  }

  /** The first state of an actor whose first reading is `input.datetime`, handled at `input.now`. */
  start(input: FreshnessInput): Step {
    this.actions = [];
    const snapshot = freshnessMachine.getInitialSnapshot(this.scope, input);
    return this.step(snapshot);
  }

  /** Delivers `event`: a signal, or a delayed event now due. */
  send(snapshot: FreshnessSnapshot, event: AnyEventObject): Step {
    this.actions = [];
    const next = freshnessMachine.transition(snapshot, event as SignalEvent, this.scope);
    return this.step(next);
  }

  private step(snapshot: FreshnessSnapshot): Step {
    const from = snapshot.context.enteredAt;
    const schedule: Delayed[] = [];
    const cancel: string[] = [];
    for (const action of this.actions) {
      const params = action.params as { delay?: number; event?: AnyEventObject; id?: string; sendId?: string } | undefined;
      if (action.type === 'xstate.raise' && params?.event && typeof params.delay === 'number') {
        schedule.push({ id: params.id ?? params.event.type, event: params.event, due: from + params.delay });
      } else if (action.type === 'xstate.cancel' && params?.sendId) {
        cancel.push(params.sendId);
      }
    }
    this.actions = [];
    return { snapshot, schedule, cancel };
  }
}
