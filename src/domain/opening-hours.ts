import OpeningHours from 'opening_hours';
import { plainOpeningHoursMessage } from './opening-hours-advice.js';
import { openingHoursOutOfBounds } from './opening-hours-bounds.js';

/**
 * A station's opening hours (OpenStreetMap `opening_hours` syntax) evaluated in the station's own
 * time zone: whether it is open at an instant, and the next instant that changes.
 *
 * The `opening_hours` package reads a JS Date by its *local* fields (getHours, getDay, …) and builds
 * the dates it returns from local fields, i.e. it works in the process's time zone. So evaluation goes
 * through the station's wall clock:
 *
 * 1. the instant is turned into the station's wall-clock time (Intl.DateTimeFormat in its IANA zone);
 * 2. that wall-clock time is handed to the package as a Date whose local fields show it;
 * 3. a change the package finds is read back by its local fields, a wall-clock time again, and turned
 *    into the instant at which the station's clock shows it.
 *
 * Daylight-saving changes of the station's zone are handled deliberately, with one rule: **the station
 * is open when its wall clock shows a time its hours say is open.**
 * - Gap (clocks go forward, e.g. Europe/Berlin 02:00 → 03:00 on the last Sunday of March): wall-clock
 *   times in the gap never occur. A boundary inside it takes effect at the transition instant, the
 *   first instant whose wall clock is past it (opening at 02:30 means open from 03:00 CEST on).
 * - Overlap (clocks go back, e.g. 03:00 → 02:00 on the last Sunday of October): the repeated hour is
 *   read by the clock both times. A boundary inside it (closing at 02:30) takes effect at both of its
 *   instants, and when the clock goes back across a boundary the state changes at the transition
 *   instant itself (closed at 02:45 CEST, open again at 02:00 CET, closed at 02:30 CET).
 * `nextChange` agrees with `isOpen` on both: it is the first instant after `at` at which `isOpen`
 * gives the other answer, so a timer set to it flips the state exactly when it flips.
 *
 * The process's own zone does not matter, with one unavoidable exception: a wall-clock time the
 * process's zone itself skips (its own spring-forward hour) cannot be given to the package, which then
 * sees it one hour later. That happens only when the process runs in a zone with daylight-saving time,
 * other than the station's, for station clock times inside that zone's gap hour. In a process zone
 * without daylight-saving time (UTC, as containers run by default, or Asia/Tokyo) evaluation is exact.
 *
 * Other decisions:
 * - Null, absent or unparseable hours (or an unknown time zone) apply no hours: always open, never a
 *   change. The registry refuses unparseable hours and unknown zones at load (`checkOpeningHours`,
 *   `checkTimeZone`), so at run time this only covers rows stored before that check existed.
 * - `unknown` (a rule with only a comment, `"by appointment"`, or the `unknown` keyword) counts as
 *   open: only hours that say closed close the station.
 * - Public holidays (`PH`) need the station's country (ISO 3166-1 alpha-2); its nationwide holidays
 *   apply. Hours that use PH without a country do not parse.
 * - Variable times (sunrise, sunset, dawn, dusk) take the package's fixed defaults (06:00, 18:00,
 *   05:30, 18:30): computing them needs coordinates and real instants, which the wall-clock
 *   frame above does not give the package.
 * - Each (hours, country) is parsed once and kept (parsing costs about a millisecond).
 * - Hours outside the bounds of ./opening-hours-bounds.ts (length, parts, unknown words) are never
 *   handed to the package, which would take seconds over some of them: they do not parse.
 */

/** ISO 3166-1 alpha-2 country, for public holidays (`PH`); any case. */
export type HolidayCountry = string | null | undefined;

/** The holiday country a station's details give (`details.country`, two letters), lowercased; else null. */
export function holidayCountry(country: unknown): string | null {
  return typeof country === 'string' && /^[A-Za-z]{2}$/.test(country) ? country.toLowerCase() : null;
}

/** How far ahead `nextChange` looks for a change before answering null. */
const HORIZON_MS = 5 * 366 * 86_400_000;
/** Beyond any real offset change: how far back a clock that goes back may land. */
const MAX_JUMP_MS = 26 * 3_600_000;
/**
 * How far the package is asked to look for a change at once. It takes time that grows faster than the
 * span it searches when the state does not change (hours that close on public holidays and nothing
 * else: 14 ms for 240 days, more than 100 s for its default of five years), so a long search is made
 * of windows of a month.
 */
