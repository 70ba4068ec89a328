import t from 'tap';
import { baseFixture, TOKENS } from '../helpers/fixtures.js';
import { startTestPlatform, type TestPlatform } from '../helpers/platform.js';
import { LIMITS, LIMIT_MESSAGES } from '../../src/domain/import-v2/validate.js';
import { runs } from '../helpers/scale.js';
import { holds } from '../helpers/property.js';

/**
 * Import v2 over HTTP against hostile bodies: the limits on one request (transmissions, entries per
 * list, nesting, error messages), the media type, duplicate keys. Nothing here measures time: every
 * refusal is checked by its status, its shape and the size of its body.
 */

const ago = (seconds: number) => new Date(Date.now() - seconds * 1000).toISOString();

function fixture() {
  const f = baseFixture();
  f.assignments.push({ originator: 'mon-1', hrs_id: 'BERLA', signal_type: 'usage', state: 'live' });
  return f;
}

/** Posts raw bytes (a Uint8Array body gets no Content-Type from fetch unless given). */
async function postRaw(p: TestPlatform, category: string, body: string, headers: Record<string, string> = { 'Content-Type': 'application/json' }) {
  const res = await fetch(`${p.url}/import/v2/signal/${category}/`, {
    method: 'POST',
    body: new TextEncoder().encode(body),
    headers: { Authorization: `Bearer ${TOKENS.import_v2}`, ...headers },
  });
  const text = await res.text();
  return { status: res.status, text, json: text === '' ? undefined : (JSON.parse(text) as unknown) };
}

/** A JSON array of `item` repeated to just under `bytes`. */
function filler(item: string, bytes: number): string {
  const count = Math.floor((bytes - 2) / (item.length + 1));
  return `[${Array(count).fill(item).join(',')}]`;
}

/** Every reading ever stored (signal_history keeps each one): unchanged across a refused request. */
async function storedCount(p: TestPlatform): Promise<number> {
  const rows = await p.sql`SELECT count(*)::int AS n FROM signal_history`;
  return rows[0]!.n as number;
}

let shared: Promise<TestPlatform> | undefined;
/**
 * One platform for the file's HTTP tests: each sends its own requests and looks only at their answers
 * and at whether a refusal stored anything, so they need not pay for a platform each. Stopped when the
 * file ends.
 */
const platform = () => (shared ??= startTestPlatform(t, { fixture: fixture() }));

const usage = (extra: Record<string, unknown> = {}) => ({ hrs: 'BERLA', datetime: ago(2), nozzles: [{ id: 'N1', usage_status: 'free' }], ...extra });
const tooMany = { non_field_errors: [LIMIT_MESSAGES.tooLong(LIMITS.transmissions)] };

t.test('a 1 MiB array of numbers or empty objects is refused whole, with a small body', async (t) => {
  const p = await platform();
  const max = p.parts.config.maxBodyBytes;
  for (const item of ['1', '{}']) {
    const body = filler(item, max - 16);
    const res = await postRaw(p, 'availability', body);
    t.equal(res.status, 400, `[${item},…] (${body.length} bytes): 400`);
    t.same(res.json, tooMany, 'refused up front in the import format');
    t.ok(res.text.length < 200, `the body is small (${res.text.length} bytes)`);
  }
  // Exactly at the limit the array is validated; one more is refused.
  const atLimit = await postRaw(p, 'usage', JSON.stringify(Array(LIMITS.transmissions).fill(1)));
  t.equal(atLimit.status, 400);
  t.ok(Array.isArray(atLimit.json) && (atLimit.json as unknown[]).length === LIMITS.transmissions, 'at the limit: an aligned array');
  t.same((await postRaw(p, 'usage', JSON.stringify(Array(LIMITS.transmissions + 1).fill(1)))).json, tooMany, 'one more: refused');
});

t.test('the server answers others while a big request is handled', async (t) => {
  const p = await platform();
  const body = filler('{}', p.parts.config.maxBodyBytes - 16);
  const [big, health, other] = await Promise.all([
    postRaw(p, 'availability', body),
    fetch(`${p.url}/healthz`).then(async (res) => ({ status: res.status, body: await res.json() })),
    postRaw(p, 'usage', JSON.stringify([usage()])),
  ]);
  t.equal(big.status, 400);
  t.same(health, { status: 200, body: { status: 'ok' } });
  t.equal(other.status, 204, 'a normal request beside it is served');
});

