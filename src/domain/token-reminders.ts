/**
 * When a token's owner is reminded that it expires: 30 and 7 days before. Each reminder has a key
 * made of its distance and the expiry it was scheduled for, so a reminder is sent at most once, and
 * one scheduled for an expiry since changed is told apart from the new expiry's.
 */

/** How many days before expiry the owner is reminded, earliest first. */
export const REMINDER_DAYS = [30, 7] as const;

/** One of the reminders' distances from expiry, in days. */
export type ReminderDays = (typeof REMINDER_DAYS)[number];

const DAY_MS = 24 * 60 * 60 * 1000;

/**
 * How long before expiry each reminder is due, in milliseconds, in the order of `REMINDER_DAYS`
 * (30 and 7 days of 24 hours). Tests hand in shorter ones.
 */
export const REMINDER_OFFSETS_MS: readonly [thirtyDays: number, sevenDays: number] = [30 * DAY_MS, 7 * DAY_MS];

/** A reminder to send: how many days before expiry it speaks of, when it is due, and its key. */
export interface Reminder {
  daysBefore: ReminderDays;
  dueAt: Date;
  key: string;
}

/** The key of the reminder `daysBefore` days before `expiresAt`: `expiring:7:2027-02-23T14:05:00.000Z`. */
export function reminderKey(daysBefore: ReminderDays, expiresAt: Date): string {
  return `expiring:${daysBefore}:${expiresAt.toISOString()}`;
}

/** What `reminderSchedule` needs: the token's creation and expiry, the offsets, and the present moment. */
export interface ReminderScheduleInput {
  createdAt: Date;
  expiresAt: Date | null;
  /** How long before expiry each of `REMINDER_DAYS` is due; `REMINDER_OFFSETS_MS` unless given. */
  offsetsMs?: readonly [thirtyDays: number, sevenDays: number];
  now: Date;
}

/**
 * The reminders to send for a token, earliest first, computed when it is created or its expiry
 * changes. None for a token without expiry. A reminder is left out when its due time is not after
 * the token's creation (a token created with 7 days or less to run gets no 7-day reminder, one with
 * 30 days or less no 30-day one: the creation e-mail already states the expiry), or not after `now`
 * (when an expiry is changed, a reminder whose moment has passed would name the wrong number of days).
 */
export function reminderSchedule(input: ReminderScheduleInput): Reminder[] {
  const { createdAt, expiresAt, now } = input;
  const offsets = input.offsetsMs ?? REMINDER_OFFSETS_MS;
  if (offsets.length !== REMINDER_DAYS.length || !offsets.every((ms) => Number.isFinite(ms) && ms > 0)) {
    throw new RangeError(`offsetsMs must be ${REMINDER_DAYS.length} positive numbers of milliseconds`);
  }
  if (!expiresAt) return [];
  const notBefore = Math.max(createdAt.getTime(), now.getTime());
  const reminders: Reminder[] = [];
  REMINDER_DAYS.forEach((daysBefore, i) => {
    const dueAt = new Date(expiresAt.getTime() - offsets[i]!);
    if (dueAt.getTime() > notBefore) reminders.push({ daysBefore, dueAt, key: reminderKey(daysBefore, expiresAt) });
  });
  return reminders.sort((a, b) => a.dueAt.getTime() - b.dueAt.getTime());
}
