import type { Request } from './request.js';

/** HTTP-dates (RFC 9110 5.6.7) and the `If-Modified-Since` precondition (RFC 9110 13.1.3). */

/**
 * An HTTP-date (IMF-fixdate) for whole seconds since the epoch. The last one written is kept: answers
 * in a row mostly carry the same date (a list's `Last-Modified` until something changes, `Date`
 * within one second).
 */
export function httpDate(seconds: number): string {
  if (seconds !== lastDate.seconds) lastDate = { seconds, text: new Date(seconds * 1000).toUTCString() };
  return lastDate.text;
}

let lastDate = { seconds: Number.NaN, text: '' };

/**
 * The request's `If-Modified-Since` in seconds since the epoch, or undefined when it is to be ignored
 * (RFC 9110 13.1.3): absent, not one valid HTTP-date, beside an `If-None-Match`, or later than the
 * server's current time, `nowMs` (a date from the future would keep answering 304 past later changes):
 * the platform's clock, which stamps the dates answered.
 */
export function ifModifiedSince(req: Pick<Request, 'headers'>, nowMs: number): number | undefined {
  const value = req.headers['if-modified-since'];
  if (value === undefined || req.headers['if-none-match'] !== undefined) return undefined;
  const seconds = parseHttpDate(value);
  if (seconds === undefined || seconds > Math.floor(nowMs / 1000)) return undefined;
  return seconds;
}

const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];
const MONTH = MONTHS.join('|');
const IMF_FIXDATE = new RegExp(`^(?:Mon|Tue|Wed|Thu|Fri|Sat|Sun), (\\d\\d) (${MONTH}) (\\d{4}) (\\d\\d):(\\d\\d):(\\d\\d) GMT$`);
const RFC850_DATE = new RegExp(
  `^(?:Monday|Tuesday|Wednesday|Thursday|Friday|Saturday|Sunday), (\\d\\d)-(${MONTH})-(\\d\\d) (\\d\\d):(\\d\\d):(\\d\\d) GMT$`,
);
const ASCTIME_DATE = new RegExp(`^(?:Mon|Tue|Wed|Thu|Fri|Sat|Sun) (${MONTH}) ([ \\d]\\d) (\\d\\d):(\\d\\d):(\\d\\d) (\\d{4})$`);

/**
 * An HTTP-date (RFC 9110 5.6.7: IMF-fixdate, or the obsolete RFC 850 and asctime forms; case-sensitive)
 * in seconds since the epoch; undefined for anything else, impossible dates (30 Feb) included.
 */
export function parseHttpDate(text: string, nowMs = Date.now()): number | undefined {
  const value = text.trim();
  let parts: { day: string; month: string; year: number; time: [string, string, string] };
  let m: RegExpExecArray | null;
  if ((m = IMF_FIXDATE.exec(value))) {
    parts = { day: m[1]!, month: m[2]!, year: Number(m[3]), time: [m[4]!, m[5]!, m[6]!] };
  } else if ((m = RFC850_DATE.exec(value))) {
    // A two-digit year more than 50 years ahead is the most recent past year with those digits.
    const thisYear = new Date(nowMs).getUTCFullYear();
    let year = Math.floor(thisYear / 100) * 100 + Number(m[3]);
    if (year > thisYear + 50) year -= 100;
    parts = { day: m[1]!, month: m[2]!, year, time: [m[4]!, m[5]!, m[6]!] };
  } else if ((m = ASCTIME_DATE.exec(value))) {
    parts = { day: m[2]!, month: m[1]!, year: Number(m[6]), time: [m[3]!, m[4]!, m[5]!] };
  } else {
    return undefined;
  }
  const month = MONTHS.indexOf(parts.month);
  const day = Number(parts.day.trim());
  const [hour, minute, second] = parts.time.map(Number) as [number, number, number];
  if (hour > 23 || minute > 59 || second > 60) return undefined;
  // A leap second (60) counts as the second before it.
  const ms = Date.UTC(parts.year, month, day, hour, minute, Math.min(second, 59));
  const date = new Date(ms);
  if (date.getUTCFullYear() !== parts.year || date.getUTCMonth() !== month || date.getUTCDate() !== day) return undefined;
  return ms / 1000;
}

