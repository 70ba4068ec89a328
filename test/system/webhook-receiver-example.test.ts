/**
 * The webhook receiver of docs/sync.md (examples/webhook-receiver.mjs), run as a data user would run it,
 * against real deliveries: docs/sync.md holds the file's exact text; a subscription made over the
 * portal's API with its secret shown once; a station renamed through the registry writer reaches the
 * receiver's output, signed; a forged message is refused with 401; a message sent again under its
 * webhook-id is applied once.
 */
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import t from 'tap';
import { Webhook } from 'standardwebhooks';
import { baseFixture } from '../helpers/fixtures.js';
import { startTestPlatform } from '../helpers/platform.js';
import { signedIn } from '../helpers/portal.js';
import { until } from '../helpers/wait.js';
import { webhookKey, workersOf } from '../helpers/webhooks.js';

const EXAMPLE = new URL('../../examples/webhook-receiver.mjs', import.meta.url);

/** A free loopback port. */
function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

t.test('docs/sync.md shows the example file as it is', async (t) => {
  const page = readFileSync(new URL('../../docs/sync.md', import.meta.url), 'utf8');
  const example = readFileSync(EXAMPLE, 'utf8').trimEnd();
  t.ok(page.includes('```js\n' + example + '\n```'), 'the code block of "A receiver" is the file');
  t.ok(example.split('\n').length <= 22, `about 20 lines (${example.split('\n').length})`);
});

t.test('the example receiver verifies real deliveries and refuses forged ones', async (t) => {
  const p = await startTestPlatform(t, { fixture: baseFixture(), env: { WEBHOOK_SECRET_KEY: webhookKey(), WEBHOOK_ALLOW_LOOPBACK: 'true' } });
  const port = await freePort();
  const alice = await signedIn(p, 'alice');
  const created = await alice.call('POST', '/portal/v1/webhooks', { url: `http://127.0.0.1:${port}/hrs`, kinds: ['station_records'], description: 'the example receiver' });
  t.equal(created.status, 201, 'subscribed over the portal API');
  const secret = String(created.body.secret);
  t.match(secret, /^whsec_/, 'the secret, shown once');

  const child = spawn(process.execPath, [EXAMPLE.pathname], { env: { ...process.env, WEBHOOK_SECRET: secret, PORT: String(port) }, stdio: ['ignore', 'pipe', 'pipe'] });
  t.teardown(() => void child.kill());
  let out = '';
  child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString('utf8')));
  child.stderr.on('data', (chunk: Buffer) => (out += chunk.toString('utf8')));
  const post = (body: string, headers: Record<string, string>) =>
    fetch(`http://127.0.0.1:${port}/hrs`, { method: 'POST', headers: { 'Content-Type': 'application/json', ...headers }, body }).then((r) => r.status);
  await until('the receiver listens', async () => ((await post('{}', {}).catch(() => 0)) === 401 ? true : undefined));

  workersOf(t, p);
  const renamed = baseFixture();
  (renamed.stations[0] as Record<string, unknown>).name = 'Berlin Airport (renamed)';
  await p.load(renamed);
  // Waited for: a first line printed; asserted: that it is the change.
  const first = await until('a line printed', () => (out.includes('\n') ? out.split('\n')[0] : undefined), 30_000);
  t.match(first, /^\d+ station\.changed BERLA$/, `printed: ${first}`);

  // Signed with another secret, or not at all: 401, nothing applied.
  const forged = new Webhook(`whsec_${Buffer.alloc(24, 1).toString('base64')}`);
  const body = JSON.stringify({ type: 'hrs.changes', timestamp: new Date().toISOString(), data: { subscription_id: created.body.id, changes: [{ seq: '1', type: 'station.deleted', hrs_id: 'FAKED', at: new Date().toISOString() }] } });
  const at = new Date();
  t.equal(await post(body, { 'webhook-id': 'msg_forged', 'webhook-timestamp': String(Math.floor(at.getTime() / 1000)), 'webhook-signature': forged.sign('msg_forged', at, body) }), 401, 'a forged signature: 401');
  t.equal(await post(body, {}), 401, 'no signature: 401');

  // The same message twice (a retry): applied once.
  const real = new Webhook(secret);
  const again = JSON.stringify({ type: 'hrs.changes', timestamp: new Date().toISOString(), data: { subscription_id: created.body.id, changes: [{ seq: '99', type: 'station.changed', hrs_id: 'TWICE', at: new Date().toISOString() }] } });
  const headers = { 'webhook-id': 'msg_twice', 'webhook-timestamp': String(Math.floor(at.getTime() / 1000)), 'webhook-signature': real.sign('msg_twice', at, again) };
  t.equal(await post(again, headers), 204, 'a signed message: 204');
  t.equal(await post(again, headers), 204, 'sent again: 204');
  await until('printed', () => (out.includes('TWICE') ? true : undefined));
  t.equal(out.split('\n').filter((line) => line.includes('TWICE')).length, 1, 'applied once');
  t.notOk(out.includes('FAKED'), 'nothing of the forged message applied');
});
