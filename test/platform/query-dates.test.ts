import fc from 'fast-check';
import t from 'tap';
import { INSTANT_MAX_MS, INSTANT_MIN_MS, parseInstant } from '../../src/http/dates.js';
import { baseFixture, berlaAssignments, TOKENS } from '../helpers/fixtures.js';
import { ADMIN_TOKEN, get, startTestPlatform } from '../helpers/platform.js';
import { runs } from '../helpers/scale.js';
import { holds } from '../helpers/property.js';

/**
 * Date-times in query parameters (src/http/dates.ts parseInstant): impossible dates and times, and
 * instants out of the accepted range (1970 to 9999, UTC), are refused with the reason; over HTTP every
 * route that takes one answers a 400 in its family's error format naming the parameter.
 */

/** Days from 1970-01-01 to a proleptic Gregorian date (H. Hinnant's days_from_civil): the reference. */
function daysFromCivil(y: number, m: number, d: number): number {
  y -= m <= 2 ? 1 : 0;
  const era = Math.floor(y / 400);
  const yoe = y - era * 400;
  const doy = Math.floor((153 * (m + (m > 2 ? -3 : 9)) + 2) / 5) + d - 1;
  const doe = yoe * 365 + Math.floor(yoe / 4) - Math.floor(yoe / 100) + doy;
  return era * 146097 + doe - 719468;
}

/** A date exists when it survives a round trip through the day count. */
function exists(y: number, m: number, d: number): boolean {
  if (m < 1 || m > 12 || d < 1) return false;
  const next = m === 12 ? daysFromCivil(y + 1, 1, 1) : daysFromCivil(y, m + 1, 1);
  return d <= next - daysFromCivil(y, m, 1);
}

const pad = (n: number, width = 2) => String(n).padStart(width, '0');

t.test('table: what is accepted and what is refused, with the reason', async (t) => {
  const ok: [string, string][] = [
    ['2026-11-24T08:00:00Z', '2026-11-24T08:00:00.000Z'],
    ['2026-11-24T08:00Z', '2026-11-24T08:00:00.000Z'],
    ['2026-11-24T08:00:00.123456789Z', '2026-11-24T08:00:00.123Z'],
    ['2026-11-24t08:00:00z', '2026-11-24T08:00:00.000Z'],
    ['2028-02-29T12:00:00Z', '2028-02-29T12:00:00.000Z'],
    ['2000-02-29T00:00:00Z', '2000-02-29T00:00:00.000Z'],
    ['2026-11-24T09:00:00+01:00', '2026-11-24T08:00:00.000Z'],
    ['2026-11-24T09:00:00 01:00', '2026-11-24T08:00:00.000Z'],
    ['2026-11-24T00:00:00-23:59', '2026-11-24T23:59:00.000Z'],
    ['2026-11-24T23:59:59+23:59', '2026-11-24T00:00:59.000Z'],
    ['1970-01-01T00:00:00Z', '1970-01-01T00:00:00.000Z'],
    ['1970-01-01T01:00:00+01:00', '1970-01-01T00:00:00.000Z'],
    ['9999-12-31T23:59:59.999Z', '9999-12-31T23:59:59.999Z'],
  ];
  for (const [text, iso] of ok) {
    const r = parseInstant(text);
    t.ok(r.ok, text);
    if (r.ok) t.equal(new Date(r.ms).toISOString(), iso, text);
  }
  const refused: [string, RegExp][] = [
    ['0000-01-01T00:00:00Z', /out of range: accepted from 1970-01-01T00:00:00Z to 9999-12-31T23:59:59Z/],
    ['1969-12-31T23:59:59.999Z', /out of range/],
    ['1970-01-01T00:30:00+01:00', /out of range/],
    ['9999-12-31T23:00:00-02:00', /out of range/],
    ['2026-02-30T00:00:00Z', /2026-02-30 is not a date \(February 2026 has 28 days\)/],
    ['2026-02-29T00:00:00Z', /February 2026 has 28 days/],
    ['1900-02-29T00:00:00Z', /February 1900 has 28 days/],
    ['2026-04-31T00:00:00Z', /April 2026 has 30 days/],
    ['2026-01-00T00:00:00Z', /is not a date/],
    ['2026-13-01T00:00:00Z', /there is no month 13/],
    ['2026-00-10T00:00:00Z', /there is no month 00/],
    ['2026-11-24T24:00:00Z', /hour 24 is not a time of day/],
    ['2026-11-24T23:60:00Z', /minute 60/],
    ['2026-12-31T23:59:60Z', /second 60/],
    ['2026-11-24T08:00:00+24:00', /offset \+24:00 is out of range/],
    ['2026-11-24T08:00:00-05:60', /offset -05:60/],
    ['2026-11-24T08:00:00', /with an offset/],
    ['2026-11-24', /with an offset/],
    ['+02026-11-24T08:00:00Z', /with an offset/],
    ['12026-11-24T08:00:00Z', /with an offset/],
    ['2026-11-24T08:00:00.1234567890Z', /with an offset/],
    ['2026-11-24T08:00:00+0100', /with an offset/],
    ['2026-11-24 08:00:00Z', /with an offset/],
    ['yesterday', /with an offset/],
    ['', /with an offset/],
    ['１２３４-11-24T08:00:00Z', /with an offset/],
  ];
  for (const [text, problem] of refused) {
    const r = parseInstant(text);
    t.notOk(r.ok, `${text} is refused`);
    if (!r.ok) t.match(r.problem, problem, text);
  }
});

