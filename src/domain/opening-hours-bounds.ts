/**
 * The bounds within which opening hours are read: a linear first reading of the text, before the
 * `opening_hours` package sees it.
 *
 * The package reads a value token by token, and each token costs it tens of microseconds (it tries
 * every one of its spelling corrections at every token); a word it does not know costs it far more,
 * and grows with the word's length at every one of its letters: `'24/7' + 'x'.repeat(n)` took 0.06 s
 * at 1,000 characters and 3.5 s at 16,000. So before the package is asked, the text is cut into the
 * parts the package would make of it, in one pass, and refused without asking it when it has
 * - more than {@link OPENING_HOURS_MAX_PARTS} parts (a day, a month, a number, a separator, a
 *   keyword, a run of spaces, a comment in double quotes, a word the format does not know), or
 * - more than {@link OPENING_HOURS_MAX_UNKNOWN} words or signs the format does not know (the package
 *   would have to guess at each; the first few are passed on for its advice, such as "write Mo
 *   instead of Montag"), or one such word longer than {@link OPENING_HOURS_MAX_WORD} letters.
 * Within these bounds the package checks any value of up to 1,000 characters in a few milliseconds
 * (test/bench/parsers.bench.ts measures the worst found). Real opening hours use a fraction of them:
 * "Mo-Fr 06:00-22:00; Sa,Su,PH 08:00-20:00; Dec 24 06:00-14:00; Dec 25,26 off" has 48 parts.
 */

/** The most characters opening hours may have (the registry file's and the portal's limit). */
export const OPENING_HOURS_MAX_LENGTH = 1000;
/** The most parts (see above) opening hours may have. */
export const OPENING_HOURS_MAX_PARTS = 150;
/** The most words or signs outside the format's vocabulary that are passed on to the package. */
export const OPENING_HOURS_MAX_UNKNOWN = 3;
/** The longest word outside the format's vocabulary that is passed on to the package. */
export const OPENING_HOURS_MAX_WORD = 20;

/** The format's words (any case): days, months, holidays, variable times, states and the rest. */
const WORDS = new Set([
  'mo', 'tu', 'we', 'th', 'fr', 'sa', 'su',
  'jan', 'feb', 'mar', 'apr', 'may', 'jun', 'jul', 'aug', 'sep', 'oct', 'nov', 'dec',
  'ph', 'sh', 'day', 'days', 'week', 'easter', 'sunrise', 'sunset', 'dawn', 'dusk',
  'open', 'closed', 'off', 'unknown',
]);
/** The format's signs: separators of days, times, rules and ranges, and the brackets of its forms. */
const SIGNS = new Set([',', ';', ':', '-', '+', '/', '[', ']', '(', ')', '|', '.']);

/** What the package reads as a word: anything but white space, digits, punctuation, symbols and controls. */
const WORD = /[^\s\d\p{P}\p{S}\p{C}]+/uy;
const SPACE = /\s+/y;
const DIGITS = /\d+/y;

/** Where a value leaves the bounds: the offset just past the part that did it, and the advice. */
export interface OutOfBounds {
  end: number;
  /** The package's own wording for an unknown part (so its advice applies), or the platform's. */
  reason: string;
}

/** A sticky match of `pattern` at `at`, its length (0 when none). */
function runAt(pattern: RegExp, text: string, at: number): number {
  pattern.lastIndex = at;
  return pattern.test(text) ? pattern.lastIndex - at : 0;
}

/**
 * Where `hours` leave the bounds above, or undefined when they are within them. One pass over the
 * text, each character looked at a bounded number of times.
 */
export function openingHoursOutOfBounds(hours: string): OutOfBounds | undefined {
  if (hours.length > OPENING_HOURS_MAX_LENGTH) return { end: 0, reason: `must be at most ${OPENING_HOURS_MAX_LENGTH} characters` };
  let parts = 0;
  let unknown = 0;
  for (let at = 0; at < hours.length; ) {
    const start = at;
    let known = true;
    const char = hours[at]!;
    const close = char === '"' ? hours.indexOf('"', at + 1) : -1;
    const span = close > 0 ? close + 1 - at : runAt(SPACE, hours, at) || runAt(DIGITS, hours, at) || runAt(WORD, hours, at);
    if (span > 0) {
      at += span;
      const word = hours.slice(start, at);
      if (close < 0 && runAt(WORD, word, 0) === word.length) known = WORDS.has(word.toLowerCase());
      if (!known && word.length > OPENING_HOURS_MAX_WORD) {
        return { end: at, reason: `"${word.slice(0, OPENING_HOURS_MAX_WORD)}…" is not a word of opening hours (${word.length} letters)` };
      }
    } else {
      // One sign (a surrogate pair is one character).
      at += char.codePointAt(0)! > 0xffff ? 2 : 1;
      known = SIGNS.has(char);
    }
    parts += 1;
    if (!known) unknown += 1;
    if (unknown > OPENING_HOURS_MAX_UNKNOWN) return { end: at, reason: `Unexpected token: "${hours.slice(start, at)}"` };
    if (parts > OPENING_HOURS_MAX_PARTS) {
      return { end: at, reason: `opening hours are read up to ${OPENING_HOURS_MAX_PARTS} parts (days, times, numbers, separators, words and comments): write them shorter` };
    }
  }
  return undefined;
}
