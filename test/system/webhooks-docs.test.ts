/**
 * The export v2 document's `webhooks` (OpenAPI 3.1): the `hrs.changes` and `webhook.ping` messages,
 * every change type the contract names with its schema (status sections are those of
 * `GET /v2/hrs/{hrs_id}/status`), the Standard Webhooks headers, an example signature that really is
 * the HMAC of its example, and the guide's receiver, run here: it accepts a signed message (applied
 * once when sent again) and refuses one with a wrong signature.
 */
import { spawn } from 'node:child_process';
import { createHmac } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import t from 'tap';
import { Webhook } from 'standardwebhooks';
import { EXAMPLE_WEBHOOK_SECRET } from '../../src/api/export-v2/docs/webhooks.js';
import { CATEGORIES } from '../../src/domain/categories/index.js';
import { changesMessageSchema } from '../../src/domain/webhooks/payloads.js';
import { deref, documentAjv } from '../helpers/openapi.js';
import { freePort, startTestPlatform } from '../helpers/platform.js';
import { baseFixture } from '../helpers/fixtures.js';
import { until } from '../helpers/wait.js';

type Json = Record<string, any>;

const p = await startTestPlatform(t, { fixture: baseFixture() });
const document = (await (await fetch(`${p.url}/v2/doc/schema`)).json()) as Json;
const { check } = documentAjv(document);
const schemas = document.components.schemas as Record<string, Json>;

/** Every `type` value a change schema allows (its `const`s and `enum`s), through unions. */
function typesOf(schema: Json): string[] {
  const s = deref(document, schema);
  if (s.anyOf || s.oneOf) return (s.anyOf ?? s.oneOf).flatMap(typesOf);
  const type = s.properties?.type;
  return type ? (type.enum ?? [type.const]) : [];
}

t.test('webhooks: hrs.changes and webhook.ping, POSTed JSON, with their headers', async (t) => {
  t.match(document.openapi, /^3\.1\./);
  t.same(Object.keys(document.webhooks).sort(), ['hrs.changes', 'webhook.ping']);
  for (const [name, item] of Object.entries(document.webhooks as Record<string, Json>)) {
    t.same(Object.keys(item), ['post'], `${name}: a POST`);
    const op = item.post;
    t.same(op.parameters.map((h: Json) => [h.in, h.name]), [['header', 'webhook-id'], ['header', 'webhook-timestamp'], ['header', 'webhook-signature'], ['header', 'User-Agent']]);
    t.ok(op.requestBody.content['application/json'].schema.$ref, `${name}: its body schema`);
    t.ok(op.responses['2XX'] && op.responses['410'] && op.responses.default, `${name}: what answers mean`);
  }
  t.equal(document.webhooks['hrs.changes'].post.requestBody.content['application/json'].schema.$ref, '#/components/schemas/WebhookChangesMessage');
  t.equal(document.webhooks['webhook.ping'].post.requestBody.content['application/json'].schema.$ref, '#/components/schemas/WebhookPingMessage');
  const ua = document.webhooks['hrs.changes'].post.parameters.find((h: Json) => h.name === 'User-Agent');
  t.match(ua.example, /^hrs-signal-platform-webhooks\/\d+\.\d+\.\d+/);
});

t.test('every change type of the contract, each with its schema', async (t) => {
  const changes = schemas.WebhookChangesMessage!.properties.data.properties.changes;
  t.equal(changes.maxItems, 100, 'at most 100 changes per message');
  t.same([...new Set(typesOf(changes.items))].sort(), [
    'event.changed', 'event.created', 'event.deleted', 'event.ended', 'fuelling_option.changed',
    'station.changed', 'station.created', 'station.deleted', 'status.changed',
  ]);
  for (const name of ['StationChange', 'EventChange', 'StatusChange', 'FuellingOptionChange']) {
    const variants = schemas[name]!.anyOf ?? [schemas[name]];
    for (const variant of variants) t.same(variant.required.slice(0, 4).sort(), ['at', 'hrs_id', 'seq', 'type'], `${name}: the common fields`);
  }
  // Each category's status is the section GET /v2/hrs/{hrs_id}/status shows under its key.
  const statusProperties = schemas.StationStatus!.properties as Json;
  const variants = schemas.StatusChange!.anyOf as Json[];
  t.same(variants.map((v) => v.properties.category.const), [...CATEGORIES]);
  for (const variant of variants) {
    const sectionRef = (variant.properties.status.anyOf as Json[]).find((s) => s.$ref)?.$ref;
    const key = Object.keys(statusProperties).find((k) => JSON.stringify(statusProperties[k]).includes(`"${sectionRef}"`));
    t.ok(key, `${variant.properties.category.const}: the status section ${sectionRef} is the status object's`);
  }
  t.same(schemas.EventChange!.properties.event.anyOf[0], { $ref: '#/components/schemas/Event' }, 'an event as export v2 lists it');

  const example = deref(document, document.webhooks['hrs.changes'].post.requestBody.content['application/json'].examples.changes).value;
  t.equal(check(['components', 'schemas', 'WebhookChangesMessage'], example), null, 'the example fits');
  t.ok(changesMessageSchema.safeParse(example).success, 'and the zod schema');
  const tooMany = { ...example, data: { ...example.data, changes: Array.from({ length: 101 }, () => example.data.changes[0]) } };
  t.not(check(['components', 'schemas', 'WebhookChangesMessage'], tooMany), null, '101 changes are refused');
  const unknown = { ...example, data: { ...example.data, changes: [{ ...example.data.changes[0], type: 'station.moved' }] } };
  t.not(check(['components', 'schemas', 'WebhookChangesMessage'], unknown), null, 'an unknown type is refused');
});