t.test('property: accepted exactly when the calendar has the date and the instant is in range, at the reference instant', async (t) => {
  const components = fc.record({
    year: fc.oneof(fc.integer({ min: 0, max: 9999 }), fc.integer({ min: 1968, max: 2100 })),
    month: fc.integer({ min: 0, max: 14 }),
    day: fc.oneof(fc.integer({ min: 0, max: 32 }), fc.integer({ min: 28, max: 31 })),
    hour: fc.integer({ min: 0, max: 25 }),
    minute: fc.integer({ min: 0, max: 61 }),
    second: fc.option(fc.integer({ min: 0, max: 61 }), { nil: undefined }),
    fraction: fc.option(fc.stringMatching(/^\d{1,9}$/), { nil: undefined }),
    offset: fc.option(fc.record({ sign: fc.constantFrom('+', '-'), hours: fc.integer({ min: 0, max: 25 }), minutes: fc.integer({ min: 0, max: 61 }) }), { nil: undefined }),
  });
  await holds(
    t,
    fc.property(components, (c) => {
      const time = `${pad(c.hour)}:${pad(c.minute)}${c.second === undefined ? '' : `:${pad(c.second)}${c.fraction === undefined ? '' : `.${c.fraction}`}`}`;
      const zone = c.offset === undefined ? 'Z' : `${c.offset.sign}${pad(c.offset.hours)}:${pad(c.offset.minutes)}`;
      const text = `${pad(c.year, 4)}-${pad(c.month)}-${pad(c.day)}T${time}${zone}`;
      const valid =
        exists(c.year, c.month, c.day) &&
        c.hour <= 23 &&
        c.minute <= 59 &&
        (c.second ?? 0) <= 59 &&
        (c.offset === undefined || (c.offset.hours <= 23 && c.offset.minutes <= 59));
      const fractionMs = c.second === undefined || c.fraction === undefined ? 0 : Number(c.fraction.padEnd(3, '0').slice(0, 3));
      const offsetMs = c.offset === undefined ? 0 : (c.offset.sign === '-' ? -1 : 1) * (c.offset.hours * 60 + c.offset.minutes) * 60_000;
      const expected = valid
        ? daysFromCivil(c.year, c.month, c.day) * 86_400_000 + ((c.hour * 60 + c.minute) * 60 + (c.second ?? 0)) * 1000 + fractionMs - offsetMs
        : undefined;
      const inRange = expected !== undefined && expected >= INSTANT_MIN_MS && expected <= INSTANT_MAX_MS;
      const r = parseInstant(text);
      if (r.ok !== inRange) throw new Error(`${text}: ${r.ok ? 'accepted' : `refused (${r.problem})`}, expected ${inRange ? 'accepted' : 'refused'}`);
      if (r.ok && r.ms !== expected) throw new Error(`${text}: ${new Date(r.ms).toISOString()} instead of ${new Date(expected!).toISOString()}`);
    }),
    { numRuns: runs(20_000) },
    `${runs(20_000)} date-times`,
  );
});

