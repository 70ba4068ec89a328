/**
 * parsers: the worst time one check of user text takes, in this process (no server): every text field
 * of the schemas requests and registry files are checked with (each filled to its length limit in
 * several ways, the rest of the object valid, the whole object checked, as a request is), the opening
 * hours (hand-made worst cases and random values within their bounds) and the parsers the routes call
 * on query values (date-times, HTTP dates, page cursors, coordinates). Each at its limit and at 1 MB
 * (where a limit refuses it at once).
 *
 * Goal: no check of a value up to its field's limit takes more than 10 ms.
 */
import { z } from 'zod';
import { DEFINITIONS } from '../../src/domain/categories/index.js';
import { parseGeoQuery } from '../../src/domain/geo.js';
import { V1_SCHEMAS } from '../../src/domain/import-v1/schemas.js';
import { checkOpeningHours } from '../../src/domain/opening-hours.js';
import { OPENING_HOURS_MAX_LENGTH, openingHoursOutOfBounds } from '../../src/domain/opening-hours-bounds.js';
import { newTokenRequestSchema, signInRequestSchema } from '../../src/domain/portal/schemas.js';
import { textFaults } from '../../src/domain/text.js';
import { newWebhookSchema, webhookPatchSchema } from '../../src/domain/webhooks/schemas.js';
import { decodeCursor } from '../../src/api/accounts/pages.js';
import { broadcastSchema, draftLayoutSchema, stationPutSchema } from '../../src/api/portal/bodies.js';
import { parseHttpDate, parseInstant } from '../../src/http/dates.js';
import { QUERY_VALUE_MAX_LENGTH } from '../../src/http/query.js';
import { fixtureSchema } from '../../src/registry/file/schema.js';
import { baseFixture } from '../helpers/fixtures.js';
import { longValue } from '../helpers/input-targets.js';
import { exampleOf, textFields, valueAt, withValueAt } from '../helpers/schema-fields.js';
import type { BenchOptions, Scenario } from './lib/scenario.js';
import { fixed, table } from './lib/table.js';

const BUDGET_MS = 10;
const MEGABYTE = 1_000_000;
/** Random opening hours tried (within their bounds), and how many times each check is repeated. */
const RANDOM_HOURS = Number(process.env.BENCH_RANDOM_HOURS ?? 2000);
const REPEAT = 3;

/**
 * The worst input's cost: each input is checked `REPEAT` times (made anew each time, so that no cache
 * answers) and its cost is the least of its runs, so that a collection or another process's turn on a
 * shared core during one run is not taken for the check's own time; the worst such cost is reported.
 */
function worst(inputs: (() => unknown)[], check: (input: unknown) => unknown): number {
  let most = 0;
  for (const make of inputs) {
    let least = Infinity;
    for (let i = 0; i < REPEAT; i++) {
      const input = make();
      const started = performance.now();
      check(input);
      least = Math.min(least, performance.now() - started);
    }
    most = Math.max(most, least);
  }
  return most;
}

let salt = 0;
/** A value unseen before (the opening-hours cache keys on the text): its last character varies. */
const fresh = (text: string) => () => text.slice(0, -1) + String.fromCharCode(0x21 + (salt++ % 90));

/** The shapes a field's value of `length` characters takes: its example repeated, one letter, `a.` repeated, random text. */
function shapesOf(example: unknown, length: number): (() => string)[] {
  const random = () => Array.from({ length }, () => String.fromCharCode(0x20 + Math.floor(Math.random() * 95))).join('');
  return [longValue(example, length), 'x'.repeat(length), `${'a.'.repeat(length)}`.slice(0, length)].map(fresh).concat(random);
}

interface Row {
  what: string;
  limit: string;
  atLimit: number;
  atMegabyte: number;
}

