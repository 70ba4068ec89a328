import { connect } from '/work/main/db/connect.js';
import { storeTransmissions } from '/work/main/db/queries/signals.js';
const sql = connect('postgres://postgres@127.0.0.1:5432/xperf');
await storeTransmissions(sql, [{ originatorId: 'mon-1', hrsId: 'BERLA', category: 'availability', state: 'live', measuredAt: new Date(), receivedAt: new Date(), transmissionId: null, payload: { a: 1 } }]);
console.log(await sql`select hrs_id, measured_at, payload from published_signals where hrs_id='BERLA'`);
console.log(await sql`select * from ROWS FROM (jsonb_to_recordset(${JSON.stringify([{o:'x',m:new Date().toISOString()}])}::jsonb) AS (o text, m timestamptz)) WITH ORDINALITY AS u(o, m, n)`);
await sql.end();
