/**
 * The start's floor (`scale`): what reading the rows a start needs costs, with nothing built from them.
 * A process of its own reads the registry's rows and every published reading with the platform's own
 * queries (db/queries/registry.ts `readRegistryRows`, db/queries/signals.ts `publishedSignalBatches`:
 * PostgreSQL's work, the bytes and postgres.js decoding them), one after the other as the start does,
 * and reports each read's milliseconds. The platform's registry and restore steps are these reads plus
 * building the registry's entries and the live status from them.
 */
import { connect } from '../../../db/connect.js';
import { readRegistryRows } from '../../../db/queries/registry.js';
import { publishedSignalBatches } from '../../../db/queries/signals.js';
import { ready } from './ipc.js';

const sql = connect(process.env.DATABASE_URL!, {});
await sql`SELECT 1`;
const reading = performance.now();
const rows = await readRegistryRows(sql);
const registryMs = performance.now() - reading;
let readings = 0;
const restoring = performance.now();
for await (const batch of publishedSignalBatches(sql)) readings += batch.length;
const readingsMs = performance.now() - restoring;
await sql.end({ timeout: 5 });
ready({ registryMs, stations: rows.stations.length, readingsMs, readings });