/* ---- Date-times in query parameters --------------------------------------------------------------- */

/** The instants a date-time query parameter may name: from the Unix epoch to the end of year 9999 (UTC). */
export const INSTANT_MIN_MS = Date.UTC(1970, 0, 1);
export const INSTANT_MAX_MS = Date.UTC(9999, 11, 31, 23, 59, 59, 999);
export const INSTANT_RANGE = '1970-01-01T00:00:00Z to 9999-12-31T23:59:59Z';

const DATE_TIME = /^(\d{4})-(\d\d)-(\d\d)[Tt](\d\d):(\d\d)(?::(\d\d)(?:\.(\d{1,9}))?)?(?:([Zz])|([+-])(\d\d):(\d\d))$/;
const MONTH_NAMES = ['January', 'February', 'March', 'April', 'May', 'June', 'July', 'August', 'September', 'October', 'November', 'December'];

export type InstantResult = { ok: true; ms: number } | { ok: false; problem: string };

/**
 * A date-time as query parameters take it: RFC 3339 (ISO 8601's extended form) with a time zone
 * offset or `Z`, seconds and a fraction (up to nine digits, kept to the millisecond) optional. Refused,
 * with the reason: any other form, a day the month does not have (30 February, 29 February outside
 * leap years), month 00 or 13, hour 24 or more, minute or second 60 or more (a leap second included),
 * an offset beyond ±23:59, and an instant outside 1970-01-01T00:00:00Z to 9999-12-31T23:59:59Z.
 * A `+` of an offset that reached the server as a space (not percent-encoded) is read as `+`.
 */
export function parseInstant(input: string): InstantResult {
  // "…T08:00:00 01:00": the client sent "+01:00" unencoded and the query decoding made it a space.
  const text = input.replace(/ (\d\d:\d\d)$/, '+$1');
  const m = DATE_TIME.exec(text);
  if (!m) return { ok: false, problem: 'must be an ISO 8601 date-time with an offset, e.g. 2026-11-24T08:00:00Z' };
  const [year, month, day, hour, minute] = [m[1], m[2], m[3], m[4], m[5]].map(Number) as [number, number, number, number, number];
  const second = m[6] === undefined ? 0 : Number(m[6]);
  const ms = m[7] === undefined ? 0 : Number(m[7].padEnd(3, '0').slice(0, 3));
  if (month < 1 || month > 12) return { ok: false, problem: `${m[1]}-${m[2]}: there is no month ${m[2]} (01 to 12)` };
  const days = new Date(Date.UTC(2000, month, 0)).getUTCDate() - (month === 2 && !isLeapYear(year) ? 1 : 0);
  if (day < 1 || day > days) return { ok: false, problem: `${m[1]}-${m[2]}-${m[3]} is not a date (${MONTH_NAMES[month - 1]} ${m[1]} has ${days} days)` };
  if (hour > 23) return { ok: false, problem: `hour ${m[4]} is not a time of day (00 to 23; midnight is 00:00 of the next day)` };
  if (minute > 59) return { ok: false, problem: `minute ${m[5]} is out of range (00 to 59)` };
  if (second > 59) return { ok: false, problem: `second ${m[6]} is out of range (00 to 59)` };
  let offsetMinutes = 0;
  if (m[8] === undefined) {
    const [oh, om] = [Number(m[10]), Number(m[11])];
    if (oh > 23 || om > 59) return { ok: false, problem: `offset ${m[9]}${m[10]}:${m[11]} is out of range (-23:59 to +23:59)` };
    offsetMinutes = (m[9] === '-' ? -1 : 1) * (oh * 60 + om);
  }
  // Date.UTC reads years 0 to 99 as 1900 to 1999: set the year apart.
  const local = new Date(Date.UTC(2000, month - 1, day, hour, minute, second, ms));
  local.setUTCFullYear(year, month - 1, day);
  const at = local.getTime() - offsetMinutes * 60_000;
  if (!(at >= INSTANT_MIN_MS && at <= INSTANT_MAX_MS)) return { ok: false, problem: `out of range: accepted from ${INSTANT_RANGE}` };
  return { ok: true, ms: at };
}

function isLeapYear(year: number): boolean {
  return (year % 4 === 0 && year % 100 !== 0) || year % 400 === 0;
}