t.test('error messages are capped: later transmissions are not validated, the body stays aligned and bounded', async (t) => {
  const p = await platform();
  const items = Array(LIMITS.transmissions).fill({});
  const res = await postRaw(p, 'availability', JSON.stringify(items));
  t.equal(res.status, 400);
  const body = res.json as Record<string, string[]>[];
  t.equal(body.length, items.length, 'aligned with the request');
  // `{}` is four messages for availability (hrs, datetime, nozzles, station).
  const reported = Math.ceil(LIMITS.reportedErrors / 4);
  t.same(Object.keys(body[0]!).sort(), ['datetime', 'hrs', 'nozzles', 'station']);
  t.same(Object.keys(body[reported - 1]!).sort(), ['datetime', 'hrs', 'nozzles', 'station'], 'validated until the budget is spent');
  t.same(body[reported], { non_field_errors: [LIMIT_MESSAGES.notValidated] }, 'then not validated');
  t.same(body.at(-1), { non_field_errors: [LIMIT_MESSAGES.notValidated] });
  t.ok(res.text.length < 200_000, `bounded body (${res.text.length} bytes)`);
});

t.test('a list of entries over the limit is reported alone, its entries not looked into', async (t) => {
  const p = await platform();
  const nozzles = Array(LIMITS.entries + 1).fill({ id: 'N1', usage_status: 'nonsense' });
  const res = await postRaw(p, 'usage', JSON.stringify([usage({ nozzles }), usage({ hrs: 'HAMBG' })]));
  t.equal(res.status, 400);
  t.match(res.json, [{ nozzles: [LIMIT_MESSAGES.tooLong(LIMITS.entries)] }, { nozzles: [{ id: ['Unknown nozzle identifier: N1'] }] }], 'the other transmission is validated');
  t.same(Object.keys((res.json as object[])[0]!), ['nozzles'], 'nothing else about that transmission');
  const atLimit = await postRaw(p, 'usage', JSON.stringify([usage({ nozzles: nozzles.slice(1) })]));
  t.match(atLimit.json, [{ nozzles: Array }], 'at the limit the entries are validated');
  t.equal(((atLimit.json as { nozzles: unknown[] }[])[0]!.nozzles).length, LIMITS.entries);
});

t.test('nesting deeper than the limit is a parse error', async (t) => {
  const p = await platform();
  const deep = '['.repeat(100_000) + ']'.repeat(100_000);
  const res = await postRaw(p, 'usage', deep);
  t.equal(res.status, 400);
  t.same(res.json, { detail: `JSON parse error - nesting deeper than ${LIMITS.depth} levels at $${'[0]'.repeat(LIMITS.depth)}.` });
  const ok = JSON.stringify([usage({ extra: [[[[[[[1]]]]]]] })]);
  t.equal((await postRaw(p, 'usage', ok)).status, 204, 'unknown fields nested within the limit are ignored as before');
});

t.test('duplicate keys are refused, naming the key and its place; nothing is stored', async (t) => {
  const p = await platform();
  const stored = await storedCount(p);
  const base = JSON.stringify(usage()).slice(0, -1);
  let res = await postRaw(p, 'usage', `[${base}, "dry_run": true, "dry_run": false}]`);
  t.equal(res.status, 400);
  t.same(res.json, { detail: 'JSON parse error - duplicate key "dry_run" at $[0].' });
  res = await postRaw(p, 'usage', `[${base}, "hrs": "BERLA"}]`);
  t.same(res.json, { detail: 'JSON parse error - duplicate key "hrs" at $[0].' }, 'an escaped spelling is the same key');
  res = await postRaw(p, 'usage', `[{"hrs":"BERLA","datetime":"${ago(2)}","nozzles":[{"id":"N1","usage_status":"free","\\u0069d":"N2"}]}]`);
  t.same(res.json, { detail: 'JSON parse error - duplicate key "id" at $[0].nozzles[0].' });
  t.equal(await storedCount(p), stored, 'nothing stored');
  res = await postRaw(p, 'usage', JSON.stringify([usage({ dry_run: false })]));
  t.equal(res.status, 204, 'the same keys in different objects are fine');
});

