import type { Request } from './request.js';

/** HTTP-dates (RFC 9110 5.6.7) and the `If-Modified-Since` precondition (RFC 9110 13.1.3). */

/** An HTTP-date (IMF-fixdate) for whole seconds since the epoch. */
export function httpDate(seconds: number): string {
  return new Date(seconds * 1000).toUTCString();
}

/**
 * The request's `If-Modified-Since` in seconds since the epoch, or undefined when it is to be ignored
 * (RFC 9110 13.1.3): absent, not one valid HTTP-date, beside an `If-None-Match`, or later than the
 * server's current time (a date from the future would keep answering 304 past later changes).
 */
export function ifModifiedSince(req: Pick<Request, 'headers'>, nowMs = Date.now()): number | undefined {
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
