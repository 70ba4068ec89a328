import { and, assign, setup, type SnapshotFrom } from 'xstate';
import type { FreshnessPolicy } from '../src/domain/categories/index.js';

/**
 * The freshness of one station's published signal of one category: `fresh` while the reading is
 * recent, `stale` once it is older than `staleAfterMs`, `unknown` once older than `unknownAfterMs`
 * (availability and usage only: without that deadline the machine never leaves `stale`).
 *
 * Deadlines run from the reading's `datetime` (when the source measured it), not from receipt, so every
 * instance that knows the reading agrees on when it turns stale and unknown. The machine has no I/O and
 * no clock: time comes in with the events. `signal` carries the reading's `datetime` and `now`, the
 * moment it is handled; the machine first classifies the reading by its age (so a reading restored
 * from the database that is already 31 minutes old lands in `unknown` straight away), then waits for
 * the next deadline with a delayed transition whose delay is measured from the time the current state
 * was entered (`enteredAt`: `now` for a signal, the deadline itself for a timed transition), so the
 * deadlines fall exactly at `datetime + staleAfterMs` and `datetime + unknownAfterMs` when the delays
 * are counted from `enteredAt`, as the platform's runner does (machines/runner.ts: a late timer does
 * not shift the next deadline). A plain `createActor` counts each delay from when it handles the
 * event, so there a late delivery delays the next deadline by as much.
 */

export type Freshness = 'fresh' | 'stale' | 'unknown';

/** A category's deadlines, as the categories give them (src/domain/categories/). */
export type { FreshnessPolicy };

export interface FreshnessContext {
  policy: FreshnessPolicy;
  /** The reading's measurement time, epoch milliseconds. */
  datetime: number;
  /** When the current state was entered, epoch milliseconds. */
  enteredAt: number;
}

/** A published reading: its measurement time and the moment it is handled (epoch milliseconds). */
export type SignalEvent = { type: 'signal'; datetime: number; now: number };

export interface FreshnessInput {
  policy: FreshnessPolicy;
  datetime: number;
  now: number;
}

const age = (context: FreshnessContext) => context.enteredAt - context.datetime;
const unknownAt = (context: FreshnessContext) =>
  context.policy.unknownAfterMs === null ? Number.POSITIVE_INFINITY : context.datetime + context.policy.unknownAfterMs;

export const freshnessMachine = setup({
  types: {
    context: {} as FreshnessContext,
    events: {} as SignalEvent,
    input: {} as FreshnessInput,
  },
  guards: {
    pastUnknown: ({ context }) => context.policy.unknownAfterMs !== null && age(context) >= context.policy.unknownAfterMs,
    pastStale: ({ context }) => age(context) >= context.policy.staleAfterMs,
    canTurnUnknown: ({ context }) => context.policy.unknownAfterMs !== null,
  },
  actions: {
    reachStaleDeadline: assign({ enteredAt: ({ context }) => context.datetime + context.policy.staleAfterMs }),
  },
  delays: {
    /** From entering `fresh` to `datetime + staleAfterMs`. */
    staleAfter: ({ context }) => Math.max(0, context.datetime + context.policy.staleAfterMs - context.enteredAt),
    /** From entering `stale` to `datetime + unknownAfterMs`. */
    unknownAfter: ({ context }) => Math.max(0, unknownAt(context) - context.enteredAt),
  },
}).createMachine({
  id: 'freshness',
  context: ({ input }) => ({ policy: input.policy, datetime: input.datetime, enteredAt: input.now }),
  initial: 'classifying',
  states: {
    /** Transient: where a reading of this age belongs. */
    classifying: {
      always: [
        { guard: 'pastUnknown', target: 'unknown' },
        { guard: and(['pastStale', 'canTurnUnknown']), target: 'stale' },
        { guard: 'pastStale', target: 'staleForGood' },
        { target: 'fresh' },
      ],
    },
    fresh: {
      after: {
        staleAfter: [
          { guard: 'canTurnUnknown', target: 'stale', actions: 'reachStaleDeadline' },
          { target: 'staleForGood', actions: 'reachStaleDeadline' },
        ],
      },
    },
    /** Stale, with the unknown deadline ahead. */
    stale: {
      after: {
        unknownAfter: { target: 'unknown', actions: assign({ enteredAt: ({ context }) => unknownAt(context) }) },
      },
    },
    /** Stale, in a category that never turns unknown: no deadline left. */
    staleForGood: {},
    unknown: {},
  },
  on: {
    signal: {
      target: '.classifying',
      reenter: true,
      actions: assign({ datetime: ({ event }) => event.datetime, enteredAt: ({ event }) => event.now }),
    },
  },
});

export type FreshnessSnapshot = SnapshotFrom<typeof freshnessMachine>;

/** The freshness a snapshot stands for (`staleForGood` is stale to everyone outside the machine). */
export function freshnessOf(snapshot: FreshnessSnapshot): Freshness {
  const value = snapshot.value as string;
  return value === 'staleForGood' ? 'stale' : (value as Freshness);
}
