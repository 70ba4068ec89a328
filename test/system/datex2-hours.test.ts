/**
 * Opening hours (OSM `opening_hours`) as DATEX II 3.7 operating hours: real-world values converted to
 * exactly the expected periods, exact ones agreeing with the package minute by minute (beyond the span
 * the conversion samples, and for generated weekly schedules), approximations saying so, whatever the
 * process's own TZ, and every rendering valid against the DATEX II 3.7 schema.
 */
import t from 'tap';
import fc from 'fast-check';
import { isOpen } from '../../src/domain/opening-hours.js';
import {
  APPROXIMATIONS as A,
  DATEX_DAYS,
  DATEX_MONTHS,
  datexHours,
  datexOpenMinutes,
  type DatexDate,
  type DatexDay,
  type DatexHours,
  type DatexMonth,
  type DatexPeriod,
  type DatexTimeOfDay,
} from '../../src/domain/datex2/operating-hours.js';
import { appendOperatingHours } from '../../src/api/datex2/xml/operating-hours.js';
import { el, payloadDocument } from '../../src/api/datex2/xml/writer.js';
import { datex2Errors } from '../helpers/datex2.js';
import { run } from '../helpers/process.js';

const WEEKDAYS: DatexDay[] = ['monday', 'tuesday', 'wednesday', 'thursday', 'friday'];
const time = (start: string, end: string): DatexTimeOfDay => ({ start: `${start}:00`, end: `${end}:00` });
const period = (days: DatexDay[], times: DatexTimeOfDay[], months: DatexMonth[] = []): DatexPeriod => ({ days, months, times });
const holiday = (...times: DatexTimeOfDay[]): DatexPeriod => ({ days: [], months: [], times, publicHoliday: true });
const spec = (valid: DatexPeriod[], exceptions: DatexPeriod[] = [], ...approximations: string[]): DatexHours => ({
  kind: 'specification',
  valid,
  exceptions,
  exact: approximations.length === 0,
  approximations,
});
const OPEN: DatexHours = { kind: 'openAllHours' };
const EVERY_DAY = period([], []);
const WINTER: DatexMonth[] = ['january', 'february', 'march', 'october', 'november', 'december'];
const SUMMER: DatexMonth[] = ['april', 'may', 'june', 'july', 'august', 'september'];

interface Case {
  hours: string;
  country?: string;
  expected: DatexHours;
}

