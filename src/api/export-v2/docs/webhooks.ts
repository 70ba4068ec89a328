import { Webhook } from 'standardwebhooks';
import {
  changesMessageSchema,
  eventChangeSchema,
  fuellingOptionChangeSchema,
  MAX_CHANGES_PER_MESSAGE,
  pingMessageSchema,
  stationChangeSchema,
  statusChangeSchema,
} from '../../../domain/webhooks/payloads.js';
import { examplesOf, schemaRef, type DocContext, type DocDefinition } from '../../../http/openapi.js';

/**
 * The webhooks of export v2 (OpenAPI 3.1 `webhooks`): the messages the platform POSTs to the endpoints
 * its data users subscribe in the portal (`/portal/v1/webhooks`), their Standard Webhooks headers, how a
 * receiver verifies them, and the delivery rules. The example signature is computed here, with the
 * `standardwebhooks` library and the example secret, over the example body: a receiver can check its
 * own verification against it.
 */

/** A secret in the form the portal shows it: an example, never a real one. */
export const EXAMPLE_WEBHOOK_SECRET = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw';
const EXAMPLE_ID = 'msg_wh_3k9v2m7q1x8c5t4b6n0p_4711_4715';
const EXAMPLE_TIME = new Date('2027-03-01T12:00:01Z');

/** The component schemas the webhooks refer to. */
export const webhookPayloadSchemas = () => ({
  WebhookChangesMessage: changesMessageSchema,
  WebhookPingMessage: pingMessageSchema,
  StationChange: stationChangeSchema,
  EventChange: eventChangeSchema,
  StatusChange: statusChangeSchema,
  FuellingOptionChange: fuellingOptionChangeSchema,
});

/** The example message's headers, its signature made as the platform makes it. */
export function exampleDelivery(): { body: string; headers: Record<string, string> } {
  const body = JSON.stringify(examplesOf(changesMessageSchema).example!.value);
  const signature = new Webhook(EXAMPLE_WEBHOOK_SECRET).sign(EXAMPLE_ID, EXAMPLE_TIME, body);
  return { body, headers: { 'webhook-id': EXAMPLE_ID, 'webhook-timestamp': String(EXAMPLE_TIME.getTime() / 1000), 'webhook-signature': signature } };
}

const RECEIVER = [
  "import { createServer } from 'node:http';",
  "import { Webhook } from 'standardwebhooks';",
  '',
  'const webhook = new Webhook(process.env.WEBHOOK_SECRET); // whsec_… as the portal showed it',
  'const seen = new Set(); // a message sent again keeps its webhook-id: apply it once',
  'createServer(async (req, res) => {',
  '  const chunks = [];',
  '  for await (const chunk of req) chunks.push(chunk);',
  '  let message;',
  '  try {',
  "    message = webhook.verify(Buffer.concat(chunks).toString('utf8'), req.headers); // signature, timestamp within 5 min",
  '  } catch {',
  '    return res.writeHead(401).end();',
  '  }',
  "  if (!seen.has(req.headers['webhook-id'])) {",
  "    seen.add(req.headers['webhook-id']);",
  '    for (const change of message.data.changes ?? []) console.log(change.seq, change.type, change.hrs_id);',
  '  }',
  '  res.writeHead(204).end();',
  '}).listen(9000);',
].join('\n');

/** The guide's section on webhooks (delivery rules as configured). */
export function webhooksDescription(config: DocContext['config']): string {
  const seconds = Math.round(config.webhookTimeoutMs / 1000);
  const hours = (ms: number) => (ms % 3_600_000 === 0 ? `${ms / 3_600_000} hours` : `${Math.round(ms / 1000)} seconds`);
  return [
    '## Webhooks',
    'Instead of polling, an account can have the platform POST changes to its own HTTPS endpoint: subscribe on the portal page ' +
      'or with the portal API (`/portal/v1/webhooks`, see its [reference](/portal/v1/doc/)), choosing the kinds of change ' +
      '(`station_status`: `status.changed`; `fuelling_options`: `fuelling_option.changed`; `station_records`: `station.created`, ' +
      '`station.changed`, `station.deleted`; `events`: `event.created`, `event.changed`, `event.ended`, `event.deleted`), and ' +
      'optionally a list of stations or a bounding box. The messages are described under `webhooks` below (`hrs.changes`, ' +
      '`webhook.ping`); a subscription gets the changes made from its creation on.',
    `**Delivery.** Changes are sent in the order they were made (\`seq\`), at most ${MAX_CHANGES_PER_MESSAGE} per message, one ` +
      'message at a time per subscription, so they arrive in order per subscription and station. Any `2xx` answer within ' +
      `${seconds} seconds delivers the message; anything else is retried with exponential backoff and jitter. Delivery is at ` +
      'least once: a retried message keeps its `webhook-id` (`msg_<subscription>_<first seq>_<last seq>`), so a receiver ' +
      `de-duplicates by it. After ${hours(config.webhookGiveUpAfterMs)} of failures the subscription is disabled and its owner ` +
      'told by e-mail; it is re-enabled in the portal and resumes where it stopped. A receiver that answers `410 Gone` is ' +
      'unsubscribed. Answer fast and do the work afterwards.',
    '**Signatures** ([Standard Webhooks](https://www.standardwebhooks.com/)). Every message carries `webhook-id`, ' +
      '`webhook-timestamp` (Unix seconds of this attempt) and `webhook-signature`: `v1,` and the base64 HMAC-SHA256 of ' +
      '`<webhook-id>.<webhook-timestamp>.<body>` keyed with the secret\'s bytes (the base64 after `whsec_`). Verify it over the ' +
      'raw body, before parsing it, and refuse a timestamp more than 5 minutes away from your clock (the `standardwebhooks` ' +
      'libraries, for many languages, do both). After the secret is rotated in the portal, messages carry two signatures ' +
      `separated by a space, the new secret's first, for ${hours(config.webhookSecretOverlapMs)}: accept a message when one of ` +
      'them verifies. The secret is shown only when it is made; the platform keeps it encrypted.',
    `A receiver in Node.js (\`npm install standardwebhooks\`):\n\n\`\`\`js\n${RECEIVER}\n\`\`\``,
  ].join('\n\n');
}

