/**
 * The sending floor at the worker's pace, for the `webhooks` scenario, in a process of its own so its
 * CPU is its own: messages of the same changes formed (changesBody, from each change's JSON written
 * once, as the worker keeps them), signed (the worker's headers, Node's HMAC) and POSTed by a bare
 * node:http client over kept connections, as many a second as the worker delivered, on a fixed
 * schedule: every BURST_MS the messages due by then, at most `inFlight` waiting for their answers (the
 * rest go as answers come). Nothing else: no PostgreSQL, no claims, no records. The batch floor
 * (./webhook-floor.ts `sendFloor`) sends back to back on a quiet machine; this one meets what the
 * worker meets, a process woken for each burst on a machine busy with the same load.
 *
 * Message from the parent: `send` {url, changes: each change's JSON, perSecond, seconds, inFlight} →
 * `sent` {messages, failed, cpuMicros (this process's CPU from the first send to the last answer), bytes,
 * seconds}.
 */
import { Agent } from 'node:http';
import { newWebhookSecret } from '../../../src/domain/webhooks/secrets.js';
import { signingKey } from '../../../workers/webhooks/send.js';
import { next, onStop, ready, send } from './ipc.js';
import { postFloorMessage } from './webhook-floor.js';

/** How often the due messages go: about as many at a time as one of the worker's claims takes. */
const BURST_MS = 10;

const agent = new Agent({ keepAlive: true, maxFreeSockets: 64 });
onStop(() => agent.destroy());
const keys = [signingKey(newWebhookSecret())];

async function paced(url: URL, jsons: string[], perSecond: number, seconds: number, inFlight: number) {
  const changes = jsons.map((json) => ({ json }));
  const total = Math.max(1, Math.round(perSecond * seconds));
  let sent = 0;
  let answered = 0;
  let failed = 0;
  let waiting = 0;
  let bytes = 0;
  let due = 0;
  const started = performance.now();
  const cpuBefore = process.cpuUsage();
  let finish = () => {};
  const done = new Promise<void>((resolve) => (finish = resolve));
  const post = (i: number) => {
    waiting++;
    postFloorMessage(url, agent, keys, changes, `msg_paced_${i}`).then(
      (answer) => {
        bytes = answer.bytes;
        settle(answer.status !== undefined && answer.status < 300);
      },
      () => settle(false),
    );
  };
  const settle = (ok: boolean) => {
    waiting--;
    answered++;
    if (!ok) failed++;
    pump();
    if (answered === total) finish();
  };
  const pump = () => {
    while (sent < due && waiting < inFlight) post(sent++);
  };
  const tick = () => {
    due = Math.min(total, Math.floor(((performance.now() - started) / 1000) * perSecond) + 1);
    pump();
    if (due < total) setTimeout(tick, BURST_MS);
  };
  tick();
  await done;
  const cpu = process.cpuUsage(cpuBefore);
  return { messages: answered, failed, cpuMicros: cpu.user + cpu.system, bytes, seconds: (performance.now() - started) / 1000 };
}

ready();
for (;;) {
  const m = await next('send');
  const result = await paced(new URL(String(m.url)), m.changes as string[], Number(m.perSecond), Number(m.seconds), Number(m.inFlight));
  send({ type: 'sent', ...result });
}
