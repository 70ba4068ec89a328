import type OpeningHours from 'opening_hours';
import { holidayCountry, parsedOpeningHours } from '../opening-hours.js';

/**
 * A station's opening hours (OpenStreetMap `opening_hours` syntax) as DATEX II 3.7 operating hours:
 * exact where DATEX can say them, approximated, and saying so, where it cannot.
 *
 * DATEX describes hours as periods, each a set of weekdays, a set of months and times of day, plus
 * "public holiday" as a special day. OSM hours can say much more (dates, week numbers, the first Monday
 * of a month, years, Easter, sunrise). So the hours are not translated rule by rule: they are evaluated
 * by the same `opening_hours` package the platform uses everywhere, and what they do is described.
 *
 * - Every date of 2027 and 2028 (a leap year among them: each weekday of each month occurs 8 to 10
 *   times) is evaluated to the minute; "unknown" and comment-only hours count as open, as elsewhere.
 * - Open all day on every one of those dates, public holidays included: `OpenAllHours`.
 * - Otherwise each weekday of each month (84 cells) gets the hours its dates have. When all its dates
 *   agree the cell is exact; when they do not (hours that depend on the date, not only on the month and
 *   the weekday) the cell gets the hours most of its dates have, and the result says it is approximate.
 * - Cells with the same hours become periods: days × months, grouped by month (or by weekday, when
 *   that makes fewer periods). A list with every day or every month is left empty, which means "all".
 * - Hours past midnight: an interval that ends at midnight and continues on the next day up to a time
 *   before its own start is one period of the first day that ends the next day (22:00-02:00); the next
 *   day does not repeat it. A day open all day is written without times and never runs on.
 *   24:00 is never written: a period ending at midnight ends at 00:00, earlier than its start.
 * - Public holidays (when the hours say PH and the station's country is known): holidays and the days
 *   next to them are left out of the cells and evaluated apart. Closed on holidays: an exception period
 *   for public holidays. Holidays with hours of their own: a valid period for public holidays with those
 *   hours, and an exception period for public holidays at every other time of the day. DATEX subtracts
 *   exception periods from valid periods, so an exception for the whole holiday would also remove the
 *   holiday's own hours; its complement removes only the weekday's usual hours. Special days are written
 *   with `intersectWithApplicableDays` false and no days or months of their own: the union of no days
 *   with the holidays, i.e. the holidays themselves.
 * - Closed on every date (`off`): an overall period without valid periods would mean "always", so the
 *   hours are one exception period covering every day instead.
 * - The result is checked: the DATEX hours are evaluated on every date of the span and compared with
 *   the package, minute by minute. Anything that differs makes the result approximate, with a reason.
 * - What the package cannot evaluate (no hours, hours that do not parse, PH without a country, school
 *   holidays of a country whose holidays differ by region): nothing is published (null).
 * - Dates on which the process's own clock changes (daylight saving, when the process does not run in
 *   UTC) are left out: the package reads the process's clock and would see the skipped hour wrongly.
 */

export type DatexDay = 'monday' | 'tuesday' | 'wednesday' | 'thursday' | 'friday' | 'saturday' | 'sunday';
export type DatexMonth = 'january' | 'february' | 'march' | 'april' | 'may' | 'june'
  | 'july' | 'august' | 'september' | 'october' | 'november' | 'december';
/** 'HH:MM:SS'; an end earlier than the start: the period runs past midnight into the next day. */
export interface DatexTimeOfDay { start: string; end: string }
export interface DatexPeriod {
  /** Empty: every day. */
  days: DatexDay[];
  /** Empty: every month. */
  months: DatexMonth[];
  /** Empty: the whole day. */
  times: DatexTimeOfDay[];
  /** The period is public holidays (com:SpecialDay publicHoliday, intersectWithApplicableDays false). */
  publicHoliday?: true;
}
export type DatexHours =
  | { kind: 'openAllHours' }
  | { kind: 'specification'; valid: DatexPeriod[]; exceptions: DatexPeriod[]; exact: boolean; approximations: string[] };

export const DATEX_DAYS: readonly DatexDay[] = ['monday', 'tuesday', 'wednesday', 'thursday', 'friday', 'saturday', 'sunday'];
export const DATEX_MONTHS: readonly DatexMonth[] = [
  'january', 'february', 'march', 'april', 'may', 'june', 'july', 'august', 'september', 'october', 'november', 'december',
];

