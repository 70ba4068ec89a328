import uWS from 'uWebSockets.js';
import postgres from 'postgres';
import { storeTransmissions } from '/work/main/db/queries/signals.js';
const sql = postgres('postgres://postgres@127.0.0.1:5432/xperf', { max: 4 });
await sql`CREATE TABLE IF NOT EXISTS floor (id bigint generated always as identity primary key, h text, m timestamptz, p jsonb)`;
let queue: { rows: any[]; done: () => void }[] = [];
let running = 0;
async function drain() {
  running++;
  while (queue.length) {
    const batch = queue.splice(0, queue.length);
    if (mode === 'hist') { const doc = JSON.stringify(batch.flatMap((b) => b.rows).map((r) => ({ o: 'mon-1', h: r.h, c: 'availability', m: new Date().toISOString(), r: new Date().toISOString(), i: null, p: r.p })));
      await sql`INSERT INTO signal_history (hrs_id, category, originator_id, measured_at, received_at, transmission_id, payload) SELECT h, c, o, m, r, i, p FROM jsonb_to_recordset(${doc}::text::jsonb) AS (o text, h text, c text, m timestamptz, r timestamptz, i text, p jsonb)`; }
    else if (mode === 'store') await storeTransmissions(sql as any, batch.flatMap((b) => b.rows).map((r) => ({ originatorId: 'mon-1', hrsId: r.h, category: 'availability', state: 'live', measuredAt: new Date(), receivedAt: new Date(), transmissionId: null, payload: r.p })));
    else {
    const doc = JSON.stringify(batch.flatMap((b) => b.rows));
    await sql`INSERT INTO floor (h, m, p) SELECT h, m, p FROM jsonb_to_recordset(${doc}::text::jsonb) AS (h text, m timestamptz, p jsonb)`;
    }
    for (const b of batch) b.done();
  }
  running--;
}
const mode = process.argv[2] ?? 'db';
uWS.App().get('/', (res) => { res.end('Hello World!'); }).post('/', (res) => {
  let aborted = false;
  res.onAborted(() => { aborted = true; });
  const chunks: Buffer[] = [];
  res.onData((ab, last) => {
    chunks.push(Buffer.from(ab.slice(0)));
    if (!last) return;
    const body = JSON.parse(Buffer.concat(chunks).toString());
    const rows = body.map((t: any) => ({ h: t.hrs, m: new Date().toISOString(), p: t }));
    if (mode === 'nodb') { res.cork(() => res.writeStatus('204 No Content').end()); return; }
    queue.push({ rows, done: () => { if (!aborted) res.cork(() => res.writeStatus('204 No Content').end()); } });
    if (running < 2) void drain();
  });
}).listen('127.0.0.1', 9911, (s) => { if (!s) process.exit(1); console.log('listening', mode); });