/** Every text field of a schema, each at its limit and at 1 MB, the rest of `base` (its example) around it. */
function fieldRows(name: string, schema: z.ZodType, base: unknown): Row[] {
  return textFields(schema)
    .filter((field) => field.kind === 'string')
    .map((field) => {
      const limit = field.boundedFirst ?? field.maxLength ?? MEGABYTE;
      const example = valueAt(base, field.path) ?? exampleOf(field.schema);
      const check = (value: unknown) => schema.safeParse(withValueAt(base, field.path, value));
      return {
        what: `${name} ${field.path.join('.')}`,
        limit: String(limit),
        atLimit: worst(shapesOf(example, Math.min(limit, MEGABYTE)), check),
        atMegabyte: worst(shapesOf(example, MEGABYTE).slice(0, 1), check),
      };
    });
}

/** Opening hours within their bounds: hand-made worst cases, then random sequences of their parts. */
function openingHoursInputs(): (() => string)[] {
  const upTo = (unit: string) => {
    let text = '';
    while (text.length + unit.length <= OPENING_HOURS_MAX_LENGTH && !openingHoursOutOfBounds(text + unit)) text += unit;
    return text;
  };
  const made = ['Mo-Fr 08:00-18:00; ', ',', '1,', 'Mo,', '-', '08:00-09:00,', 'week 01-53/2 Mo 10:00-12:00; ', 'PH off; ', '(sunrise+01:00)-(sunset-01:00); ',
    'easter +1 day 10:00-12:00; ', 'Jan 01-Feb 28 10:00-12:00; ', '2030 Jan 01 10:00-12:00; ', 'Mo 10:00+; ', 'Mo 10:00-12:00 || ', 'Mo[1,-1] 10:00-12:00; ',
    'Mo 10.00-12.00; ', 'Mo closed; ', `"${'c'.repeat(60)}" `, 'abcdefghijklmnopqrst ', '& ', 'Montag ']
    .map(upTo)
    .concat(['PH off', 'SH off', 'Dec 25 off', 'Mo-Su 00:00-24:00', `${'abcdefghijklmnopqrst '.repeat(3)}${'Mo,'.repeat(60)}`]);
  const vocabulary = ['Mo', 'Tu', 'Fr', 'Sa', 'Su', 'Jan', 'Dec', 'PH', 'SH', 'week', 'easter', 'sunrise', 'sunset', 'off', 'open', 'closed', 'unknown', 'day',
    ' ', ',', ';', ':', '-', '+', '/', '[', ']', '(', ')', '||', '.', '1', '10', '08', '2030', '"c"', '24/7', 'x', 'abcdefghijklmnopqrst', '&', '°', 'Montag'];
  const random = () => {
    let text = '';
    for (;;) {
      const part = vocabulary[Math.floor(Math.random() * vocabulary.length)]!;
      if (text.length + part.length > OPENING_HOURS_MAX_LENGTH || openingHoursOutOfBounds(text + part)) return text || 'Mo';
      text += part;
    }
  };
  return [...made.map(fresh), ...Array.from({ length: RANDOM_HOURS }, () => random)];
}

/** The parsers routes call on query values themselves, at the query value limit and at 1 MB. */
function queryRows(): Row[] {
  const parsers: [string, (value: unknown) => unknown][] = [
    ['query date-time (since, from, to, updated_since)', (v) => parseInstant(v as string)],
    ['If-Modified-Since (HTTP date)', (v) => parseHttpDate(v as string)],
    ['query cursor (portal, admin)', (v) => { try { decodeCursor(v as string, 2); } catch { /* refused */ } }],
    ['query bbox', (v) => parseGeoQuery({ bbox: [v as string], near: [], radius_km: [] })],
    ['query near', (v) => parseGeoQuery({ bbox: [], near: [v as string], radius_km: ['10'] })],
  ];
  const examples = ['2026-11-24T08:00:00.123456789+01:00 ', 'Sun, 06 Nov 1994 08:49:37 GMT', 'WyIxIiwiMiJd', '5.9,47.3,15.0,55.1,', '52.52,13.405,'];
  return parsers.map(([what, parse], i) => ({
    what,
    limit: String(QUERY_VALUE_MAX_LENGTH),
    atLimit: worst(shapesOf(examples[i], QUERY_VALUE_MAX_LENGTH), parse),
    atMegabyte: worst(shapesOf(examples[i], MEGABYTE).slice(0, 1), parse),
  }));
}

