import t from 'tap';
import fc from 'fast-check';
import type { Sql } from '../../db/connect.js';
import { FixtureError, loadFixture, type LoadSummary } from '../../src/registry/file/load.js';
import { baseFixture } from '../helpers/fixtures.js';
import { freshDatabase } from '../helpers/platform.js';
import { runs } from '../helpers/scale.js';

/** Every path to a leaf (or container) of a JSON value. */
function paths(value: unknown, prefix: (string | number)[] = []): (string | number)[][] {
  const here = prefix.length > 0 ? [prefix] : [];
  if (Array.isArray(value)) return [...here, ...value.flatMap((v, i) => paths(v, [...prefix, i]))];
  if (value !== null && typeof value === 'object') {
    return [...here, ...Object.entries(value).flatMap(([k, v]) => paths(v, [...prefix, k]))];
  }
  return here;
}

function setAt(root: any, path: (string | number)[], value: unknown): void {
  let node = root;
  for (const key of path.slice(0, -1)) node = node[key];
  node[path[path.length - 1]!] = value;
}

let sql: Sql;
t.before(async () => {
  ({ sql } = await freshDatabase(t));
});

// One instant for every load: a token without an expiry expires a year after it, the same on a second load.
const NOW = new Date();
const load = (data: unknown) => loadFixture(sql, data, { baseDir: process.cwd(), now: NOW });

/** Every table a fixture writes (as in fixtures.test.ts), as one value that differs when any row does. */
const REGISTRY_TABLES = [
  'operators', 'stations', 'station_v1_fuel_types', 'station_events', 'layouts', 'dispensers', 'nozzles',
  'nozzle_fuelling_options', 'storages', 'storage_dispensers', 'products', 'product_nozzles', 'originators',
  'assignments', 'users', 'tokens', 'station_set',
];
const FINGERPRINT = `SELECT ${REGISTRY_TABLES.map((table) => `(SELECT md5(coalesce(string_agg(r::text, '|' ORDER BY r::text), '')) FROM ${table} r)`).join(' || ')} AS print`;
async function fingerprint(): Promise<string> {
  const [row] = await sql.unsafe<{ print: string }[]>(FINGERPRINT);
  return row!.print;
}

/** What a load may leave behind: nothing added, changed or removed (the second of two identical loads). */
function changedNothing(summary: LoadSummary): boolean {
  const sections = [summary.operators, summary.stations, summary.originators, summary.assignments, summary.users, summary.tokens];
  return sections.every((c) => c.added + c.changed + c.removed === 0) && summary.changedStations.length === 0 && !summary.tokensChanged;
}

interface Outcomes {
  loaded: number;
  refused: number;
}

/**
 * Loads `data` and checks what came of it; a broken rule throws, which fails (and shrinks) the property.
 * A refusal is a FixtureError whose problems all name a path, and the registry is exactly as before it.
 * A load leaves every station the fixture lists in the registry, and loading the same data again changes
 * nothing.
 */
async function loadAndCheck(data: unknown, outcomes: Outcomes): Promise<void> {
  const before = await fingerprint();
  try {
    await load(data);
  } catch (err) {
    if (!(err instanceof FixtureError)) throw err;
    if (!err.problems.every((p) => /^\S.*: /.test(p))) throw new Error(`problem without a path: ${err.problems}`);
    if ((await fingerprint()) !== before) throw new Error(`a refused fixture changed the registry: ${err.problems}`);
    outcomes.refused++;
    return;
  }
  const listed = ((data as { stations?: { hrs_id: string }[] } | null)?.stations ?? []).map((s) => s.hrs_id);
  const present = new Set((await sql<{ hrs_id: string }[]>`SELECT hrs_id FROM stations`).map((r) => r.hrs_id));
  const missing = listed.filter((id) => !present.has(id));
  if (missing.length > 0) throw new Error(`loaded, yet not in the registry: ${missing.join(', ')}`);
  const after = await fingerprint();
  const again = await load(data);
  if (!changedNothing(again) || (await fingerprint()) !== after) {
    throw new Error(`loading the same fixture again changed something: ${JSON.stringify(again)}`);
  }
  outcomes.loaded++;
}

t.test('arbitrary JSON is refused with explanations and leaves the registry as it was', async (t) => {
  const outcomes: Outcomes = { loaded: 0, refused: 0 };
  await fc.assert(
    fc.asyncProperty(fc.jsonValue(), async (value) => {
      await loadAndCheck(value, outcomes);
    }),
    { numRuns: runs(150) },
  );
  t.equal(outcomes.loaded + outcomes.refused, runs(150), 'every value was loaded or refused');
  t.ok(outcomes.refused > 0, `${outcomes.refused} refused, none with a change to the registry`);
});

t.test('a valid fixture with one value replaced by arbitrary JSON loads (again without change) or is explained', async (t) => {
  const all = paths(baseFixture());
  const outcomes: Outcomes = { loaded: 0, refused: 0 };
  await fc.assert(
    fc.asyncProperty(fc.constantFrom(...all), fc.jsonValue({ maxDepth: 2 }), async (path, value) => {
      const fixture = baseFixture();
      setAt(fixture, path, value);
      await loadAndCheck(fixture, outcomes);
    }),
    { numRuns: runs(250) },
  );
  t.equal(outcomes.loaded + outcomes.refused, runs(250), 'every fixture was loaded or refused');
  t.ok(outcomes.refused > 0, `${outcomes.refused} refused, the registry unchanged by each`);
  t.ok(outcomes.loaded > 0, `${outcomes.loaded} loaded, with their stations, and a second load changed nothing`);
});

t.test('strings at the edges of the columns are validated, not left to PostgreSQL', async (t) => {
  const all = paths(baseFixture()).filter((p) => typeof p[p.length - 1] === 'string');
  const edgy = fc.oneof(
    fc.string({ maxLength: 3 }),
    fc.constantFrom('', ' ', 'x'.repeat(70), 'x'.repeat(300), '\u0000', 'é', 'ABCDE', '700ld', 'live', 'v1'),
  );
  const outcomes: Outcomes = { loaded: 0, refused: 0 };
  await fc.assert(
    fc.asyncProperty(fc.constantFrom(...all), edgy, async (path, value) => {
      const fixture = baseFixture();
      setAt(fixture, path, value);
      await loadAndCheck(fixture, outcomes);
    }),
    { numRuns: runs(250) },
  );
  t.equal(outcomes.loaded + outcomes.refused, runs(250), 'every fixture was loaded or refused');
  t.ok(outcomes.refused > 0, `${outcomes.refused} refused with a path, the registry unchanged by each`);
  t.ok(outcomes.loaded > 0, `${outcomes.loaded} loaded, with their stations, and a second load changed nothing`);
});
