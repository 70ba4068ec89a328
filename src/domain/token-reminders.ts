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

/** What `dueReminder` needs: the token's creation and expiry, the offsets, and the present moment. */
export interface DueReminderInput {
  createdAt: Date;
  expiresAt: Date | null;
  offsetsMs?: readonly [thirtyDays: number, sevenDays: number];
  now: Date;
}

/**
 * The reminder due now for a token whose reminders are found by a sweep rather than scheduled when it
 * is made (import and legacy export tokens: their managers and the admins change over a token's year,
 * and tokens made before these reminders existed get them too). Of the reminders whose time has come,
 * only the one nearest to expiry counts: a 30-day reminder missed (the platform was down) is not sent
 * once the 7-day one is due. None when the token has expired, has no expiry, or when that reminder's
 * time is not after the token's creation (as `reminderSchedule`: a token made with 30 days or less to
 * run gets no 30-day reminder).
 */
export function dueReminder(input: DueReminderInput): Reminder | undefined {
  const { createdAt, expiresAt, now } = input;
  const offsets = input.offsetsMs ?? REMINDER_OFFSETS_MS;
  if (!expiresAt || expiresAt.getTime() <= now.getTime()) return undefined;
  for (let i = REMINDER_DAYS.length - 1; i >= 0; i--) {
    const daysBefore = REMINDER_DAYS[i]!;
    const dueAt = new Date(expiresAt.getTime() - offsets[i]!);
    if (dueAt.getTime() > now.getTime()) continue;
    if (dueAt.getTime() <= createdAt.getTime()) return undefined;
    return { daysBefore, dueAt, key: reminderKey(daysBefore, expiresAt) };
  }
  return undefined;
}

/**
 * How many days a reminder says are left: its own distance (30, 7) when it goes out on time, the
 * whole days really left (rounded) when it goes out more than a day late, so that it never names a
 * wrong number of days. A shortened schedule (TOKEN_REMINDERS in tests) is never a day late, so its
 * e-mails keep their 30- and 7-day wording.
 */
export function daysLeftAt(reminder: { daysBefore: number; dueAt: Date; expiresAt: Date }, at: Date): number {
  if (at.getTime() - reminder.dueAt.getTime() <= DAY_MS) return reminder.daysBefore;
  return Math.max(0, Math.min(reminder.daysBefore, Math.round((reminder.expiresAt.getTime() - at.getTime()) / DAY_MS)));
}

/** Who is reminded of an import or legacy export token, and as what. */
export interface CredentialRecipient {
  email: string;
  as: 'manager' | 'admin';
}

/**
 * The people told that an import or legacy export token expires: the originator's managers (active
 * portal accounts with the manager role for it); and the admins (active accounts with the admin role,
 * and the ADMIN_EMAILS addresses) for a token loaded from a registry file, a legacy export token, or an
 * import token whose originator has no manager. Addresses compared without case; each told once (a
 * manager who is an admin too, as a manager).
 */
export function credentialRecipients(input: {
  generation: string;
  /** Loaded from a registry file (no hint), not made on the portal. */
  fromFile: boolean;
  managers: readonly string[];
  admins: readonly string[];
}): CredentialRecipient[] {
  const out = new Map<string, CredentialRecipient>();
  const isImport = input.generation === 'import_v1' || input.generation === 'import_v2';
  if (isImport) for (const email of input.managers) out.set(email.toLowerCase(), { email, as: 'manager' });
  if (!isImport || input.fromFile || out.size === 0) {
    for (const email of input.admins) if (!out.has(email.toLowerCase())) out.set(email.toLowerCase(), { email, as: 'admin' });
  }
  return [...out.values()];
}