const WINDOW_MS = 31 * 86_400_000;
const DAY_MS = 86_400_000;
const MAX_STEPS = 1_000;
const MAX_CACHED = 10_000;

interface WallClock {
  year: number;
  /** 1–12 */
  month: number;
  day: number;
  hour: number;
  minute: number;
  second: number;
  millisecond: number;
}

type Parsed = { ok: true; oh: OpeningHours } | { ok: false; reason: string };

const parsedCache = new Map<string, Parsed>();

function parse(hours: string, country: HolidayCountry): Parsed {
  const cc = country ? country.toLowerCase() : '';
  const key = `${cc}\u0000${hours}`;
  const hit = parsedCache.get(key);
  if (hit) return hit;
  let parsed: Parsed;
  const outside = openingHoursOutOfBounds(hours);
  if (outside) {
    parsed = { ok: false, reason: outside.end === 0 ? outside.reason : reasonOf(`${hours.slice(0, outside.end)} <--- (${outside.reason})`) };
  } else {
    try {
      // An address without coordinates: holidays by country, variable times by the package's defaults.
      const where = cc ? { address: { country_code: cc } } : {};
      parsed = { ok: true, oh: new OpeningHours(hours, where as never, { mode: 0, locale: 'en' } as never) };
    } catch (err) {
      parsed = { ok: false, reason: reasonOf(err) };
    }
  }
  if (parsedCache.size >= MAX_CACHED) parsedCache.delete(parsedCache.keys().next().value as string);
  parsedCache.set(key, parsed);
  return parsed;
}

/**
 * The package's reading of `hours` (from the parse cache, shared: read it, never change it), or null
 * when they do not parse: for code that evaluates hours over a span itself (DATEX II operating hours).
 */
export function parsedOpeningHours(hours: string, country?: HolidayCountry): OpeningHours | null {
  const parsed = parse(hours, country);
  return parsed.ok ? parsed.oh : null;
}

/** The package throws strings (with a `<--- (…)` marker at the position) and, rarely, Errors. */
function reasonOf(err: unknown): string {
  const text = err instanceof Error ? err.message : String(err);
  return plainOpeningHoursMessage(text.trim().replace(/\s+/g, ' '));
}

/**
 * Why `hours` cannot be evaluated (the parser's reason, in English), or undefined when it can. With
 * `country`, hours that use public holidays are also tried against that country's holidays.
 */
export function checkOpeningHours(hours: string, country?: HolidayCountry): string | undefined {
  const parsed = parse(hours, country);
  if (!parsed.ok) return parsed.reason;
  try {
    // Some problems (a country without holiday data) only show when evaluating.
    const probe = new Date();
    parsed.oh.getState(probe);
    parsed.oh.getNextChange(probe, new Date(probe.getTime() + WINDOW_MS));
    // The parser guesses where a value is ambiguous ("9 to 5" is 09:00-05:00, overnight): a published
    // CLOSED must not rest on a guess, so a value it had to correct is refused with its reasons.
    const warnings: string[] = parsed.oh.getWarnings();
    if (warnings.length > 0) {
      return `${warnings.map((w) => plainOpeningHoursMessage(w.replace(/\s+/g, ' ').trim())).join('; ')} (it would be read as "${parsed.oh.prettifyValue()}"; write it so)`;
    }
  } catch (err) {
    // The package's warnings can fail on values it parsed ("Infinite loop" on a long run of guesses).
    return reasonOf(err);
  }
  return undefined;
}

const formatters = new Map<string, Intl.DateTimeFormat | null>();

/** A formatter giving wall-clock parts in `timeZone`; null for a zone Intl does not know. */
function formatter(timeZone: string): Intl.DateTimeFormat | null {
  let f = formatters.get(timeZone);
  if (f !== undefined) return f;
  try {
    f = new Intl.DateTimeFormat('en-US', {
      timeZone,
      hourCycle: 'h23',
      year: 'numeric',
      month: 'numeric',
      day: 'numeric',
      hour: 'numeric',
      minute: 'numeric',
      second: 'numeric',
    });
  } catch {
    f = null;
  }
  formatters.set(timeZone, f);
  return f;
}