t.test('the example signature is the HMAC-SHA256 of its example, by the example secret', async (t) => {
  const op = document.webhooks['hrs.changes'].post;
  const header = (name: string) => op.parameters.find((h: Json) => h.name === name).example as string;
  const body = JSON.stringify(deref(document, op.requestBody.content['application/json'].examples.changes).value);
  t.match(op.description, EXAMPLE_WEBHOOK_SECRET, 'the secret is given');
  const key = Buffer.from(EXAMPLE_WEBHOOK_SECRET.slice('whsec_'.length), 'base64');
  const expected = createHmac('sha256', key).update(`${header('webhook-id')}.${header('webhook-timestamp')}.${body}`).digest('base64');
  t.equal(header('webhook-signature'), `v1,${expected}`);
  t.equal(check(['webhooks', 'hrs.changes', 'post', 'parameters', 2, 'schema'], `v1,${expected} v1,${expected}`), null, 'two signatures fit the header');
  const ping = document.webhooks['webhook.ping'].post;
  const pingBody = JSON.stringify(deref(document, ping.requestBody.content['application/json'].examples.ping).value);
  const pingHeader = (name: string) => ping.parameters.find((h: Json) => h.name === name).example as string;
  t.equal(
    pingHeader('webhook-signature'),
    new Webhook(EXAMPLE_WEBHOOK_SECRET).sign(pingHeader('webhook-id'), new Date(Number(pingHeader('webhook-timestamp')) * 1000), pingBody),
  );
});

t.test('the guide: delivery rules as configured, and a receiver that works', async (t) => {
  const text = document.info.description as string;
  t.match(text, /## Webhooks/);
  t.match(text, /\/portal\/v1\/webhooks/);
  t.match(text, /After 24 hours of failures the subscription is disabled/);
  t.match(text, /`410 Gone` is unsubscribed/);
  t.match(text, /two signatures\s+separated by a space, the new secret's first, for 24 hours/);
  t.match(text, /within 10 seconds/);
  const code = /```js\n([\s\S]*?)\n```/.exec(text.slice(text.indexOf('## Webhooks')))?.[1];
  t.ok(code, 'the receiver');
  t.ok(code!.split('\n').length <= 20, 'in at most 20 lines');

  const port = await freePort();
  // In the project's folder, so it finds the standardwebhooks package as a reader's project would.
  const dir = await mkdtemp(join(process.cwd(), '.receiver-'));
  t.teardown(() => rm(dir, { recursive: true, force: true }));
  await writeFile(join(dir, 'receiver.mjs'), code!.replace('.listen(9000)', `.listen(${port})`));
  const child = spawn(process.execPath, [join(dir, 'receiver.mjs')], { env: { ...process.env, WEBHOOK_SECRET: EXAMPLE_WEBHOOK_SECRET }, stdio: ['ignore', 'pipe', 'pipe'] });
  t.teardown(() => void child.kill());
  let out = '';
  child.stdout.on('data', (chunk) => (out += chunk));
  child.stderr.on('data', (chunk) => (out += chunk));

  const body = JSON.stringify(deref(document, document.webhooks['hrs.changes'].post.requestBody.content['application/json'].examples.changes).value);
  const send = async (secret: string) => {
    const now = new Date();
    const headers = { 'webhook-id': 'msg_wh_test_1_5', 'webhook-timestamp': String(Math.floor(now.getTime() / 1000)), 'webhook-signature': new Webhook(secret).sign('msg_wh_test_1_5', now, body) };
    for (;;) {
      try {
        return (await fetch(`http://127.0.0.1:${port}/`, { method: 'POST', headers: { 'Content-Type': 'application/json', ...headers }, body })).status;
      } catch {
        await new Promise((r) => setTimeout(r, 100)); // still starting
      }
    }
  };
  t.equal(await send('whsec_' + Buffer.alloc(24, 7).toString('base64')), 401, 'another secret\'s signature: refused');
  t.equal(await send(EXAMPLE_WEBHOOK_SECRET), 204, 'signed with the secret: accepted');
  await until('the receiver\'s output', () => (out.includes('4713 status.changed') ? true : undefined), 10_000);
  t.match(out, /4711 station\.changed BERLA\n4712 event\.created BERLA\n4713 status\.changed BERLA/, 'and read, change by change');
  t.equal(await send(EXAMPLE_WEBHOOK_SECRET), 204, 'the same message again: accepted');
  await new Promise((resolve) => setTimeout(resolve, 300));
  t.equal(out.split('4711 station.changed BERLA').length - 1, 1, 'and applied once (its webhook-id seen)');
});
