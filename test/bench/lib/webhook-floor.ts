import { Webhook } from 'standardwebhooks';
import type { Sql } from '../../../db/connect.js';
import { changeOf, changesBody, type ChangeRow } from '../../../src/domain/webhooks/messages.js';
import { newWebhookSecret } from '../../../src/domain/webhooks/secrets.js';
import { signatures, signingKey } from '../../../workers/webhooks/send.js';

/**
 * The floor of a webhook message's cost, in this process with nothing else: forming the body of 100
 * changes (the newest status rows the platform recorded), signing it (HMAC-SHA256 by Node's crypto, as
 * the worker signs) and verifying it as the receiver does (standardwebhooks), no PostgreSQL, no Redis,
 * no HTTP. Whatever the delivery path does beyond
 * this is its overhead; this much every message costs the two ends at least. `verify` false: the
 * sender's part alone (forming and signing), what the delivery worker's CPU per message is held to.
 */
export async function messageFloor(sql: Sql, changesPerMessage = 100, rounds = 300, verify = true): Promise<{ micros: number; bytes: number }> {
  const rows = await sql<ChangeRow[]>`
    SELECT seq::text, topic, hrs_id, change, at, payload FROM change_log WHERE topic = 'status' ORDER BY seq DESC LIMIT ${changesPerMessage}`;
  if (rows.length === 0) return { micros: Number.NaN, bytes: 0 };
  const secret = newWebhookSecret();
  const signer = new Webhook(secret);
  const keys = [signingKey(secret)];
  let bytes = 0;
  const once = (i: number) => {
    const at = new Date();
    const body = changesBody('wh_floor', rows.map((row) => changeOf(row, 'http://127.0.0.1')), at);
    const id = `msg_floor_${i}`;
    const signature = signatures(keys, id, at, body);
    if (verify) signer.verify(body, { 'webhook-id': id, 'webhook-timestamp': String(Math.floor(at.getTime() / 1000)), 'webhook-signature': signature });
    bytes = Buffer.byteLength(body);
  };
  for (let i = 0; i < 50; i++) once(i); // warm
  const start = process.cpuUsage();
  for (let i = 0; i < rounds; i++) once(i);
  const used = process.cpuUsage(start);
  return { micros: (used.user + used.system) / rounds, bytes };
}