const CASES: Record<string, Case> = {
  'always open': { hours: '24/7', expected: OPEN },
  'always open, written as hours': { hours: 'Mo-Su 00:00-24:00', expected: OPEN },
  'only a comment: unknown counts as open': { hours: '"call the operator"', expected: OPEN },
  'weekdays and weekends (Stuttgart Nord)': {
    hours: 'Mo-Fr 06:00-22:00; Sa,Su 08:00-20:00',
    expected: spec([period(WEEKDAYS, [time('06:00', '22:00')]), period(['saturday', 'sunday'], [time('08:00', '20:00')])]),
  },
  'closed on Sundays': {
    hours: 'Mo-Fr 06:00-22:00; Sa 08:00-20:00',
    expected: spec([period(WEEKDAYS, [time('06:00', '22:00')]), period(['saturday'], [time('08:00', '20:00')])]),
  },
  'Monday to Saturday (Hamburg Port)': {
    hours: 'Mo-Sa 05:00-23:00',
    country: 'DE',
    expected: spec([period([...WEEKDAYS, 'saturday'], [time('05:00', '23:00')])]),
  },
  'lunch break': {
    hours: 'Mo-Fr 08:00-12:00,13:00-18:00',
    expected: spec([period(WEEKDAYS, [time('08:00', '12:00'), time('13:00', '18:00')])]),
  },
  'weekend nights past midnight: one period each, Sunday morning not repeated': {
    hours: 'Fr-Sa 22:00-03:00',
    expected: spec([period(['friday', 'saturday'], [time('22:00', '03:00')])]),
  },
  'every night': { hours: 'Mo-Su 22:00-06:00', expected: spec([period([], [time('22:00', '06:00')])]) },
  'until midnight before a day open all day: ends at 00:00, never 24:00': {
    hours: 'Mo 10:00-24:00; Tu 00:00-24:00',
    expected: spec([period(['monday'], [time('10:00', '00:00')]), period(['tuesday'], [])]),
  },
  'weekdays open all day': { hours: 'Mo-Fr 00:00-24:00', expected: spec([period(WEEKDAYS, [])]) },
  'summer and winter hours': {
    hours: 'Apr-Sep Mo-Su 06:00-22:00; Oct-Mar Mo-Su 08:00-18:00',
    expected: spec([period([], [time('08:00', '18:00')], WINTER), period([], [time('06:00', '22:00')], SUMMER)]),
  },
  'summer and winter hours, Saturdays in summer only': {
    hours: 'Apr-Sep Mo-Fr 06:00-22:00; Apr-Sep Sa 08:00-20:00; Oct-Mar Mo-Fr 08:00-18:00',
    expected: spec([
      period(WEEKDAYS, [time('08:00', '18:00')], WINTER),
      period(WEEKDAYS, [time('06:00', '22:00')], SUMMER),
      period(['saturday'], [time('08:00', '20:00')], SUMMER),
    ]),
  },
  'closed on public holidays': {
    hours: 'Mo-Fr 08:00-18:00; PH off',
    country: 'de',
    expected: spec([period(WEEKDAYS, [time('08:00', '18:00')])], [holiday()]),
  },
  'public holidays with hours of their own: closed at every other time of the holiday': {
    hours: 'Mo-Fr 08:00-18:00; PH 10:00-14:00',
    country: 'DE',
    expected: spec([period(WEEKDAYS, [time('08:00', '18:00')]), holiday(time('10:00', '14:00'))], [holiday(time('00:00', '10:00'), time('14:00', '00:00'))]),
  },
  'open on public holidays only': {
    hours: 'PH 10:00-12:00',
    country: 'at',
    expected: spec([holiday(time('10:00', '12:00'))], [holiday(time('00:00', '10:00'), time('12:00', '00:00'))]),
  },
  'always open but on public holidays': { hours: '24/7; PH off', country: 'de', expected: spec([EVERY_DAY], [holiday()]) },
  'every night but public holidays': {
    hours: 'Mo-Su 22:00-02:00; PH off',
    country: 'de',
    expected: spec([period([], [time('22:00', '02:00')])], [holiday()]),
  },
  'comment on some hours: still open': {
    hours: 'Mo-Fr 08:00-18:00; Sa 10:00-14:00 "by appointment"',
    expected: spec([period(WEEKDAYS, [time('08:00', '18:00')]), period(['saturday'], [time('10:00', '14:00')])]),
  },
  'closed (off)': { hours: 'off', expected: spec([], [EVERY_DAY]) },
  'Christmas off: the usual hours, approximate': {
    hours: 'Mo-Su 08:00-18:00; Dec 24-26 off',
    expected: spec([period([], [time('08:00', '18:00')])], [], A.dates),
  },
  'weeks 1 to 10: January and February, most Mondays to Fridays of March being outside': {
    hours: 'week 1-10 Mo-Fr 08:00-18:00',
    expected: spec([period(WEEKDAYS, [time('08:00', '18:00')], ['january', 'february'])], [], A.weeks),
  },
  'first Monday of the month off': {
    hours: 'Mo-Fr 08:00-18:00; Mo[1] off',
    expected: spec([period(WEEKDAYS, [time('08:00', '18:00')])], [], A.nth),
  },
  'Easter Sunday off': { hours: 'Mo-Su 08:00-18:00; easter off', expected: spec([period([], [time('08:00', '18:00')])], [], A.easter) },
  'school holidays (Austria\'s nationwide ones) off': {
    hours: 'Mo-Fr 08:00-18:00; SH off',
    country: 'at',
    expected: spec([period(WEEKDAYS, [time('08:00', '18:00')])], [], A.schoolHolidays),
  },
  'years': { hours: '2020-2040 Mo-Fr 08:00-18:00', expected: spec([period(WEEKDAYS, [time('08:00', '18:00')])], [], A.years) },
  'sunrise to sunset: the package\'s fixed times': {
    hours: 'sunrise-sunset',
    expected: spec([period([], [time('06:00', '18:00')])], [], A.variableTimes),
  },
  'public holidays that differ (Christmas Day off)': {
    hours: 'Mo-Fr 08:00-18:00; PH 10:00-14:00; Dec 25 off',
    country: 'de',
    expected: spec(
      [period(WEEKDAYS, [time('08:00', '18:00')]), holiday(time('10:00', '14:00'))],
      [holiday(time('00:00', '10:00'), time('14:00', '00:00'))],
      A.holidaysDiffer,
    ),
  },
  'holiday hours past midnight (and one holiday after another)': {
    hours: 'Mo-Su 08:00-18:00; PH 20:00-02:00',
    country: 'de',
    expected: spec([period([], [time('08:00', '18:00')]), holiday(time('20:00', '00:00'))], [holiday(time('00:00', '20:00'))], A.holidaysDiffer, A.holidayMidnight),
  },
};