/** Why `timeZone` is not an IANA time zone name, or undefined when it is one. */
export function checkTimeZone(timeZone: string): string | undefined {
  if (!/^[A-Za-z]/.test(timeZone)) return 'must be an IANA time zone name such as Europe/Berlin';
  if (formatter(timeZone) === null) return `unknown time zone "${timeZone}" (must be an IANA time zone name such as Europe/Berlin)`;
  return undefined;
}

function wallClock(f: Intl.DateTimeFormat, instant: number): WallClock {
  const w: WallClock = { year: 0, month: 0, day: 0, hour: 0, minute: 0, second: 0, millisecond: 0 };
  for (const part of f.formatToParts(instant)) {
    if (part.type === 'year' || part.type === 'month' || part.type === 'day' || part.type === 'hour' || part.type === 'minute' || part.type === 'second') {
      w[part.type] = Number(part.value);
    }
  }
  w.millisecond = ((instant % 1000) + 1000) % 1000;
  return w;
}

/** The wall-clock time as if it were UTC, in epoch ms: comparable and subtractable. */
const wallMs = (w: WallClock) => Date.UTC(w.year, w.month - 1, w.day, w.hour, w.minute, w.second, w.millisecond);

/** The zone's offset from UTC at an instant, in ms. */
const offsetAt = (f: Intl.DateTimeFormat, instant: number) => wallMs(wallClock(f, instant)) - instant;

/** The Date the package reads as this wall-clock time: its local fields are the wall clock's. */
const toPackage = (w: WallClock) => new Date(w.year, w.month - 1, w.day, w.hour, w.minute, w.second, w.millisecond);

const fromPackage = (d: Date): WallClock => ({
  year: d.getFullYear(),
  month: d.getMonth() + 1,
  day: d.getDate(),
  hour: d.getHours(),
  minute: d.getMinutes(),
  second: d.getSeconds(),
  millisecond: d.getMilliseconds(),
});

/**
 * The first instant after `after` at which the zone's clock shows `wall`: in an overlap the earliest
 * such instant after `after`; in a gap the transition instant (the first at which the clock is past it).
 */
function instantOf(f: Intl.DateTimeFormat, wall: WallClock, after: number): number {
  const local = wallMs(wall);
  const before = offsetAt(f, local - DAY_MS);
  const later = offsetAt(f, local + DAY_MS);
  const candidates = [...new Set([local - before, local - later])]
    .filter((instant) => offsetAt(f, instant) === local - instant)
    .sort((a, b) => a - b);
  if (candidates.length > 0) return candidates.find((instant) => instant > after) ?? candidates[candidates.length - 1]!;
  // A gap: the clock jumps from before `wall` to past it. Find that jump.
  return firstOffsetChange(f, local - later - 1, local - before) ?? local - before;
}

/**
 * The first instant in (from, to] at which the zone's offset differs from its offset at `from`, or
 * null. Offsets are sampled daily (real zones change at most a few times a year) and the change is
 * then pinned to the millisecond.
 */
function firstOffsetChange(f: Intl.DateTimeFormat, from: number, to: number): number | null {
  const start = offsetAt(f, from);
  let low = from;
  let high: number | null = null;
  for (let probe = Math.min(from + DAY_MS, to); ; probe = Math.min(probe + DAY_MS, to)) {
    if (offsetAt(f, probe) !== start) {
      high = probe;
      break;
    }
    low = probe;
    if (probe >= to) break;
  }
  if (high === null) return null;
  // Invariant: offset(low) = start, offset(high) ≠ start.
  while (high - low > 1) {
    const mid = Math.floor((low + high) / 2);
    if (offsetAt(f, mid) === start) low = mid;
    else high = mid;
  }
  return high;
}

/** Open or unknown counts as open: only hours that say closed close the station. */
function openAtWall(oh: OpeningHours, wall: WallClock): boolean {
  const date = toPackage(wall);
  return oh.getState(date) || oh.getUnknown(date);
}

interface Evaluation {
  oh: OpeningHours;
  f: Intl.DateTimeFormat;
}

