import t from 'tap';
import { SignalWriter, type StoredTransmission } from '../../db/queries/signals.js';
import { loadFixture } from '../../src/registry/file/load.js';
import { baseFixture } from '../helpers/fixtures.js';
import { freshDatabase } from '../helpers/platform.js';

t.test('group commit: many concurrent requests, one commit each batch, every write durable and isolated', async (t) => {
  const { sql } = await freshDatabase(t);
  await loadFixture(sql, baseFixture(), { baseDir: '.' });
  const writer = new SignalWriter(sql);
  const base = Date.now() - 60_000;
  const row = (i: number, hrsId = 'BERLA'): StoredTransmission => ({
    originatorId: 'mon-1',
    hrsId,
    category: 'availability',
    state: 'live',
    // Measurement times arrive out of order: the published snapshot must be the newest one.
    measuredAt: new Date(base + ((i * 37) % 100) * 100),
    receivedAt: new Date(),
    transmissionId: `w-${i}`,
    payload: { i },
  });

  const results = await Promise.allSettled([
    ...Array.from({ length: 100 }, (_, i) => writer.write([row(i)])),
    writer.write([row(1000), row(1001, 'NOWHR')]), // a station that does not exist: this request fails alone
  ]);
  t.equal(results.filter((r) => r.status === 'fulfilled').length, 100, 'every good request was stored');
  t.equal(results[100]!.status, 'rejected', 'the bad one failed');
  const [history] = await sql`SELECT count(*)::int AS n FROM signal_history`;
  t.equal(history!.n, 100, 'the failing request left nothing behind');
  t.notOk((await sql`SELECT 1 FROM signal_history WHERE transmission_id = 'w-1000'`).length, 'not even its valid row');
  const [published] = await sql`SELECT measured_at, payload FROM published_signals WHERE hrs_id = 'BERLA'`;
  const newest = Math.max(...Array.from({ length: 100 }, (_, i) => base + ((i * 37) % 100) * 100));
  t.equal(published!.measured_at.getTime(), newest, 'the published snapshot is the newest measurement');
  const [latest] = await sql`SELECT count(*)::int AS n FROM signal_latest`;
  t.equal(latest!.n, 1, 'one latest row per originator, station and category');
});