t.test('real-world hours convert to exactly these DATEX hours', async (t) => {
  for (const [name, c] of Object.entries(CASES)) t.same(datexHours(c.hours, c.country), c.expected, `${name}: ${c.hours}`);
});

t.test('no hours, or none that can be evaluated: nothing to publish', async (t) => {
  for (const [hours, country] of [[null, 'de'], [undefined, null], ['', null], ['  ', 'de'], ['bogus', null], ['Mo-Fr 25:00-26:00', null]] as const) {
    t.equal(datexHours(hours, country), null, JSON.stringify(hours));
  }
  t.equal(datexHours('Mo-Fr 08:00-18:00; PH off', null), null, 'PH without a country');
  t.equal(datexHours('Mo-Fr 08:00-18:00; PH off', 'Germany'), null, 'PH with a country that is not two letters');
  t.equal(datexHours('Mo-Fr 08:00-18:00; SH off', 'de'), null, 'school holidays of a country where they differ by region');
});

t.test('results are cached, and each caller gets its own copy', async (t) => {
  const first = datexHours('Mo-Fr 06:00-22:00; Sa 08:00-20:00', 'de')!;
  if (first.kind === 'specification') first.valid.length = 0;
  t.same(datexHours('Mo-Fr 06:00-22:00; Sa 08:00-20:00', 'de'), CASES['closed on Sundays']!.expected);
});

const DAY_MS = 86_400_000;
const dateOf = (day: number, holidays: Set<number>): DatexDate => {
  const d = new Date(day * DAY_MS);
  return { day: DATEX_DAYS[(d.getUTCDay() + 6) % 7]!, month: DATEX_MONTHS[d.getUTCMonth()]!, publicHoliday: holidays.has(day) };
};

t.test('exact conversions agree with the package every half hour of 2029, beyond the span sampled', async (t) => {
  const first = Date.UTC(2029, 0, 1) / DAY_MS;
  const last = Date.UTC(2029, 11, 31) / DAY_MS;
  const holidaysOf = (country: string) => {
    const set = new Set<number>();
    for (let day = first - 1; day <= last; day++) if (isOpen('PH', 'UTC', new Date(day * DAY_MS + DAY_MS / 2), country)) set.add(day);
    return set;
  };
  for (const [name, c] of Object.entries(CASES)) {
    const hours = datexHours(c.hours, c.country);
    if (hours === null || (hours.kind === 'specification' && !hours.exact)) continue;
    const holidays = c.country && /PH/.test(c.hours) ? holidaysOf(c.country) : new Set<number>();
    const wrong: string[] = [];
    for (let day = first; day <= last; day++) {
      const minutes = datexOpenMinutes(hours, dateOf(day, holidays), dateOf(day - 1, holidays));
      for (let m = 0; m < 1440; m += 30) {
        const at = new Date(day * DAY_MS + m * 60_000);
        if ((minutes[m] === 1) !== isOpen(c.hours, 'UTC', at, c.country)) wrong.push(at.toISOString());
      }
    }
    t.same(wrong.slice(0, 5), [], `${name}: ${c.hours}`);
  }
});

/** A weekday's hours: closed, the whole day, or one or two intervals on quarter hours, the last maybe past midnight. */
type DaySpec = { kind: 'closed' } | { kind: 'full' } | { kind: 'intervals'; bounds: number[]; overnightEnd: number | null };
const quarter = (q: number) => `${String(Math.floor(q / 4)).padStart(2, '0')}:${String((q % 4) * 15).padStart(2, '0')}`;
const OSM_DAYS = ['Mo', 'Tu', 'We', 'Th', 'Fr', 'Sa', 'Su'];

function osmText(week: DaySpec[]): string {
  return week
    .map((d, i) => {
      if (d.kind === 'closed') return `${OSM_DAYS[i]} off`;
      if (d.kind === 'full') return `${OSM_DAYS[i]} 00:00-24:00`;
      const ranges: string[] = [];
      for (let k = 0; k < d.bounds.length; k += 2) {
        const [start, end] = [d.bounds[k]!, d.bounds[k + 1]!];
        const last = k + 2 === d.bounds.length;
        // Past midnight: ends the next day, before it started (and after 00:00).
        const overnight = last && d.overnightEnd !== null && start > 1 ? 1 + (d.overnightEnd % (start - 1)) : null;
        ranges.push(`${quarter(start)}-${quarter(overnight ?? end)}`);
      }
      return `${OSM_DAYS[i]} ${ranges.join(',')}`;
    })
    .join('; ');
}

