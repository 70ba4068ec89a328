/**
 * The opening_hours package's messages in plain words: what to write instead, with an example of valid
 * syntax. The package words its messages for its own users ("the mode for opening_hours.js has to be
 * altered", "see README", "submit a pull request"); an operator typing a station's hours needs to know
 * what to type. A message this list does not know is passed on as the package wrote it.
 */

const EXAMPLE = '"Mo-Fr 08:00-18:00; Sa 09:00-13:00"';

type Advice = (match: RegExpExecArray) => string;

const ADVICE: [RegExp, Advice][] = [
  // A time without a range ("Mo 10:00", "Mo-Fr 25:00"): the package asks for another "mode".
  [/hyphen \(-\) or open end \(\+\) in time range expected/i, () => `opening times are ranges with a start and an end from 00:00 to 24:00, such as ${EXAMPLE}`],
  [/running in "time range mode"\. Found point in time/i, () => `opening times are ranges such as "08:00-18:00", not points in time or repeating intervals; for example ${EXAMPLE}`],
  [/Time range does not continue as expected/i, () => 'a time range needs both its start and its end, such as "08:00-18:00"'],
  [/Time range starts outside of the current day/i, () => 'a time range starts between 00:00 and 23:59 (it may end after midnight, such as "22:00-02:00")'],
  [
    /Unexpected token: "([^"]*)"/i,
    (m) => `"${m[1]}" is not understood here: write days, then times, such as ${EXAMPLE} (days Mo Tu We Th Fr Sa Su, "24/7" for always open, "off" for closed)`,
  ],
  [/nothing meaningful which can be parsed/i, () => `there are no opening hours to read: write them, such as "24/7" or ${EXAMPLE}`],
  [
    /Country code missing which is needed to select the correct holidays/i,
    () => 'public holidays ("PH") and school holidays ("SH") need the station\'s country: set details.country to its two-letter code (DE for Germany), or leave the holiday rule out',
  ],
  [
    /There are no holidays \((PH|SH)\) defined for country (\w+)/i,
    (m) =>
      `${m[1] === 'SH' ? 'school holidays ("SH")' : 'public holidays ("PH")'} are not known for country ${m[2]!.toUpperCase()}: ` +
      'leave that rule out, or name the dates, such as "Dec 24-26 off"',
  ],
  // Warnings: values the package would have to guess at.
  [/Assuming "([^"]+)" for "([^"]+)"/i, (m) => `write "${m[1]}" instead of "${m[2]}"`],
  [/This rule does not contain anything useful/i, () => 'remove the empty rule (";" separates rules: nothing follows the last one)'],
  [/there is no time selector being used/i, () => `add the opening times to the days, such as ${EXAMPLE}`],
  [/Time range without minutes specified\. Not very explicit! Please use this syntax instead "([^"]+)"/i, (m) => `write the minutes too: "${m[1]}"`],
];

/** Plain advice for one of the package's messages (without its position marker). */
function advise(message: string): string {
  for (const [pattern, advice] of ADVICE) {
    const m = pattern.exec(message);
    if (m) return advice(m);
  }
  return message;
}

/**
 * A message of the package in plain words. Its messages come as `<the value up to the problem> <--- (why)`
 * or as a bare sentence; the position is kept, the why replaced.
 */
export function plainOpeningHoursMessage(text: string): string {
  const marked = /^(.*?) <--- \((.*)\)$/s.exec(text);
  if (marked) return `${marked[1]} <--- (${advise(marked[2]!)})`;
  return advise(text);
}