t.test('Content-Type: application/json is required', async (t) => {
  const p = await platform();
  const stored = await storedCount(p);
  const body = JSON.stringify([usage()]);
  const missing = await postRaw(p, 'usage', body, {});
  t.equal(missing.status, 415);
  t.same(missing.json, { detail: 'Unsupported media type "" in request. Send "Content-Type: application/json".' });
  t.equal((await postRaw(p, 'usage', body, { 'Content-Type': 'text/plain' })).status, 415);
  t.equal(await storedCount(p), stored, 'nothing stored');
  t.equal((await postRaw(p, 'usage', body, { 'Content-Type': 'application/json; charset=utf-8' })).status, 204);
});

t.test('the work is bounded by counting: transmissions past the error budget or the limit are never parsed', async (t) => {
  const { CATEGORY } = await import('../../src/domain/categories/index.js');
  const { validateBatch } = await import('../../src/domain/import-v2/validate.js');
  const schema = CATEGORY.availability.transmission;
  const original = schema.safeParse.bind(schema);
  let parses = 0;
  schema.safeParse = ((value: unknown) => (parses++, original(value))) as typeof schema.safeParse;
  t.teardown(() => void (schema.safeParse = original));
  const registry = { station: () => undefined };
  validateBatch('availability', Array(LIMITS.transmissions + 1).fill({}), registry, new Date());
  t.equal(parses, 0, 'over the limit: nothing parsed');
  validateBatch('availability', Array(LIMITS.transmissions).fill({}), registry, new Date());
  t.equal(parses, Math.ceil(LIMITS.reportedErrors / 4), 'at the limit: parsing stops once the error budget is spent');
  parses = 0;
  validateBatch('availability', [{ hrs: 'BERLA', nozzles: Array(LIMITS.entries + 1).fill({}) }], registry, new Date());
  t.equal(parses, 0, 'an oversized list: its transmission is not parsed');
});

t.test('validated in slices: the same result, with a pause after every slice', async (t) => {
  const { validateBatch, validateBatchInSlices } = await import('../../src/domain/import-v2/validate.js');
  const registry = { station: () => undefined };
  const now = new Date();
  const body = Array.from({ length: 120 }, (_, i) => ({ hrs: `ST${i}`, datetime: now.toISOString(), nozzles: [{ id: 'N1', usage_status: 'free' }] }));
  let pauses = 0;
  const sliced = await validateBatchInSlices('usage', body, registry, now, 50, async () => void pauses++);
  t.same(sliced, validateBatch('usage', body, registry, now));
  t.equal(pauses, 2, '120 transmissions in slices of 50: two pauses');
  t.same(await validateBatchInSlices('usage', {}, registry, now, 50, async () => void pauses++), validateBatch('usage', {}, registry, now));
});

t.test('duplicate keys: found in objects of any size, the first repeated key named', async (t) => {
  const { structureProblem } = await import('../../src/http/request.js');
  const fc = (await import('fast-check')).default;
  await holds(
    t,
    fc.property(fc.array(fc.constantFrom('a', 'b', 'c', 'd', 'e', 'f', 'g', 'h', 'i', 'j', 'k', 'l', 'm', 'n', 'o', 'p', 'q', 'r', 's', 't'), { maxLength: 30 }), (keys) => {
      const text = `[{${keys.map((k, i) => `${JSON.stringify(k)}:${i}`).join(',')}}]`;
      const seen = new Set<string>();
      const first = keys.find((k) => (seen.has(k) ? true : (seen.add(k), false)));
      const problem = structureProblem(text, { duplicates: true, maxDepth: 10, maxItems: 10 });
      return problem === (first === undefined ? undefined : `duplicate key ${JSON.stringify(first)} at $[0].`);
    }),
    { numRuns: runs(500) },
    `${runs(500)} objects of up to 30 keys: a duplicate is reported exactly when there is one, the first named`,
  );
});