const daySpec: fc.Arbitrary<DaySpec> = fc.oneof(
  fc.constant<DaySpec>({ kind: 'closed' }),
  fc.constant<DaySpec>({ kind: 'full' }),
  fc
    .record({
      count: fc.constantFrom(2, 4),
      bounds: fc.uniqueArray(fc.integer({ min: 0, max: 96 }), { minLength: 4, maxLength: 4 }),
      overnightEnd: fc.option(fc.nat({ max: 95 }), { freq: 2 }),
    })
    .map(({ count, bounds, overnightEnd }): DaySpec => ({ kind: 'intervals', bounds: bounds.slice(0, count).sort((a, b) => a - b), overnightEnd })),
);

t.test('property: a weekly schedule converts exactly, every quarter hour of the week as the package says', async (t) => {
  let runs = 0;
  fc.assert(
    fc.property(fc.array(daySpec, { minLength: 7, maxLength: 7 }), (week) => {
      const osm = osmText(week);
      const hours = datexHours(osm, null);
      if (hours === null) throw new Error(`${osm}: not converted`);
      if (hours.kind === 'specification' && !hours.exact) throw new Error(`${osm}: approximate: ${hours.approximations.join(' ')}`);
      // A week of January and one of July (Mondays 11 January and 12 July 2027).
      for (const monday of [Date.UTC(2027, 0, 11) / DAY_MS, Date.UTC(2027, 6, 12) / DAY_MS]) {
        for (let day = monday; day < monday + 7; day++) {
          const minutes = datexOpenMinutes(hours, dateOf(day, new Set()), dateOf(day - 1, new Set()));
          for (let m = 0; m < 1440; m += 15) {
            const at = new Date(day * DAY_MS + m * 60_000);
            if ((minutes[m] === 1) !== isOpen(osm, 'UTC', at)) throw new Error(`${osm}: ${JSON.stringify(hours)} wrong at ${at.toISOString()}`);
          }
        }
      }
      runs++;
    }),
    { numRuns: 120 },
  );
  t.equal(runs, 120, '120 weekly schedules, each exact');
});

const SINCE = '2027-01-01T00:00:00Z';

/** A minimal EnergyInfrastructureTablePublication with one site per given hours. */
function documentWith(sites: { hours: DatexHours; osm: string }[]): string {
  const { root, write } = payloadDocument('aegi:EnergyInfrastructureTablePublication');
  root.att('lang', 'en').att('modelBaseVersion', '3');
  el(root, 'com', 'publicationTime', SINCE);
  const creator = el(root, 'com', 'publicationCreator');
  el(creator, 'com', 'country', 'de');
  el(creator, 'com', 'nationalIdentifier', 'hrs-test');
  const table = el(root, 'aegi', 'energyInfrastructureTable').att('id', 'table').att('version', '1');
  sites.forEach((s, i) => {
    const site = el(table, 'aegi', 'energyInfrastructureSite').att('id', `site-${i}`).att('version', '1');
    appendOperatingHours(site, s.hours, { id: `site-${i}-H`, version: '1', since: SINCE, osm: s.osm });
  });
  return write();
}

t.test('every case renders as schema-valid DATEX II 3.7', async (t) => {
  // One site per case in one document (a validation takes about a second); each case alone when it fails.
  const sites = Object.entries(CASES).map(([name, c]) => ({ name, hours: datexHours(c.hours, c.country)!, osm: c.hours }));
  const errors = await datex2Errors(documentWith(sites));
  t.same(errors, [], `${sites.length} sites, one per case`);
  if (errors.length > 0) for (const s of sites) t.same(await datex2Errors(documentWith([s])), [], `${s.name}: ${s.osm}`);
  // The validator does reject: a period of day without its end.
  const broken = documentWith([{ hours: CASES['lunch break']!.expected, osm: 'x' }]).replace(/<com:endTimeOfPeriod>[^<]*<\/com:endTimeOfPeriod>/, '');
  t.not((await datex2Errors(broken)).length, 0, 'a broken document is refused');
});

