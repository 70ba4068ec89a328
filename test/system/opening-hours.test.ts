/**
 * Opening hours evaluated in the station's time zone: open or closed at an instant and the next
 * change, to the minute, across daylight-saving changes, whatever the process's own TZ; the load-time
 * checks; and the time zone found at a station's coordinates.
 */
import t from 'tap';
import { fileURLToPath } from 'node:url';
import { checkOpeningHours, checkTimeZone, holidayCountry, isOpen, nextChange } from '../../src/domain/opening-hours.js';
import { coordinatesOf } from '../../src/domain/coordinates.js';
import { stationTimeZone, timeZoneAt } from '../../src/registry/time-zone.js';
import { run } from '../helpers/process.js';

const BERLIN = 'Europe/Berlin';
const NEW_YORK = 'America/New_York';
const STUTT = 'Mo-Fr 06:00-22:00; Sa,Su 08:00-20:00';
const HAMPT = 'Mo-Sa 05:00-23:00';

interface Case {
  hours: string | null;
  timeZone: string | null;
  /** The instant, UTC (the station's clock time in the comment beside each case). */
  at: string;
  open: boolean;
  /** The next change, UTC; null: none. */
  next: string | null;
  country?: string;
}

const iso = (d: Date | null) => d?.toISOString().replace('.000Z', 'Z') ?? null;