async function run(options: BenchOptions): Promise<void> {
  const quiet = console.error;
  // The opening_hours package writes some of its refusals to stderr as well.
  console.error = () => {};
  const rows: Row[] = [];
  try {
    const hours = openingHoursInputs();
    rows.push({
      what: `opening hours: ${hours.length} values within their bounds`,
      limit: String(OPENING_HOURS_MAX_LENGTH),
      atLimit: worst(hours, (v) => checkOpeningHours(v as string, 'de')),
      atMegabyte: worst([fresh(`24/7${'x'.repeat(MEGABYTE)}`), fresh('Mo-Fr 08:00-18:00; '.repeat(MEGABYTE / 19))], (v) => checkOpeningHours(v as string)),
    });
    const first = baseFixture().stations[0] as Record<string, unknown>;
    const station = { ...first, details: { country: 'DE' } };
    const schemas: [string, z.ZodType, unknown][] = [
      ['registry file', fixtureSchema, { ...baseFixture(), stations: [station] }],
      ['portal station PUT', stationPutSchema, { name: 'Berlin', details: { country: 'DE' } }],
      ['portal draft layout', draftLayoutSchema, exampleOf(draftLayoutSchema) ?? first.layout],
      ['portal broadcast', broadcastSchema, { kind: 'maintenance', starts_at: '2027-01-01T00:00:00Z' }],
      ['portal sign-in', signInRequestSchema, exampleOf(signInRequestSchema)],
      ['portal new token', newTokenRequestSchema, exampleOf(newTokenRequestSchema)],
      ['webhook', newWebhookSchema, exampleOf(newWebhookSchema)],
      ['webhook change', webhookPatchSchema, exampleOf(webhookPatchSchema)],
      ['import v1', V1_SCHEMAS.v1.request, exampleOf(V1_SCHEMAS.v1.request)],
      ['import v1.1', V1_SCHEMAS['v1.1'].request, exampleOf(V1_SCHEMAS['v1.1'].request)],
      ...DEFINITIONS.map((d): [string, z.ZodType, unknown] => [`import v2 ${d.name}`, d.transmission, exampleOf(d.transmission)]),
    ];
    for (const [name, schema, base] of schemas) rows.push(...fieldRows(name, schema, base));
    rows.push(...queryRows());
    const body = JSON.stringify({ fields: Array.from({ length: 1000 }, (_, i) => ({ [`k${i}`]: 'x'.repeat(990) })) });
    rows.push({ what: 'a JSON body of 1 MB: parsed, every string through the text rule', limit: 'body cap', atLimit: worst([() => body], (b) => textFaults(JSON.parse(b as string))), atMegabyte: Number.NaN });
  } finally {
    console.error = quiet;
  }
  rows.sort((a, b) => b.atLimit - a.atLimit);
  const over = rows.filter((row) => row.atLimit > BUDGET_MS);
  options.print(table(
    ['check', 'limit (characters)', 'worst at the limit (ms)', 'worst at 1 MB (ms)', 'budget'],
    rows.map((row) => [row.what, row.limit, fixed(row.atLimit, 2), fixed(row.atMegabyte, 2), row.atLimit > BUDGET_MS ? `${BUDGET_MS} ms: OVER` : `${BUDGET_MS} ms`]),
  ));
  options.print();
  options.print(`${rows.length} checks; the worst at its limit: ${fixed(rows[0]!.atLimit, 2)} ms (${rows[0]!.what}); budget ${BUDGET_MS} ms: ${over.length === 0 ? 'met' : `${over.length} over`}`);
}

const scenario: Scenario = {
  description: 'the worst time one check of user text takes, each field at its limit and at 1 MB (goal: at most 10 ms at the limit)',
  run,
};
export default scenario;
