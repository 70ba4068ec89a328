import { Agent, request } from 'node:http';
import { Webhook } from 'standardwebhooks';
import type { Sql } from '../../../db/connect.js';
import { changesBody, writtenChange, type ChangeRow, type WrittenChange } from '../../../src/domain/webhooks/messages.js';
import { newWebhookSecret } from '../../../src/domain/webhooks/secrets.js';
import { deliveryHeaders, signatures, signingKey } from '../../../workers/webhooks/send.js';

/**
 * The floors of a webhook message's cost, in this process with nothing else: forming the body of so
 * many changes (the newest status rows the platform recorded, each change written as JSON once, as the
 * worker keeps them), signing it (HMAC-SHA256 by Node's crypto, as the worker signs) and, for
 * `messageFloor`, verifying it as the receiver does (standardwebhooks); for `sendFloor`, POSTing it
 * to a receiver over kept connections as a bare node:http client does. No PostgreSQL, no Redis.
 * Each is the least of several batches after a warm-up: a floor is what the work costs at its best.
 */

const BASE_URL = 'http://127.0.0.1';
/** Batches measured; the floor is the least. */
const BATCHES = 5;

/** Each change's JSON, as the worker writes it, of the newest `changes` status rows recorded: what the paced floor (./webhook-paced-floor.ts) sends. */
export async function floorChanges(sql: Sql, changes: number): Promise<string[]> {
  return (await newestRows(sql, changes)).map((row) => writtenChange(row, BASE_URL).json);
}

async function newestRows(sql: Sql, changes: number): Promise<ChangeRow[]> {
  return sql<ChangeRow[]>`
    SELECT seq::text, topic, hrs_id, change, at, payload FROM change_log WHERE topic = 'status' ORDER BY seq DESC LIMIT ${changes}`;
}

/** The least CPU per round over BATCHES batches of `rounds` (after one batch of warm-up), in µs. */
async function least(rounds: number, once: (i: number) => void | Promise<void>, batch?: (n: number, first: number) => Promise<void>): Promise<number> {
  const run = batch ?? (async (n: number, first: number) => {
    for (let i = 0; i < n; i++) await once(first + i);
  });
  await run(rounds, 0);
  let best = Infinity;
  for (let b = 1; b <= BATCHES; b++) {
    const start = process.cpuUsage();
    await run(rounds, b * rounds);
    const used = process.cpuUsage(start);
    best = Math.min(best, (used.user + used.system) / rounds);
  }
  return best;
}

/**
 * Forming a message of `changesPerMessage` changes and signing it; with `verify`, verifying it as the
 * receiver does too. `verify` false: the sender's part before HTTP.
 */
export async function messageFloor(sql: Sql, changesPerMessage = 100, rounds = 300, verify = true): Promise<{ micros: number; bytes: number }> {
  const rows = await newestRows(sql, changesPerMessage);
  if (rows.length === 0) return { micros: Number.NaN, bytes: 0 };
  const secret = newWebhookSecret();
  const verifier = new Webhook(secret);
  const keys = [signingKey(secret)];
  let bytes = 0;
  const written = rows.map((row) => writtenChange(row, BASE_URL));
  const micros = await least(rounds, (i) => {
    const at = new Date();
    const body = changesBody('wh_floor', written, at);
    const id = `msg_floor_${i}`;
    const signature = signatures(keys, id, at, body);
    if (verify) verifier.verify(body, { 'webhook-id': id, 'webhook-timestamp': String(Math.floor(at.getTime() / 1000)), 'webhook-signature': signature });
    bytes = Buffer.byteLength(body);
  });
  return { micros, bytes };
}

/**
 * Forming, signing and sending: each message of `changesPerMessage` changes formed and signed as in
 * messageFloor and POSTed to `url` with the worker's headers, `inFlight` at a time over kept
 * connections (node:http's Agent), its answer read; this process's CPU per message. The receiver's
 * CPU is its own.
 */
export async function sendFloor(sql: Sql, changesPerMessage: number, url: string, rounds = 2000, inFlight = 16): Promise<{ micros: number; bytes: number }> {
  const rows = await newestRows(sql, changesPerMessage);
  if (rows.length === 0) return { micros: Number.NaN, bytes: 0 };
  const keys = [signingKey(newWebhookSecret())];
  const agent = new Agent({ keepAlive: true, maxFreeSockets: 64 });
  const target = new URL(url);
  const written = rows.map((row) => writtenChange(row, BASE_URL));
  let bytes = 0;
  const post = async (i: number) => void ({ bytes } = await postFloorMessage(target, agent, keys, written, `msg_floor_${i}`));
  try {
    const micros = await least(rounds, post, async (n, first) => {
      let next = 0;
      await Promise.all(Array.from({ length: inFlight }, async () => {
        while (next < n) await post(first + next++);
      }));
    });
    return { micros, bytes };
  } finally {
    agent.destroy();
  }
}

/**
 * One floor message: formed from the written changes, signed with the worker's headers and POSTed to
 * `target` over `agent`, its answer read. Resolves with the answer's status and the body's size once
 * the answer ends; rejects when the request fails.
 */
export function postFloorMessage(
  target: URL,
  agent: Agent,
  keys: readonly Buffer[],
  changes: readonly Pick<WrittenChange, 'json'>[],
  id: string,
): Promise<{ status: number | undefined; bytes: number }> {
  return new Promise((resolve, reject) => {
    const at = new Date();
    const payload = Buffer.from(changesBody('wh_floor', changes, at), 'utf8');
    const req = request(target, { method: 'POST', headers: deliveryHeaders(keys, id, at, payload), agent }, (res) => {
      res.resume();
      res.on('end', () => resolve({ status: res.statusCode, bytes: payload.length }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(payload);
  });
}