/** Every case, in every process: what the station's clock says, never the process's. */
const CASES: Record<string, Case[]> = {
  '24/7 is always open and never changes': [
    { hours: '24/7', timeZone: BERLIN, at: '2026-03-02T12:00:00Z', open: true, next: null },
    { hours: '24/7', timeZone: BERLIN, at: '2026-03-29T01:30:00Z', open: true, next: null },
    { hours: '24/7', timeZone: NEW_YORK, at: '2026-11-01T06:30:00Z', open: true, next: null },
    { hours: 'Mo-Su 00:00-24:00', timeZone: BERLIN, at: '2026-10-25T01:30:00Z', open: true, next: null },
  ],
  'weekdays and weekends (Stuttgart Nord), to the minute': [
    // Mon 2 March, 05:59:59 CET: closed; opens at 06:00:00.
    { hours: STUTT, timeZone: BERLIN, at: '2026-03-02T04:59:59Z', open: false, next: '2026-03-02T05:00:00Z' },
    { hours: STUTT, timeZone: BERLIN, at: '2026-03-02T04:59:59.999Z', open: false, next: '2026-03-02T05:00:00Z' },
    // 06:00:00: open until 22:00.
    { hours: STUTT, timeZone: BERLIN, at: '2026-03-02T05:00:00Z', open: true, next: '2026-03-02T21:00:00Z' },
    // 21:59:59 open; 22:00 closed until Tuesday 06:00.
    { hours: STUTT, timeZone: BERLIN, at: '2026-03-02T20:59:59Z', open: true, next: '2026-03-02T21:00:00Z' },
    { hours: STUTT, timeZone: BERLIN, at: '2026-03-02T21:00:00Z', open: false, next: '2026-03-03T05:00:00Z' },
    // Friday 22:00 → Saturday 08:00; Saturday 20:00 → Sunday 08:00; Sunday 20:00 → Monday 06:00.
    { hours: STUTT, timeZone: BERLIN, at: '2026-03-06T21:00:00Z', open: false, next: '2026-03-07T07:00:00Z' },
    { hours: STUTT, timeZone: BERLIN, at: '2026-03-07T19:00:00Z', open: false, next: '2026-03-08T07:00:00Z' },
    { hours: STUTT, timeZone: BERLIN, at: '2026-03-08T19:00:00Z', open: false, next: '2026-03-09T05:00:00Z' },
  ],
  'closed on Sundays (Hamburg Port Truck Stop)': [
    // Sat 7 March 22:59 CET: open until 23:00; then closed through Sunday until Monday 05:00.
    { hours: HAMPT, timeZone: BERLIN, at: '2026-03-07T21:59:00Z', open: true, next: '2026-03-07T22:00:00Z' },
    { hours: HAMPT, timeZone: BERLIN, at: '2026-03-07T22:00:00Z', open: false, next: '2026-03-09T04:00:00Z' },
    { hours: HAMPT, timeZone: BERLIN, at: '2026-03-08T11:00:00Z', open: false, next: '2026-03-09T04:00:00Z' },
  ],
  'off days and dates': [
    // Wednesday off: Tue 3 March 18:00 CET → Thu 08:00.
    { hours: 'Mo-Fr 08:00-18:00; We off', timeZone: BERLIN, at: '2026-03-04T11:00:00Z', open: false, next: '2026-03-05T07:00:00Z' },
    { hours: 'Mo-Fr 08:00-18:00; We off', timeZone: BERLIN, at: '2026-03-03T17:00:00Z', open: false, next: '2026-03-05T07:00:00Z' },
    // Christmas off: Wed 23 December 18:00 CET → Sun 27 December 08:00.
    { hours: 'Mo-Su 08:00-18:00; Dec 24-26 off', timeZone: BERLIN, at: '2026-12-23T17:00:00Z', open: false, next: '2026-12-27T07:00:00Z' },
    { hours: 'off', timeZone: BERLIN, at: '2026-03-02T12:00:00Z', open: false, next: null },
  ],
  'public holidays of the station\'s country': [
    // New Year's Day (Thursday) is closed, Friday 2 January open: from Wed 31 December 18:00 CET to Fri 08:00.
    { hours: 'Mo-Fr 08:00-18:00; PH off', timeZone: BERLIN, country: 'DE', at: '2026-01-01T11:00:00Z', open: false, next: '2026-01-02T07:00:00Z' },
    { hours: 'Mo-Fr 08:00-18:00; PH off', timeZone: BERLIN, country: 'de', at: '2025-12-31T17:00:00Z', open: false, next: '2026-01-02T07:00:00Z' },
    { hours: 'Mo-Fr 08:00-18:00; PH off', timeZone: BERLIN, country: 'DE', at: '2026-01-02T11:00:00Z', open: true, next: '2026-01-02T17:00:00Z' },
    // Thanksgiving (Thu 26 November) in New York: closed at noon EST; open the day before.
    { hours: 'Mo-Fr 08:00-18:00; PH off', timeZone: NEW_YORK, country: 'US', at: '2026-11-26T17:00:00Z', open: false, next: '2026-11-27T13:00:00Z' },
    { hours: 'Mo-Fr 08:00-18:00; PH off', timeZone: NEW_YORK, country: 'US', at: '2026-11-25T17:00:00Z', open: true, next: '2026-11-25T23:00:00Z' },
  ],
  'unknown (a comment, "by appointment") counts as open; only closed closes': [
    // Saturday 09:00 CET closed; 10:00–14:00 by appointment.
    { hours: 'Mo-Fr 08:00-18:00; Sa 10:00-14:00 "by appointment"', timeZone: BERLIN, at: '2026-03-07T08:00:00Z', open: false, next: '2026-03-07T09:00:00Z' },
    { hours: 'Mo-Fr 08:00-18:00; Sa 10:00-14:00 "by appointment"', timeZone: BERLIN, at: '2026-03-07T10:00:00Z', open: true, next: '2026-03-07T13:00:00Z' },
    // Open until 18:00, by appointment until 20:00: the first change that matters is at 20:00.
    { hours: 'Mo-Fr 08:00-18:00, Mo-Fr 18:00-20:00 "by appointment"', timeZone: BERLIN, at: '2026-03-02T11:00:00Z', open: true, next: '2026-03-02T19:00:00Z' },
    { hours: 'Mo-Fr 08:00-18:00, Mo-Fr 18:00-20:00 "by appointment"', timeZone: BERLIN, at: '2026-03-02T18:00:00Z', open: true, next: '2026-03-02T19:00:00Z' },
  ],
  'Europe/Berlin, clocks forward (Sunday 29 March, 02:00 CET → 03:00 CEST)': [
    // Sat 21:00 CET closed; opens Sunday 08:00 CEST, an hour earlier in UTC than the day before.
    { hours: STUTT, timeZone: BERLIN, at: '2026-03-28T20:00:00Z', open: false, next: '2026-03-29T06:00:00Z' },
    { hours: STUTT, timeZone: BERLIN, at: '2026-03-29T10:00:00Z', open: true, next: '2026-03-29T18:00:00Z' },
    // Opening at 02:30, a time that does not occur that night: open from the transition, 03:00 CEST.
    { hours: 'Mo-Su 02:30-23:00', timeZone: BERLIN, at: '2026-03-28T23:30:00Z', open: false, next: '2026-03-29T01:00:00Z' },
    { hours: 'Mo-Su 02:30-23:00', timeZone: BERLIN, at: '2026-03-29T00:59:59.999Z', open: false, next: '2026-03-29T01:00:00Z' },
    { hours: 'Mo-Su 02:30-23:00', timeZone: BERLIN, at: '2026-03-29T01:00:00Z', open: true, next: '2026-03-29T21:00:00Z' },
    // Closed 02:00–03:00 only: the clock skips that hour, so that night it never closes.
    { hours: 'Mo-Su 00:00-02:00,03:00-24:00', timeZone: BERLIN, at: '2026-03-28T23:30:00Z', open: true, next: '2026-03-30T00:00:00Z' },
  ],
  'Europe/Berlin, clocks back (Sunday 25 October, 03:00 CEST → 02:00 CET)': [
    // Sat 22:00 CEST closed; opens Sunday 08:00 CET, an hour later in UTC; closes 20:00 CET.
    { hours: STUTT, timeZone: BERLIN, at: '2026-10-24T20:00:00Z', open: false, next: '2026-10-25T07:00:00Z' },
    { hours: STUTT, timeZone: BERLIN, at: '2026-10-25T11:00:00Z', open: true, next: '2026-10-25T19:00:00Z' },
    // Closing at 02:30, a time that occurs twice: closes at 02:30 CEST, opens again when the clock goes
    // back to 02:00 (CET), closes again at 02:30 CET.
    { hours: 'Mo-Su 22:00-02:30', timeZone: BERLIN, at: '2026-10-25T00:15:00Z', open: true, next: '2026-10-25T00:30:00Z' },
    { hours: 'Mo-Su 22:00-02:30', timeZone: BERLIN, at: '2026-10-25T00:45:00Z', open: false, next: '2026-10-25T01:00:00Z' },
    { hours: 'Mo-Su 22:00-02:30', timeZone: BERLIN, at: '2026-10-25T01:15:00Z', open: true, next: '2026-10-25T01:30:00Z' },
    { hours: 'Mo-Su 22:00-02:30', timeZone: BERLIN, at: '2026-10-25T01:45:00Z', open: false, next: '2026-10-25T21:00:00Z' },
  ],
  'America/New_York, clocks forward (Sunday 8 March) and back (Sunday 1 November)': [
    // Sat 21:00 EST closed → Sunday 08:00 EDT; Sunday 20:00 EDT → Monday 06:00 EDT.
    { hours: STUTT, timeZone: NEW_YORK, at: '2026-03-08T02:00:00Z', open: false, next: '2026-03-08T12:00:00Z' },
    { hours: STUTT, timeZone: NEW_YORK, at: '2026-03-09T00:00:00Z', open: false, next: '2026-03-09T10:00:00Z' },
    // Monday 05:59:59 EDT closed, 06:00:00 open.
    { hours: STUTT, timeZone: NEW_YORK, at: '2026-03-09T09:59:59Z', open: false, next: '2026-03-09T10:00:00Z' },
    { hours: STUTT, timeZone: NEW_YORK, at: '2026-03-09T10:00:00Z', open: true, next: '2026-03-10T02:00:00Z' },
    // Opening at 02:30, skipped that night: open from 03:00 EDT.
    { hours: 'Mo-Su 02:30-23:00', timeZone: NEW_YORK, at: '2026-03-08T06:30:00Z', open: false, next: '2026-03-08T07:00:00Z' },
    // Sat 31 October 22:00 EDT closed → Sunday 08:00 EST.
    { hours: STUTT, timeZone: NEW_YORK, at: '2026-11-01T02:00:00Z', open: false, next: '2026-11-01T13:00:00Z' },
    // Mon 2 November 05:59:59 EST closed, 06:00:00 open.
    { hours: STUTT, timeZone: NEW_YORK, at: '2026-11-02T10:59:59Z', open: false, next: '2026-11-02T11:00:00Z' },
    { hours: STUTT, timeZone: NEW_YORK, at: '2026-11-02T11:00:00Z', open: true, next: '2026-11-03T03:00:00Z' },
  ],
  'no hours, or none that can be evaluated: always open, never a change': [
    { hours: null, timeZone: BERLIN, at: '2026-03-02T03:00:00Z', open: true, next: null },
    { hours: STUTT, timeZone: null, at: '2026-03-02T03:00:00Z', open: true, next: null },
    { hours: STUTT, timeZone: 'Mars/Olympus', at: '2026-03-02T03:00:00Z', open: true, next: null },
    { hours: 'Mo-Fr 25:00-26:00', timeZone: BERLIN, at: '2026-03-02T03:00:00Z', open: true, next: null },
    { hours: '', timeZone: BERLIN, at: '2026-03-02T03:00:00Z', open: true, next: null },
    // PH without a country cannot be evaluated.
    { hours: 'Mo-Fr 08:00-18:00; PH off', timeZone: BERLIN, at: '2026-03-02T03:00:00Z', open: true, next: null },
  ],
};

