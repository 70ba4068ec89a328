import t from 'tap';
import { decimalProblem } from '../../src/domain/decimal.js';
import { unstorableProblem } from '../../src/domain/import-v2/fields.js';
import { baseFixture, TOKENS } from '../helpers/fixtures.js';
import { startTestPlatform, type TestPlatform } from '../helpers/platform.js';

/**
 * Values that used to pass validation and then fail or be bent when stored: NUL and lone surrogates
 * in strings (PostgreSQL refuses them), a price with a leading `+` (`currency: null` is EUR: test/platform/import-null-optional.test.ts).
 */

const ago = (seconds: number) => new Date(Date.now() - seconds * 1000).toISOString();

function fixture() {
  const f = baseFixture();
  f.assignments.push({ originator: 'mon-1', hrs_id: 'BERLA', signal_type: 'usage', state: 'live' });
  return f;
}

/** Posts the JSON text as is (JSON.stringify writes lone surrogates as `\ud800` escapes, as a client would). */
async function post(p: TestPlatform, category: string, body: unknown) {
  const res = await fetch(`${p.url}/import/v2/signal/${category}/`, {
    method: 'POST',
    body: JSON.stringify(body),
    headers: { Authorization: `Bearer ${TOKENS.import_v2}`, 'Content-Type': 'application/json' },
  });
  const text = await res.text();
  return { status: res.status, json: text === '' ? undefined : (JSON.parse(text) as unknown) };
}

async function storedCount(p: TestPlatform): Promise<number> {
  const rows = await p.sql`SELECT count(*)::int AS n FROM signal_latest`;
  return rows[0]!.n as number;
}

let shared: Promise<TestPlatform> | undefined;
/**
 * One platform for the file's HTTP tests: each looks only at the answers to its own requests and at
 * whether its refused ones stored anything. Stopped when the file ends.
 */
const platform = () => (shared ??= startTestPlatform(t, { fixture: fixture() }));

const usage = (extra: Record<string, unknown> = {}) => ({ hrs: 'BERLA', datetime: ago(2), nozzles: [{ id: 'N1', usage_status: 'free' }], ...extra });

t.test('the rule: NUL and unpaired surrogates are named, pairs are text', async (t) => {
  t.equal(unstorableProblem('a\u0000b'), 'Null characters are not allowed.');
  t.equal(unstorableProblem('a\ud800b'), 'Surrogate characters are not allowed: U+D800.');
  t.equal(unstorableProblem('\udfff'), 'Surrogate characters are not allowed: U+DFFF.');
  t.equal(unstorableProblem('x\udc00\ud800'), 'Surrogate characters are not allowed: U+DC00.', 'a low before a high is not a pair');
  t.equal(unstorableProblem('run 😀 ü'), undefined, 'a surrogate pair is an ordinary character');
});

t.test('NUL or a lone surrogate in transmission_id: 400 naming the field, real and dry run alike', async (t) => {
  const p = await platform();
  const cases: [string, string][] = [
    ['a\u0000b', 'Null characters are not allowed.'],
    ['a\ud800b', 'Surrogate characters are not allowed: U+D800.'],
    ['\udfff', 'Surrogate characters are not allowed: U+DFFF.'],
  ];
  for (const [value, message] of cases) {
    for (const dry_run of [false, true]) {
      const res = await post(p, 'usage', [usage({ transmission_id: value, dry_run })]);
      t.equal(res.status, 400, `${JSON.stringify(value)}, dry run ${dry_run}: 400`);
      t.same(res.json, [{ transmission_id: [message] }], 'names the field');
    }
  }
  t.equal(await storedCount(p), 0, 'nothing stored');
  const ok = await post(p, 'usage', [usage({ transmission_id: 'run 😀' })]);
  t.equal(ok.status, 204, 'a transmission_id with a surrogate pair is stored');
  const rows = await p.sql`SELECT transmission_id FROM published_signals`;
  t.equal(rows[0]!.transmission_id, 'run 😀');
});

t.test('every text field has the rule: ids, station, datetime', async (t) => {
  const p = await platform();
  const res = await post(p, 'usage', [usage({ hrs: 'BER\u0000', nozzles: [{ dispenser_id: 'D\ud801', usage_status: 'free' }] })]);
  t.equal(res.status, 400);
  t.match(res.json, [{ hrs: ['Null characters are not allowed.'], nozzles: [{ dispenser_id: ['Surrogate characters are not allowed: U+D801.'] }] }]);
});

t.test('a price with a leading + is not a number', async (t) => {
  const rule = { maxDigits: 8, decimalPlaces: 3 };
  t.equal(decimalProblem('+5', rule), 'A valid number is required.');
  t.equal(decimalProblem('-5', rule), undefined, 'a minus sign is read (and refused later as a range problem)');
  const p = await platform();
  const stored = await storedCount(p);
  const pricing = (product: Record<string, unknown>) => [{ hrs: 'BERLA', datetime: ago(2), products: [{ id: 'P700', gross_price: '5', ...product }] }];
  let res = await post(p, 'pricing', pricing({ gross_price: '+5' }));
  t.same(res.json, [{ products: [{ gross_price: ['A valid number is required.'] }] }]);
  res = await post(p, 'pricing', pricing({ net_price: '+4.5' }));
  t.same(res.json, [{ products: [{ net_price: ['A valid number is required.'] }] }]);
  res = await post(p, 'hydrogen-storage', [{ hrs: 'BERLA', datetime: ago(2), storages: [{ id: 'S1', remaining_kg: '+120' }] }]);
  t.same(res.json, [{ storages: [{ remaining_kg: ['A valid number is required.'] }] }]);
  t.equal(await storedCount(p), stored, 'nothing stored');
  t.equal((await post(p, 'pricing', pricing({}))).status, 204, 'currency left out: EUR, as before');
});
