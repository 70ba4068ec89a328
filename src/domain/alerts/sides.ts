import type { SummaryState } from '../status/summary.js';

/**
 * Driver alerts see a fuelling option's five-state status as a side: `up` when a driver can refuel
 * (AVAILABLE or LIMITEDLY_AVAILABLE, as the forecast counts availability), `down` when the station says
 * it cannot (UNAVAILABLE), `none` when nothing is known or the station is closed by its opening hours
 * (UNKNOWN, CLOSED). An alert waits for `up` ("tell me when it is available again") or for `down` ("tell
 * me when it goes down"); a `none` never sends a mail and never counts as the other side.
 */
export type Side = 'up' | 'down' | 'none';
export type WantedSide = Exclude<Side, 'none'>;
export const WANTED_SIDES = ['up', 'down'] as const satisfies readonly WantedSide[];

export function sideOf(status: SummaryState): Side {
  if (status === 'AVAILABLE' || status === 'LIMITEDLY_AVAILABLE') return 'up';
  if (status === 'UNAVAILABLE') return 'down';
  return 'none';
}

/** The alerts' view of one option: the side that has held for the settle time, and a change still settling. */
export interface OptionSides {
  settled: Side | null;
  pending: { side: Side; seq: string; at: Date } | null;
}

/**
 * One change of the option's status, in change-log order: a side other than the settled one starts
 * settling (from this change, unless the same side is settling already); the settled side again ends
 * what was settling (a flap shorter than the settle time sends nothing).
 */
export function heard(sides: OptionSides, change: { side: Side; seq: string; at: Date }): OptionSides {
  if (change.side === sides.settled) return { settled: sides.settled, pending: null };
  if (sides.pending?.side === change.side) return sides;
  return { settled: sides.settled, pending: { side: change.side, seq: change.seq, at: change.at } };
}

/** When the settling change settles: `settleMs` after it was recorded. */
export function settlesAt(pending: { at: Date }, settleMs: number): number {
  return pending.at.getTime() + settleMs;
}

/**
 * Whether an alert is told of a side that settled: it wants that side, and the side its driver last
 * heard of (or found when confirming) is another (or none).
 */
export function tells(alert: { wants: WantedSide; notifiedSide: WantedSide | null }, settled: Side): boolean {
  return settled !== 'none' && alert.wants === settled && alert.notifiedSide !== settled;
}
