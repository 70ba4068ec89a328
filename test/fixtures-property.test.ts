import t from 'tap';
import fc from 'fast-check';
import { connect, ensureDatabase, type Sql } from '../db/connect.js';
import { migrate } from '../db/migrate.js';
import { FixtureError, loadFixture } from '../src/registry/file/load.js';
import { baseFixture } from './helpers/fixtures.js';
import { testConfig } from './helpers/platform.js';

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
  const config = testConfig(t);
  await ensureDatabase(config.databaseUrl);
  sql = connect(config.databaseUrl);
  await migrate(sql);
});
t.teardown(() => sql.end({ timeout: 1 }));

const load = (data: unknown) => loadFixture(sql, data, { baseDir: process.cwd() });

/** A load either succeeds or fails with a FixtureError whose problems all name a path. */
async function loadsOrExplains(data: unknown): Promise<boolean> {
  try {
    await load(data);
    return true;
  } catch (err) {
    if (!(err instanceof FixtureError)) throw err;
    if (!err.problems.every((p) => /^\S.*: /.test(p))) throw new Error(`problem without a path: ${err.problems}`);
    return false;
  }
}

t.test('arbitrary JSON never escapes as anything but a FixtureError', async () => {
  await fc.assert(
    fc.asyncProperty(fc.jsonValue(), async (value) => {
      await loadsOrExplains(value);
    }),
    { numRuns: 150 },
  );
});

t.test('a valid fixture with one value replaced by arbitrary JSON loads or is explained', async () => {
  const all = paths(baseFixture());
  await fc.assert(
    fc.asyncProperty(fc.constantFrom(...all), fc.jsonValue({ maxDepth: 2 }), async (path, value) => {
      const fixture = baseFixture();
      setAt(fixture, path, value);
      await loadsOrExplains(fixture);
    }),
    { numRuns: 250 },
  );
});

t.test('strings at the edges of the columns are validated, not left to PostgreSQL', async () => {
  const all = paths(baseFixture()).filter((p) => typeof p[p.length - 1] === 'string');
  const edgy = fc.oneof(
    fc.string({ maxLength: 3 }),
    fc.constantFrom('', ' ', 'x'.repeat(70), 'x'.repeat(300), '\u0000', 'é', 'ABCDE', '700ld', 'live', 'v1'),
  );
  await fc.assert(
    fc.asyncProperty(fc.constantFrom(...all), edgy, async (path, value) => {
      const fixture = baseFixture();
      setAt(fixture, path, value);
      await loadsOrExplains(fixture);
    }),
    { numRuns: 250 },
  );
});