const ALL = Object.values(CASES).flat();
const evaluate = (c: Case) => ({
  open: isOpen(c.hours, c.timeZone, new Date(c.at), c.country),
  next: iso(nextChange(c.hours, c.timeZone, new Date(c.at), c.country)),
});

for (const [name, cases] of Object.entries(CASES)) {
  t.test(name, async (t) => {
    for (const c of cases) {
      t.same(evaluate(c), { open: c.open, next: c.next }, `${JSON.stringify(c.hours)} in ${c.timeZone} at ${c.at}`);
    }
  });
}

t.test('nextChange agrees with isOpen: the state holds until each change and flips exactly at it', async (t) => {
  const windows: [string, string, string][] = [
    [BERLIN, '2026-03-26T00:00:00Z', '2026-04-02T00:00:00Z'],
    [BERLIN, '2026-10-22T00:00:00Z', '2026-10-29T00:00:00Z'],
    [NEW_YORK, '2026-03-05T00:00:00Z', '2026-03-12T00:00:00Z'],
    [NEW_YORK, '2026-10-29T00:00:00Z', '2026-11-05T00:00:00Z'],
  ];
  const hoursList = [STUTT, HAMPT, 'Mo-Su 22:00-02:30', 'Mo-Su 01:00-02:15,02:45-03:30; Sa off'];
  for (const [zone, from, to] of windows) {
    for (const hours of hoursList) {
      const end = Date.parse(to);
      let at = Date.parse(from);
      let flips = 0;
      let wrong = 0;
      while (at < end) {
        const open = isOpen(hours, zone, new Date(at));
        const next = nextChange(hours, zone, new Date(at))?.getTime() ?? end;
        // Every 5 minutes up to the change, and the last millisecond before it: unchanged.
        for (let probe = at; probe < Math.min(next, end); probe += 300_000) if (isOpen(hours, zone, new Date(probe)) !== open) wrong++;
        if (next < end) {
          if (isOpen(hours, zone, new Date(next - 1)) !== open) wrong++;
          if (isOpen(hours, zone, new Date(next)) === open) wrong++;
          flips++;
        }
        at = next;
      }
      t.equal(wrong, 0, `${hours} in ${zone} from ${from}: ${flips} changes, each exact`);
      t.ok(flips >= 6, `${hours} in ${zone} changes through the week`);
    }
  }
});

