import { EXPORT_V1_TIME_ZONE } from './fixtures.js';

/**
 * The Berlin wall clock, written out independently of the platform's opening-hours evaluation, so the
 * benches can check what the platform says of `WEEKLY_HOURS` (`Mo-Fr 06:00-22:00; Sa,Su 08:00-20:00`).
 */

const berlinClock = new Intl.DateTimeFormat('en-GB', {
  timeZone: EXPORT_V1_TIME_ZONE,
  weekday: 'short',
  hour: '2-digit',
  minute: '2-digit',
  hourCycle: 'h23',
});

/** The Berlin wall clock at `at`: weekday (Mon…Sun), minutes since midnight, and as text. */
export function berlin(at: Date): { weekday: string; minutes: number; text: string } {
  const parts = Object.fromEntries(berlinClock.formatToParts(at).map((p) => [p.type, p.value]));
  return { weekday: parts.weekday!, minutes: Number(parts.hour) * 60 + Number(parts.minute), text: `${parts.weekday} ${parts.hour}:${parts.minute}` };
}

/** Whether WEEKLY_HOURS say open at `at`. */
export function weeklyOpen(at: Date): boolean {
  const { weekday, minutes } = berlin(at);
  const [from, to] = weekday === 'Sat' || weekday === 'Sun' ? [8 * 60, 20 * 60] : [6 * 60, 22 * 60];
  return minutes >= from && minutes < to;
}

/** Whether WEEKLY_HOURS say open all through [before, after]; undefined when an opening or closing falls in it. */
export function weeklyOpenThrough(before: Date, after: Date): boolean | undefined {
  const open = weeklyOpen(before);
  return weeklyOpen(after) === open ? open : undefined;
}
