/**
 * `hrs history run`: the history jobs at once, for operators and tests. It materialises the readings
 * received up to HISTORY_LAG ago, rolls up (publishes) every complete hour, and says so.
 */
import t from 'tap';
import { storeTransmissions } from '../../db/queries/signals.js';
import { loadFixture } from '../../src/registry/file/load.js';
import { baseFixture, berlaAssignments } from '../helpers/fixtures.js';
import { freshDatabase } from '../helpers/platform.js';
import { hrs } from '../helpers/process.js';

const MIN = 60_000;
const HOUR = 60 * MIN;
const lines = (text: string) => text.trim().split('\n').filter(Boolean);

t.test('hrs history run materialises and publishes every complete hour, and prints what it did', async (t) => {
  const { sql, config } = await freshDatabase(t);
  await loadFixture(sql, { ...baseFixture(), assignments: berlaAssignments() }, { baseDir: '.' });
  const env = { DATABASE_URL: config.databaseUrl, REDIS_PREFIX: config.redisPrefix, HISTORY_LAG: '60' };
  const at = Math.floor(Date.now() / HOUR) * HOUR - 2 * HOUR + 10 * MIN;
  await storeTransmissions(sql, [
    {
      originatorId: 'mon-1', hrsId: 'BERLA', category: 'availability', state: 'live',
      measuredAt: new Date(at), receivedAt: new Date(at + 500), transmissionId: null,
      payload: { station: { maintenance: false, limitedly_available: false }, nozzles: [{ id: 'N1', available: true }, { id: 'N2', available: false }] },
    },
  ]);
  const progress = async () => {
    const rows = await sql<{ name: string; until: Date; changed_at: Date }[]>`SELECT name, until, changed_at FROM history_progress ORDER BY name`;
    return Object.fromEntries(rows.map((r) => [r.name, r]));
  };
  t.same(await progress(), {}, 'nothing materialised or published before');

  const before = Date.now();
  let r = await hrs(['history', 'run'], env);
  t.equal(r.code, 0, r.stderr);
  const p = await progress();
  const [materialised, rolled, published] = lines(r.stdout);
  t.equal(lines(r.stdout).length, 3, 'three lines');
  t.match(materialised, new RegExp(`^materialised: receipts ${new Date(at + 499).toISOString()} to ${p.materialized!.until.toISOString()}: 1 reading\\(s\\), \\d+ interval\\(s\\) in \\d+ step\\(s\\)$`));
  t.ok(p.materialized!.until.getTime() >= before - MIN - 1000, 'materialised up to HISTORY_LAG before now');
  const end = Math.floor(p.materialized!.until.getTime() / HOUR) * HOUR;
  t.equal(p.rolled_up!.until.getTime(), end, 'every complete hour rolled up');
  t.match(rolled, new RegExp(`^rolled up: hours ${new Date(at - 10 * MIN).toISOString()} to ${new Date(end).toISOString()}: \\d+ row\\(s\\)$`));
  t.equal(published, `published: up to ${new Date(end).toISOString()} (Last-Modified: ${p.rolled_up!.changed_at.toUTCString()})`);
  const [hourly] = await sql<{ readings: number }[]>`SELECT sum(readings)::int AS readings FROM history_hourly WHERE hrs_id = 'BERLA' AND series = 'availability'`;
  t.equal(hourly!.readings, 1, 'the reading is in the roll-ups');

  // Again: nothing new to roll up (unless an hour ended meanwhile), the same published end or a later one.
  r = await hrs(['history', 'run'], env);
  t.equal(r.code, 0, r.stderr);
  t.match(lines(r.stdout)[0], /^materialised: (nothing new|receipts .*: 0 reading\(s\))/);
  t.match(lines(r.stdout)[1], /^rolled up: (nothing new \(no complete hour materialised since the last roll-up\)|hours )/);
  t.match(lines(r.stdout)[2], /^published: up to /);

  // The command is documented, and a wrong one is a usage error.
  r = await hrs(['--help']);
  t.match(r.stdout, /^  history +run the status history's jobs now/m, 'listed with the commands');
  r = await hrs(['history', '--help']);
  t.equal(r.code, 0);
  t.match(r.stdout, /^Usage: hrs history run\n/);
  t.match(r.stdout, /rolls up every complete hour materialised, which publishes it/);
  for (const args of [['history'], ['history', 'frob'], ['history', 'run', 'extra']]) {
    r = await hrs(args, env);
    t.equal(r.code, 2, `${args.join(' ')}: exit 2`);
    t.equal(lines(r.stderr).length, 1);
    t.match(r.stderr, /usage: hrs history run/);
  }
});

t.test('hrs history run on an empty platform publishes the empty history up to the last complete hour', async (t) => {
  const { sql, config } = await freshDatabase(t);
  const r = await hrs(['history', 'run'], { DATABASE_URL: config.databaseUrl, REDIS_PREFIX: config.redisPrefix, HISTORY_LAG: '60' });
  t.equal(r.code, 0, r.stderr);
  const [rolled] = await sql<{ until: Date }[]>`SELECT until FROM history_progress WHERE name = 'rolled_up'`;
  t.equal(rolled!.until.getTime() % HOUR, 0);
  t.match(lines(r.stdout)[1], `rolled up: nothing received before ${rolled!.until.toISOString()}; published empty up to it`);
});