t.test('the process\'s own time zone does not matter', async (t) => {
  const probe = fileURLToPath(new URL('../helpers/opening-hours-probe.ts', import.meta.url));
  const expected = ALL.map((c) => ({ open: c.open, next: c.next === null ? null : new Date(c.next).toISOString() }));
  // The process's offset on 2 March 2026 shows the TZ took effect (minutes behind UTC, as getTimezoneOffset).
  const zones: [string, number][] = [['Asia/Tokyo', -540], ['America/New_York', 300], ['Australia/Lord_Howe', -660], ['UTC', 0]];
  for (const [tz, offset] of zones) {
    const { code, stdout, stderr } = await run(process.execPath, ['--import', 'tsx', probe, JSON.stringify(ALL)], { TZ: tz });
    t.equal(code, 0, `runs under TZ=${tz}${stderr ? `: ${stderr}` : ''}`);
    const answer = JSON.parse(stdout) as { offset: number; results: unknown[] };
    t.equal(answer.offset, offset, `TZ=${tz} is the child's zone`);
    t.same(answer.results, expected, `under TZ=${tz} every case answers as the station's clock says`);
  }
  // Read by the process's clock (Tokyo, 13:30) instead, Stuttgart Nord would be open at 05:30 Berlin time.
  t.notOk(isOpen(STUTT, BERLIN, new Date('2026-03-02T04:30:00Z')));
});