/** Why a result is approximate: one sentence per kind, in this order. */
export const APPROXIMATIONS = {
  dates: 'Specific dates (such as Dec 24) are not published: each weekday of each month shows its usual hours.',
  weeks: 'Week numbers are not published: each weekday of each month shows its usual hours.',
  nth: 'Weekdays counted within a month (such as Mo[1]) are not published: each weekday of each month shows its usual hours.',
  easter: 'Easter and the days counted from it are not published: each weekday of each month shows its usual hours.',
  schoolHolidays: 'School holidays are not published: each weekday of each month shows its usual hours.',
  years: 'Years are not published: the hours are published as if they applied every year.',
  variableTimes: 'Sunrise, sunset, dawn and dusk are published as the fixed times 06:00, 18:00, 05:30 and 18:30.',
  holidaysDiffer: 'Public holidays do not all have the same hours: the hours most of them have are published.',
  holidayMidnight: 'Hours running past midnight into or out of a public holiday are not published exactly.',
  other: 'Some hours depend on more than the month and the weekday: each weekday of each month shows its usual hours.',
} as const;
type Approximation = keyof typeof APPROXIMATIONS;

/** What the text says that DATEX cannot (comments removed first); `dated` kinds matter only when the dates show it. */
const KINDS: [Approximation, RegExp, 'dated' | 'always'][] = [
  ['dates', /\b(?:jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)\s*\d{1,2}(?![\d:])/i, 'dated'],
  ['weeks', /\bweek\b/i, 'dated'],
  ['nth', /\b(?:mo|tu|we|th|fr|sa|su)\s*\[/i, 'dated'],
  ['easter', /\beaster\b/i, 'dated'],
  ['schoolHolidays', /\bSH\b/, 'dated'],
  ['years', /(?<![\d:])\d{4}(?![\d:])/, 'always'],
  ['variableTimes', /\b(?:sunrise|sunset|dawn|dusk)\b/i, 'always'],
];

const DAY_MS = 86_400_000;
const FULL = 1440;
/** The evaluated span, in days since 1970-01-01 (civil dates, no time zone). */
const FIRST = Date.UTC(2027, 0, 1) / DAY_MS;
const LAST = Date.UTC(2028, 11, 31) / DAY_MS;

/** Minutes of a day, start < end; an end past 1440 runs into the next day, 1440 itself is midnight. */
type Interval = [number, number];
/** A day's hours as DATEX will say them: intervals, 'full' (the whole day), or none (closed). */
type DayHours = Interval[] | 'full';

const weekdayOf = (day: number) => (new Date(day * DAY_MS).getUTCDay() + 6) % 7;
const monthOf = (day: number) => new Date(day * DAY_MS).getUTCMonth();
/** The Date the package reads as midnight starting `day` (its local fields show that date). */
const localMidnight = (day: number) => {
  const d = new Date(day * DAY_MS);
  return new Date(d.getUTCFullYear(), d.getUTCMonth(), d.getUTCDate());
};
const dayOfLocal = (d: Date) => Date.UTC(d.getFullYear(), d.getMonth(), d.getDate()) / DAY_MS;

/** The open minutes of each date from `first` to `last`, as the package says (open or unknown). */
function packageMinutes(oh: OpeningHours, first: number, last: number): Uint8Array[] {
  const days = Array.from({ length: last - first + 1 }, () => new Uint8Array(FULL));
  for (const [from, to] of oh.getOpenIntervals(localMidnight(first), localMidnight(last + 1))) {
    const [endDay, endMinute] = [dayOfLocal(to), to.getHours() * 60 + to.getMinutes()];
    for (let day = dayOfLocal(from), m = from.getHours() * 60 + from.getMinutes(); day < endDay || (day === endDay && m < endMinute); day++, m = 0) {
      days[day - first]?.fill(1, m, day < endDay ? FULL : endMinute);
    }
  }
  return days;
}

function intervalsOf(bits: Uint8Array): Interval[] {
  const out: Interval[] = [];
  for (let start = bits.indexOf(1); start >= 0; ) {
    const end = bits.indexOf(0, start);
    out.push([start, end < 0 ? FULL : end]);
    start = end < 0 ? -1 : bits.indexOf(1, end);
  }
  return out;
}

const isFull = (iv: Interval[]) => iv.length === 1 && iv[0]![0] === 0 && iv[0]![1] === FULL;

/** Whether day `a`'s last interval runs on into day `b`: it ends at midnight, b's first starts then and ends before a's started. */
function continues(a: Interval[], b: Interval[]): boolean {
  const last = a[a.length - 1];
  const first = b[0];
  return !!last && !!first && !isFull(a) && !isFull(b) && last[1] === FULL && first[0] === 0 && first[1] < last[0];
}

/** A date's hours as DATEX says them, from the package's hours of the day before, the date and the day after. */
function dayHours(prev: Interval[], cur: Interval[], next: Interval[]): DayHours {
  if (isFull(cur)) return 'full';
  const times = continues(prev, cur) ? cur.slice(1) : cur.slice();
  const last = times[times.length - 1];
  if (last && continues(cur, next)) times[times.length - 1] = [last[0], FULL + next[0]![1]];
  return times;
}

const hms = (minute: number) => `${String(Math.floor(minute / 60) % 24).padStart(2, '0')}:${String(minute % 60).padStart(2, '0')}:00`;
const keyOf = (h: DayHours) => (h === 'full' ? '*' : h.map(([s, e]) => `${s}-${e}`).join(','));
const timesOf = (h: DayHours): DatexTimeOfDay[] => (h === 'full' ? [] : h.map(([s, e]) => ({ start: hms(s), end: hms(e % FULL) })));
const closed = (h: DayHours) => h !== 'full' && h.length === 0;

/** The most common value (the earliest seen on a tie) and whether every sample had it. */
function mostCommon<T>(samples: [string, T][]): { value: T; key: string; unanimous: boolean } | null {
  const counts = new Map<string, { n: number; value: T }>();
  for (const [key, value] of samples) counts.set(key, { n: (counts.get(key)?.n ?? 0) + 1, value });
  let best: [string, { n: number; value: T }] | undefined;
  for (const entry of counts) if (!best || entry[1].n > best[1].n) best = entry;
  return best ? { value: best[1].value, key: best[0], unanimous: counts.size === 1 } : null;
}

/** Rectangles days × months covering exactly the cells (index month * 7 + weekday): by month or by weekday, fewer wins. */
function rectangles(cells: boolean[]): { days: number[]; months: number[] }[] {
  const group = (rows: number, cols: number, has: (row: number, col: number) => boolean) => {
    const groups = new Map<string, { rows: number[]; cols: number[] }>();
    for (let r = 0; r < rows; r++) {
      const set = Array.from({ length: cols }, (_, c) => c).filter((c) => has(r, c));
      if (set.length > 0) groups.set(set.join(), { rows: [...(groups.get(set.join())?.rows ?? []), r], cols: set });
    }
    return [...groups.values()];
  };
  const byMonth = group(12, 7, (m, d) => cells[m * 7 + d]!).map((g) => ({ months: g.rows, days: g.cols }));
  const byDay = group(7, 12, (d, m) => cells[m * 7 + d]!).map((g) => ({ days: g.rows, months: g.cols }));
  return byDay.length < byMonth.length ? byDay : byMonth;
}

const named = <T>(all: readonly T[], picked: number[]) => (picked.length === all.length ? [] : picked.map((i) => all[i]!));
/** Whether the day, or the day before or after it, is in the set. */
const near = (set: Set<number>, day: number) => set.has(day - 1) || set.has(day) || set.has(day + 1);

const holidaysOf = new Map<string, Set<number>>();
/** The days of the span (and the day on either side) that are the country's public holidays. */
function holidayDays(country: string): Set<number> {
  let out = holidaysOf.get(country);
  if (out) return out;
  const ph = parsedOpeningHours('PH', country);
  if (ph === null) throw new Error(`no public holidays for ${country}`);
  out = new Set<number>();
  for (const [i, bits] of packageMinutes(ph, FIRST - 1, LAST + 1).entries()) if (bits[720]) out.add(FIRST - 1 + i);
  holidaysOf.set(country, out);
  return out;
}

/** Dates on which the process's own clock changes its offset (the package cannot be given their skipped hour). */
function clockChangeDays(first: number, last: number): Set<number> {
  const out = new Set<number>();
  for (let day = first; day <= last; day++) if (localMidnight(day).getTimezoneOffset() !== localMidnight(day + 1).getTimezoneOffset()) out.add(day);
  return out;
}

const results = new Map<string, DatexHours | null>();
const MAX_CACHED = 2_000;

/** null when the station has no hours (or they cannot be evaluated): nothing is published. */
export function datexHours(hours: string | null | undefined, country: string | null | undefined): DatexHours | null {
  if (typeof hours !== 'string' || hours.trim() === '') return null;
  const cc = holidayCountry(country);
  const key = `${cc ?? ''}\u0000${hours}`;
  let result = results.get(key);
  if (result === undefined) {
    try {
      result = convert(hours, cc);
    } catch {
      result = null;
    }
    if (results.size >= MAX_CACHED) results.delete(results.keys().next().value as string);
    results.set(key, result);
  }
  return result === null ? null : structuredClone(result);
}

function convert(hours: string, country: string | null): DatexHours | null {
  if (hours.trim() === '24/7') return { kind: 'openAllHours' };
  const oh = parsedOpeningHours(hours, country);
  if (oh === null) return null;
  const plain = hours.replace(/"[^"]*"/g, ' ');
  const said = KINDS.filter(([, re]) => re.test(plain));
  const dated = said.filter(([, , when]) => when === 'dated').map(([kind]) => kind);
  const why = new Set<Approximation>(said.filter(([, , when]) => when === 'always').map(([kind]) => kind));
  const first = FIRST - 1;
  const bits = packageMinutes(oh, first, LAST + 1);
  const raw = bits.map(intervalsOf);
  const at = (day: number) => raw[day - first]!;
  const minutesAt = (day: number) => bits[day - first]!;
  const holidays = country !== null && /\bPH\b/.test(plain) ? holidayDays(country) : new Set<number>();
  const clock = clockChangeDays(first, LAST + 1);
  let everyDayOpen = true;
  for (let day = FIRST; day <= LAST && everyDayOpen; day++) everyDayOpen = isFull(at(day));
  if (everyDayOpen && !why.has('years')) return { kind: 'openAllHours' };

  // Each weekday of each month: the hours of its dates away from holidays and clock changes (all its
  // dates, in the unlikely case that leaves none).
  const samples: [string, DayHours][][] = Array.from({ length: 84 }, () => []);
  const sample = (keep: (day: number, cell: number) => boolean) => {
    for (let day = FIRST; day <= LAST; day++) {
      const cell = monthOf(day) * 7 + weekdayOf(day);
      if (!keep(day, cell)) continue;
      const h = dayHours(at(day - 1), at(day), at(day + 1));
      samples[cell]!.push([keyOf(h), h]);
    }
  };
  sample((day) => !near(holidays, day) && !near(clock, day));
  const empty = new Set(samples.flatMap((s, cell) => (s.length === 0 ? [cell] : [])));
  sample((_, cell) => empty.has(cell));
  const published = samples.map((s) => mostCommon(s)!);
  if (published.some((p) => !p.unanimous)) for (const kind of dated.length > 0 || why.has('years') ? dated : ['other' as const]) why.add(kind);

  const valid: DatexPeriod[] = [];
  for (const [i, p] of published.entries()) {
    if (closed(p.value) || published.findIndex((q) => q.key === p.key) !== i) continue;
    for (const r of rectangles(published.map((q) => q.key === p.key))) {
      valid.push({ days: named(DATEX_DAYS, r.days), months: named(DATEX_MONTHS, r.months), times: timesOf(p.value) });
    }
  }
  let exceptions: DatexPeriod[] = [];
  // No valid period would mean "always": closed every day is an exception for every day.
  const specification = (approximations: string[] = []): DatexHours => ({
    kind: 'specification',
    valid,
    exceptions: valid.length === 0 ? [{ days: [], months: [], times: [] }] : exceptions,
    exact: approximations.length === 0,
    approximations,
  });

  // Public holidays, when their weekday's hours do not already fit them: hours of their own.
  let holidayKey: string | null = null;
  const dates = [...holidays].filter((day) => day >= FIRST && day <= LAST && !clock.has(day));
  if (dates.length > 0 && check(specification(), minutesAt, holidays, clock).some((day) => holidays.has(day))) {
    const common = mostCommon(dates.map((day): [string, Interval[]] => [keyOf(at(day)), at(day)]))!;
    holidayKey = common.key;
    if (!common.unanimous) why.add('holidaysDiffer');
    const own = common.value;
    const rest = intervalsOf(Uint8Array.from({ length: FULL }, (_, m) => (own.some(([s, e]) => m >= s && m < e) ? 0 : 1)));
    if (own.length > 0) valid.push({ days: [], months: [], times: timesOf(isFull(own) ? 'full' : own), publicHoliday: true });
    if (rest.length > 0) exceptions = [{ days: [], months: [], times: timesOf(isFull(rest) ? 'full' : rest), publicHoliday: true }];
  }

  // The check: every date as DATEX says it, against the package.
  for (const day of check(specification(), minutesAt, holidays, clock)) {
    if (holidays.has(day) && keyOf(at(day)) !== holidayKey) continue; // a holiday with other hours: said above
    if (near(holidays, day)) why.add('holidayMidnight');
    else if (![...why].some((k) => dated.includes(k) || k === 'years' || k === 'other')) why.add('other');
  }
  const order = Object.keys(APPROXIMATIONS) as Approximation[];
  return specification(order.filter((k) => why.has(k)).map((k) => APPROXIMATIONS[k]));
}

/** The dates of the span on which `hours` differ from the package, minute by minute. */
function check(hours: DatexHours, minutesAt: (day: number) => Uint8Array, holidays: Set<number>, clock: Set<number>): number[] {
  const out: number[] = [];
  for (let day = FIRST; day <= LAST; day++) {
    if (clock.has(day)) continue;
    const datex = datexOpenMinutes(hours, datexDate(day, holidays), datexDate(day - 1, holidays));
    const actual = minutesAt(day);
    for (let m = 0; m < FULL; m++) {
      if (datex[m] !== actual[m]) {
        out.push(day);
        break;
      }
    }
  }
  return out;
}

/** One date as DATEX sees it. */
export interface DatexDate { day: DatexDay; month: DatexMonth; publicHoliday: boolean }
const datexDate = (day: number, holidays: Set<number>): DatexDate => ({
  day: DATEX_DAYS[weekdayOf(day)]!,
  month: DATEX_MONTHS[monthOf(day)]!,
  publicHoliday: holidays.has(day),
});

const minutes = (time: string) => Number(time.slice(0, 2)) * 60 + Number(time.slice(3, 5));

/** Whether a period applies to a date: its days and months (empty: all), or-ed with public holidays (special day, union). */
function applies(p: DatexPeriod, d: DatexDate): boolean {
  const restricted = p.days.length > 0 || p.months.length > 0;
  const listed = (p.days.length === 0 || p.days.includes(d.day)) && (p.months.length === 0 || p.months.includes(d.month));
  return p.publicHoliday ? d.publicHoliday || (restricted && listed) : listed;
}

function paint(bits: Uint8Array, periods: DatexPeriod[], date: DatexDate, previous: DatexDate): void {
  for (const p of periods) {
    if (applies(p, date)) {
      if (p.times.length === 0) bits.fill(1);
      for (const t of p.times) bits.fill(1, minutes(t.start), minutes(t.end) > minutes(t.start) ? minutes(t.end) : FULL);
    }
    if (applies(p, previous)) for (const t of p.times) if (minutes(t.end) <= minutes(t.start)) bits.fill(1, 0, minutes(t.end));
  }
}

/**
 * Minute by minute (0–1439), whether `hours` say open on `date`, given the date before it (whose periods
 * may run past midnight). DATEX's rule: open in any valid period (none: always), and in no exception period.
 */
export function datexOpenMinutes(hours: DatexHours, date: DatexDate, previous: DatexDate): Uint8Array {
  const open = new Uint8Array(FULL);
  if (hours.kind === 'openAllHours') return open.fill(1);
  if (hours.valid.length === 0) open.fill(1);
  else paint(open, hours.valid, date, previous);
  if (hours.exceptions.length === 0) return open;
  const shut = new Uint8Array(FULL);
  paint(shut, hours.exceptions, date, previous);
  for (let m = 0; m < FULL; m++) if (shut[m]) open[m] = 0;
  return open;
}
