/**
 * The demo's registry load (src/registry/file/load.ts, loadFixtureIntoEmpty): the demo file goes only
 * into a registry with no station but the sandbox's and no token; anything else is left as it was.
 */
import t from 'tap';
import type { Sql } from '../../db/connect.js';
import { demoFixture } from '../../src/cli/demo/fixture.js';
import { loadFixture, loadFixtureIntoEmpty } from '../../src/registry/file/load.js';
import { installSandbox } from '../../src/registry/sandbox.js';
import { freshDatabase } from '../helpers/platform.js';

const options = { baseDir: process.cwd() };
const stationName = async (sql: Sql, hrsId: string) => (await sql<{ name: string }[]>`SELECT name FROM stations WHERE hrs_id = ${hrsId}`)[0]?.name;

t.test('into an empty registry (the sandbox\'s stations do not count): loaded; then never again over an edit', async (t) => {
  const { sql } = await freshDatabase(t);
  await installSandbox(sql);
  t.ok((await sql`SELECT 1 FROM stations WHERE sandbox`).length > 0, 'the sandbox\'s stations are there');
  const first = await loadFixtureIntoEmpty(sql, demoFixture(), options);
  t.ok(first, 'loaded');
  t.equal(first!.stations.added, 12);
  await sql`UPDATE stations SET name = 'Renamed' WHERE hrs_id = 'BERAP'`;
  t.equal(await loadFixtureIntoEmpty(sql, demoFixture(), options), null, 'not into a registry with stations');
  t.equal(await stationName(sql, 'BERAP'), 'Renamed', 'the edit is kept');
  t.ok(await loadFixture(sql, demoFixture(), options), 'loadFixture (--reset) loads over it');
  t.equal(await stationName(sql, 'BERAP'), 'Berlin Airport');
});

t.test('a registry with a token and no station is not empty', async (t) => {
  const { sql } = await freshDatabase(t);
  await loadFixture(sql, { tokens: [{ generation: 'export_v1', name: 'a legacy client', value: 'a-legacy-export-token-0001' }] }, options);
  t.equal(await loadFixtureIntoEmpty(sql, demoFixture(), options), null, 'left as it was');
  t.equal((await sql`SELECT 1 FROM stations`).length, 0, 'no station added');
});