t.test('opening hours are checked with the parser\'s reason', async (t) => {
  t.equal(checkOpeningHours(STUTT), undefined);
  t.equal(checkOpeningHours('24/7'), undefined);
  t.equal(checkOpeningHours('Mo-Fr 8-18'), 'Mo-Fr 8-18 <--- (write the minutes too: "08:00-18:00") (it would be read as "Mo-Fr 08:00-18:00"; write it so)', 'a value the parser had to correct is refused, with its reading');
  t.match(checkOpeningHours('weekdays 9 to 5'), /^weekdays <--- \(write "Mo-Fr" instead of "weekdays"\);.*it would be read as "Mo-Fr 09:00-05:00"/, 'an ambiguous one shows the guess it would make');
  t.equal(checkOpeningHours('Mo-Fr 08:00-18:00; PH off', 'DE'), undefined, 'PH with a country');
  t.match(checkOpeningHours('bogus'), /^bo <--- \("b" is not understood here: write days, then times, such as "Mo-Fr 08:00-18:00; Sa 09:00-13:00"/);
  t.match(checkOpeningHours('Mo-Fr 25:00-26:00'), /^Mo-Fr 25:00 <--- \(a time range starts between 00:00 and 23:59/);
  t.match(checkOpeningHours(''), /^there are no opening hours to read: write them, such as "24\/7"/);
  t.match(checkOpeningHours('Mo-Fr 08:00-18:00; PH off'), /^public holidays \("PH"\) and school holidays \("SH"\) need the station's country: set details\.country/, 'PH needs a country');
});

t.test("the parser's own wording is replaced by what to write, with an example that is valid", async (t) => {
  const cases: [string, string | undefined, RegExp][] = [
    ['Mo-Fr 25:00', undefined, /^Mo-Fr 25:00 <--- \(opening times are ranges with a start and an end from 00:00 to 24:00, such as "Mo-Fr 08:00-18:00; Sa 09:00-13:00"\)$/],
    ['Mo 10:00', undefined, /^Mo 10:00 <--- \(opening times are ranges with a start and an end/],
    ['Mo 08:00-18:00/01:00', undefined, /<--- \(opening times are ranges such as "08:00-18:00", not points in time or repeating intervals/],
    ['Mo 08:00-', undefined, /^Mo 08:00- <--- \(a time range needs both its start and its end, such as "08:00-18:00"\)$/],
    ['Mo-Fr 08:00-18:00;', undefined, /<--- \(remove the empty rule \(";" separates rules: nothing follows the last one\)\) \(it would be read as "Mo-Fr 08:00-18:00"; write it so\)$/],
    ['Mo-Fr', undefined, /^Mo-Fr <--- \(add the opening times to the days, such as "Mo-Fr 08:00-18:00; Sa 09:00-13:00"\)/],
    ['08:00-18:00; SH off', 'DE', /^school holidays \("SH"\) are not known for country DE: leave that rule out, or name the dates, such as "Dec 24-26 off"$/],
    ['SH off', undefined, /^public holidays \("PH"\) and school holidays \("SH"\) need the station's country/],
  ];
  const internal = /opening_hours\.js|mode for|pull request|see README|muscle memory|Maybe wrong tag|Unexpected token/i;
  for (const [hours, country, expected] of cases) {
    const reason = checkOpeningHours(hours, country);
    t.match(reason, expected, JSON.stringify(hours));
    t.notMatch(reason, internal, `${JSON.stringify(hours)}: none of the parser's internal wording`);
    // Every example the advice gives is itself valid opening hours.
    for (const [, example] of (reason ?? '').matchAll(/such as "([^"]+)"/g)) {
      t.equal(checkOpeningHours(example!.startsWith('Dec') ? `Mo-Su 08:00-20:00; ${example}` : example!, 'DE'), undefined, `the example "${example}" is valid`);
    }
  }
});

t.test('time zones are checked against the IANA names Intl knows', async (t) => {
  t.equal(checkTimeZone(BERLIN), undefined);
  t.equal(checkTimeZone(NEW_YORK), undefined);
  t.equal(checkTimeZone('UTC'), undefined);
  t.match(checkTimeZone('Mars/Olympus'), /^unknown time zone "Mars\/Olympus"/);
  t.match(checkTimeZone('+01:00'), /must be an IANA time zone name/, 'an offset is no zone');
  t.match(checkTimeZone(''), /must be an IANA time zone name/);
});

t.test('the holiday country comes from details.country', async (t) => {
  t.equal(holidayCountry('DE'), 'de');
  t.equal(holidayCountry('ch'), 'ch');
  t.equal(holidayCountry('Germany'), null);
  t.equal(holidayCountry(49), null);
  t.equal(holidayCountry(undefined), null);
});

t.test('time zones from coordinates', async (t) => {
  t.equal(timeZoneAt(52.3667, 13.5033), 'Europe/Berlin', 'Berlin Airport');
  t.equal(timeZoneAt(47.3856, 8.517), 'Europe/Zurich', 'Zürich');
  t.equal(timeZoneAt(55.65, 12.5333), 'Europe/Copenhagen', 'København, not a zone merged with it');
  t.equal(timeZoneAt(40.7128, -74.006), NEW_YORK);
  t.equal(timeZoneAt(0, -30), 'Etc/GMT+2', 'at sea, the nautical zone');
  t.equal(timeZoneAt(90, 0), undefined, 'at the pole, no one zone');
  t.equal(timeZoneAt(91, 0), undefined);
  t.equal(timeZoneAt(Number.NaN, 0), undefined);

  t.same(coordinatesOf({ lat: 52.3667, lon: 13.5033 }), { lat: 52.3667, lon: 13.5033 });
  t.same(coordinatesOf({ coordinates: { lat: 52.36, lon: 13.5 } }), { lat: 52.36, lon: 13.5 });
  t.same(coordinatesOf({ latitude: '47.3', longitude: '5.9' }), { lat: 47.3, lon: 5.9 });
  t.equal(coordinatesOf({ city: 'Berlin' }), undefined);
  t.equal(coordinatesOf({ lat: 'north', lon: 13 }), undefined);

  t.equal(stationTimeZone('Europe/Zurich', { lat: 52.3667, lon: 13.5033 }), 'Europe/Zurich', 'a named zone wins');
  t.equal(stationTimeZone(null, { coordinates: { lat: 40.7128, lon: -74.006 } }), NEW_YORK);
  t.equal(stationTimeZone(null, { city: 'Berlin' }), null);
});