t.test('the rendering: types, element order, namespaces, label', async (t) => {
  const flat = (xml: string) => xml.replace(/>\s+</g, '><');
  t.match(flat(documentWith([{ hours: OPEN, osm: '24/7' }])), '<afac:operatingHours xsi:type="afac:OpenAllHours"/>');
  const c = CASES['public holidays with hours of their own: closed at every other time of the holiday']!;
  const xml = flat(documentWith([{ hours: c.expected, osm: c.hours }]));
  t.match(xml, '<afac:operatingHours xsi:type="afac:OperatingHoursSpecification" id="site-0-H" version="1">' +
    '<afac:label>Mo-Fr 08:00-18:00; PH 10:00-14:00</afac:label><afac:operatingAllYear>true</afac:operatingAllYear>' +
    `<afac:overallPeriod><com:overallStartTime>${SINCE}</com:overallStartTime><com:validPeriod><com:recurringTimePeriodOfDay>` +
    '<com:startTimeOfPeriod>08:00:00</com:startTimeOfPeriod><com:endTimeOfPeriod>18:00:00</com:endTimeOfPeriod></com:recurringTimePeriodOfDay>' +
    '<com:recurringDayWeekMonthPeriod><com:applicableDay>monday</com:applicableDay>');
  t.match(xml, '<com:exceptionPeriod><com:recurringTimePeriodOfDay><com:startTimeOfPeriod>00:00:00</com:startTimeOfPeriod>' +
    '<com:endTimeOfPeriod>10:00:00</com:endTimeOfPeriod></com:recurringTimePeriodOfDay><com:recurringTimePeriodOfDay>' +
    '<com:startTimeOfPeriod>14:00:00</com:startTimeOfPeriod><com:endTimeOfPeriod>00:00:00</com:endTimeOfPeriod></com:recurringTimePeriodOfDay>' +
    '<com:recurringSpecialDay><com:intersectWithApplicableDays>false</com:intersectWithApplicableDays>' +
    '<com:specialDayType>publicHoliday</com:specialDayType></com:recurringSpecialDay></com:exceptionPeriod></afac:overallPeriod></afac:operatingHours>');
  const seasons = flat(documentWith([{ hours: CASES['summer and winter hours']!.expected, osm: 'x' }]));
  t.match(seasons, '<afac:operatingAllYear>false</afac:operatingAllYear>');
  t.match(seasons, '<com:recurringDayWeekMonthPeriod><com:applicableMonth>january</com:applicableMonth>');
  t.notMatch(flat(documentWith([{ hours: CASES['every night']!.expected, osm: 'x' }])), 'recurringDayWeekMonthPeriod', 'every day, every month: no element');
  t.notMatch(xml + seasons, '24:00:00');

  // A long value (comments may be long, up to the 1,000 characters hours may have): the label keeps it
  // whole (DATEX II takes 1,024), and stays valid.
  const long = `Mo-Fr 08:00-18:00 "${'é'.repeat(1000 - 20)}"`;
  const hours = datexHours(long, null)!;
  const doc = documentWith([{ hours, osm: long }]);
  t.equal(/<afac:label>([^<]*)<\/afac:label>/.exec(doc)?.[1]?.replaceAll('&quot;', '"'), long);
  t.same(await datex2Errors(doc), []);
});

t.test('the process\'s own time zone does not matter', async (t) => {
  const expected = Object.values(CASES).map((c) => datexHours(c.hours, c.country));
  const inputs = JSON.stringify(Object.values(CASES).map((c) => [c.hours, c.country ?? null]));
  const script = `import { datexHours } from './src/domain/datex2/operating-hours.ts';
    const cases = JSON.parse(process.argv[1]);
    process.stdout.write(JSON.stringify({ offset: new Date(2027, 6, 1).getTimezoneOffset(), results: cases.map(([h, c]) => datexHours(h, c)) }));`;
  // Zones whose clocks change (Lord Howe by half an hour) and one ahead of UTC all year.
  for (const [tz, offset] of [['Europe/Berlin', -120], ['America/New_York', 240], ['Australia/Lord_Howe', -630], ['Asia/Tokyo', -540]] as const) {
    const { code, stdout } = await run(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script, inputs], { TZ: tz });
    t.equal(code, 0, `runs under TZ=${tz}`);
    const answer = JSON.parse(stdout) as { offset: number; results: unknown[] };
    t.equal(answer.offset, offset, `TZ=${tz} is the child's zone`);
    t.same(answer.results, expected, `under TZ=${tz} every case converts the same`);
  }
});