const header = (name: string, description: string, schema: Record<string, unknown>, example: string) => ({
  name,
  in: 'header',
  required: true,
  description,
  schema: { type: 'string', ...schema },
  example,
});

/** The Standard Webhooks headers of every message, with the example's values. */
function messageHeaders(idPattern: string, example: Record<string, string>, version: string) {
  return [
    header('webhook-id', 'The message\'s id: the same in every attempt of the message (de-duplicate by it).', { pattern: idPattern }, example['webhook-id']!),
    header('webhook-timestamp', 'When this attempt was signed, in Unix seconds.', { pattern: '^\\d+$' }, example['webhook-timestamp']!),
    header(
      'webhook-signature',
      '`v1,<base64 HMAC-SHA256>` of `<webhook-id>.<webhook-timestamp>.<body>`; two of them, separated by a space, during a secret\'s rotation (the new secret\'s first).',
      { pattern: '^v1,[A-Za-z0-9+/=]+( v1,[A-Za-z0-9+/=]+)?$' },
      example['webhook-signature']!,
    ),
    header('User-Agent', 'The platform and its version.', { pattern: '^hrs-signal-platform-webhooks/' }, `hrs-signal-platform-webhooks/${version}`),
  ];
}

const answers = () => ({
  '2XX': { description: 'Received: the message is delivered (the body of the answer is ignored).' },
  '410': { description: 'Gone: the subscription is ended (`unsubscribed`), nothing more is sent.' },
  default: { description: 'Any other answer, or none in time: the message is sent again later, with the same `webhook-id`.' },
});

/** The document's `webhooks`: the changes message and the ping. */
export function webhooks(version: string): NonNullable<DocDefinition['webhooks']> {
  const example = exampleDelivery();
  const ping = new Webhook(EXAMPLE_WEBHOOK_SECRET);
  const pingBody = JSON.stringify(examplesOf(pingMessageSchema).example!.value);
  const pingId = 'msg_wh_3k9v2m7q1x8c5t4b6n0p_ping_1';
  const pingHeaders = {
    'webhook-id': pingId,
    'webhook-timestamp': String(EXAMPLE_TIME.getTime() / 1000),
    'webhook-signature': ping.sign(pingId, EXAMPLE_TIME, pingBody),
  };
  return {
    'hrs.changes': {
      post: {
        operationId: 'hrsChanges',
        summary: 'Changes, as they happen',
        description:
          `Up to ${MAX_CHANGES_PER_MESSAGE} changes the subscription wants, in \`seq\` order. The example's signature is real: ` +
          `its secret is \`${EXAMPLE_WEBHOOK_SECRET}\`, its body the example below serialised without spaces.`,
        parameters: messageHeaders('^msg_wh_[a-z0-9]+_\\d+_\\d+$', example.headers, version),
        requestBody: { required: true, content: { 'application/json': { schema: schemaRef('WebhookChangesMessage'), examples: examplesOf(changesMessageSchema, ['changes']) } } },
        responses: answers(),
      },
    },
    'webhook.ping': {
      post: {
        operationId: 'webhookPing',
        summary: 'A test message',
        description: 'Sent when the subscription\'s owner asks for a test (the portal\'s ping): nothing changed.',
        parameters: messageHeaders('^msg_wh_[a-z0-9]+_ping_\\d+$', pingHeaders, version),
        requestBody: { required: true, content: { 'application/json': { schema: schemaRef('WebhookPingMessage'), examples: examplesOf(pingMessageSchema, ['ping']) } } },
        responses: answers(),
      },
    },
  };
}