function evaluation(hours: string | null | undefined, timeZone: string | null | undefined, country: HolidayCountry): Evaluation | null {
  if (hours === null || hours === undefined || !timeZone) return null;
  const f = formatter(timeZone);
  if (f === null) return null;
  const parsed = parse(hours, country);
  return parsed.ok ? { oh: parsed.oh, f } : null;
}

function openAt(e: Evaluation, instant: number): boolean {
  return openAtWall(e.oh, wallClock(e.f, instant));
}

/** `use` of the evaluated hours; `otherwise` when they cannot be evaluated or evaluating them throws. */
function evaluated<T>(
  hours: string | null | undefined,
  timeZone: string | null | undefined,
  country: HolidayCountry | undefined,
  otherwise: T,
  use: (e: Evaluation) => T,
): T {
  const e = evaluation(hours, timeZone, country);
  if (e === null) return otherwise;
  try {
    return use(e);
  } catch {
    return otherwise;
  }
}

/**
 * Whether a station with these opening hours is open at `at`, evaluated by the wall clock of
 * `timeZone` (an IANA name). No hours, or hours or a zone that cannot be evaluated: open.
 */
export function isOpen(hours: string | null | undefined, timeZone: string | null | undefined, at: Date, country?: HolidayCountry): boolean {
  // Always open, whatever the clock says: no need to read it.
  if (hours === '24/7') return true;
  return evaluated(hours, timeZone, country, true, (e) => openAt(e, at.getTime()));
}

/**
 * Whether stations are open at one instant, each distinct (hours, zone, country) evaluated once: a
 * thousand stations usually share a handful of opening hours.
 */
export function openingAt(at: Date): (station: { openingHours?: string | null; timeZone?: string | null; holidayCountry?: HolidayCountry }) => boolean {
  const known = new Map<string, boolean>();
  return (station) => {
    const key = `${station.openingHours ?? ''}\u0000${station.timeZone ?? ''}\u0000${station.holidayCountry ?? ''}`;
    let open = known.get(key);
    if (open === undefined) {
      open = isOpen(station.openingHours, station.timeZone, at, station.holidayCountry);
      known.set(key, open);
    }
    return open;
  };
}

/**
 * The first instant after `at` at which `isOpen` gives the other answer (a whole minute of the
 * station's clock, or a daylight-saving transition), or null when there is none within five years.
 * No hours, or hours or a zone that cannot be evaluated: null.
 */
export function nextChange(hours: string | null | undefined, timeZone: string | null | undefined, at: Date, country?: HolidayCountry): Date | null {
  // Always open (see isOpen): it never changes.
  if (hours === '24/7') return null;
  return evaluated(hours, timeZone, country, null, (e) => nextChangeOf(e, at.getTime()));
}

function nextChangeOf(e: Evaluation, at: number): Date | null {
  const { oh, f } = e;
  const open = openAt(e, at);
  const horizon = at + HORIZON_MS;
  let cursor = at;
  for (let step = 0; step < MAX_STEPS && cursor <= horizon; step++) {
    const from = toPackage(wallClock(f, cursor));
    // The package's next change within a window, with the clock running on without a daylight-saving jump.
    const change = oh.getNextChange(from, new Date(from.getTime() + WINDOW_MS));
    const candidate: number | null = change === undefined ? null : instantOf(f, fromPackage(change), cursor);
    const windowEnd = Math.min(cursor + WINDOW_MS - MAX_JUMP_MS, horizon);
    // A daylight-saving transition before that change moves the clock; it may change the state itself.
    const transition = firstOffsetChange(f, cursor, candidate ?? windowEnd);
    if (transition !== null && (candidate === null || transition <= candidate)) {
      if (openAt(e, transition) !== open) return new Date(transition);
      cursor = transition;
      continue;
    }
    if (candidate === null) {
      // No change within a month of hours that are the same every week: the state never changes.
      // Otherwise the next window starts before this one's end (by more than a clock jumps), so that a
      // change at its very end is not missed.
      if (windowEnd >= horizon || oh.isWeekStable()) return null;
      cursor = windowEnd;
      continue;
    }
    if (openAt(e, candidate) !== open) return new Date(candidate);
    cursor = candidate;
  }
  return null;
}