t.test('property: every instant in range reads back from its ISO form, in any offset', async (t) => {
  await holds(
    t,
    fc.property(fc.integer({ min: INSTANT_MIN_MS, max: INSTANT_MAX_MS }), fc.integer({ min: -(23 * 60 + 59), max: 23 * 60 + 59 }), (ms, offset) => {
      const r = parseInstant(new Date(ms).toISOString());
      if (!r.ok || r.ms !== ms) throw new Error(`${new Date(ms).toISOString()} read back as ${JSON.stringify(r)}`);
      // The same instant written in another offset.
      const local = new Date(ms + offset * 60_000).toISOString().slice(0, 23);
      const zone = `${offset < 0 ? '-' : '+'}${pad(Math.floor(Math.abs(offset) / 60))}:${pad(Math.abs(offset) % 60)}`;
      if (!/^\d{4}-/.test(local)) return;
      const s = parseInstant(`${local}${zone}`);
      if (!s.ok || s.ms !== ms) throw new Error(`${local}${zone} read back as ${JSON.stringify(s)}`);
    }),
    { numRuns: runs(20_000) },
    `${runs(20_000)} instants`,
  );
});

t.test('over HTTP: every route taking a date-time in its query answers 400 in its family\'s format, naming the parameter', async (t) => {
  const p = await startTestPlatform(t, { fixture: { ...baseFixture(), assignments: berlaAssignments() } });
  const cursor = (values: string[]) => Buffer.from(JSON.stringify(values)).toString('base64url');
  const cases: [string, string, string, RegExp][] = [
    [TOKENS.export_v2, '/v2/hrs/BERLA/history?from=0000-01-01T00:00:00Z&to=0000-01-02T00:00:00Z', 'invalid_parameter', /^from: out of range: accepted from 1970-01-01T00:00:00Z to 9999-12-31T23:59:59Z\.$/],
    [TOKENS.export_v2, '/v2/hrs/BERLA/history?from=2026-02-30T00:00:00Z', 'invalid_parameter', /^from: 2026-02-30 is not a date \(February 2026 has 28 days\)\.$/],
    [TOKENS.export_v2, '/v2/hrs/BERLA/history?from=2026-02-01T00:00:00Z&to=2026-02-01T24:00:00Z', 'invalid_parameter', /^to: hour 24 is not a time of day/],
    [TOKENS.export_v2, '/v2/hrs/BERLA/history?from=2026-13-01T00:00:00Z', 'invalid_parameter', /^from: .*no month 13/],
    [TOKENS.export_v2, '/v2/hrs/BERLA/history?from=2026-02-01T00:00:00%2B24:00', 'invalid_parameter', /^from: offset \+24:00 is out of range/],
    [ADMIN_TOKEN, '/admin/v1/call-logs?originator=mon-1&since=0000-01-01T00:00:00Z', '', /^since: out of range/],
    [ADMIN_TOKEN, '/admin/v1/call-logs?originator=mon-1&since=2026-02-30T00:00:00Z', '', /^since: 2026-02-30 is not a date/],
    [ADMIN_TOKEN, `/admin/v1/transmissions?state=testing&cursor=${cursor(['0000-01-01T00:00:00.000Z', 'mon-1 BERLA availability'])}`, '', /^cursor: not a cursor of this list/],
    [ADMIN_TOKEN, `/admin/v1/transmissions?state=testing&cursor=${cursor(['2026-02-30T00:00:00.000Z', 'mon-1 BERLA availability'])}`, '', /^cursor: not a cursor of this list/],
  ];
  for (const [token, path, type, detail] of cases) {
    const res = await get(`${p.url}${path}`, token);
    t.equal(res.status, 400, path);
    t.match(res.headers.get('content-type'), /json/, path);
    const body = (await res.json()) as { type?: string; code?: string; detail?: string; error?: string };
    // export v2's problem type; the admin API answers { detail } alone.
    if (type) t.match(JSON.stringify(body), type, `${path}: ${type}`);
    t.match(body.detail ?? body.error ?? '', detail, path);
  }
  // A leap day is a date: no 400 for it (the history is published later than it).
  const leap = await get(`${p.url}/v2/hrs/BERLA/history?from=2024-02-29T00:00:00Z&to=2024-02-29T01:00:00%2B01:00`, TOKENS.export_v2);
  t.not(leap.status, 500);
  t.notMatch(await leap.text(), /is not a date/, '29 February 2024 is a date');
});
