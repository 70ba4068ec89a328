import { z } from 'zod';
import { repeatedValues } from '../lists.js';
import { boundedString } from '../text.js';
import { HRS_ID_PATTERN } from '../vocabulary.js';

/**
 * The bodies of the portal's webhook API (`/portal/v1/webhooks`, src/api/portal/webhooks.ts) as zod
 * schemas: what an owner sends (a new subscription, a change) and what the API answers (a
 * subscription, its secret once, its deliveries). The API parses requests with them and the portal
 * document is generated from them; the tests check real answers against them.
 */

/** The kinds of change a subscription may want, with the change log topic each is delivered from. */
export const WEBHOOK_KINDS = ['station_status', 'fuelling_options', 'station_records', 'events'] as const;
export type WebhookKind = (typeof WEBHOOK_KINDS)[number];

/** Subscriptions an account may have that are not unsubscribed. */
export const MAX_WEBHOOKS = 5;
/** Stations one subscription may name. */
export const MAX_WEBHOOK_STATIONS = 1000;
/** Characters of a description. */
export const MAX_WEBHOOK_DESCRIPTION = 200;
/** Deliveries shown (and kept) per subscription. */
export const MAX_DELIVERIES_SHOWN = 100;


const url = boundedString(2000).meta({
  description:
    'Where the messages are POSTed: an `https://` URL whose host resolves to public addresses only (plain `http://` only to a loopback ' +
    'address, where the platform allows it for development). No user name, password or fragment.',
  examples: ['https://receiver.example/hrs/webhook'],
});

const kinds = z
  .array(z.enum(WEBHOOK_KINDS, { error: `must be one of ${WEBHOOK_KINDS.join(', ')}` }))
  .min(1, 'must name at least one kind')
  .superRefine((values, ctx) => {
    const twice = repeatedValues(values);
    if (twice.length > 0) ctx.addIssue({ code: 'custom', message: `names ${twice.join(', ')} more than once` });
  })
  .meta({
    uniqueItems: true,
    description:
      'The changes wanted: `station_status` (`status.changed`, a station\'s status of one category), `fuelling_options` ' +
      '(`fuelling_option.changed`, the five-state status of one fuelling option), `station_records` (`station.created`, ' +
      '`station.changed`, `station.deleted`), `events` (`event.created`, `event.changed`, `event.ended`, `event.deleted`).',
    examples: [['station_status', 'events']],
  });

const hrsIds = z
  .array(boundedString(5, 'must be exactly five uppercase letters (^[A-Z]{5}$)').regex(HRS_ID_PATTERN, 'must be exactly five uppercase letters (^[A-Z]{5}$)'))
  .min(1, 'must name at least one station (null: every station)')
  .max(MAX_WEBHOOK_STATIONS, `must name at most ${MAX_WEBHOOK_STATIONS} stations`)
  .superRefine((values, ctx) => {
    const twice = repeatedValues(values);
    if (twice.length > 0) ctx.addIssue({ code: 'custom', message: `names ${twice.join(', ')} more than once` });
  })
  .meta({ uniqueItems: true })
  .nullable()
  .meta({ description: `Only these stations (at most ${MAX_WEBHOOK_STATIONS}, each one the platform has); null or left out: every station.`, examples: [['BERLA']] });

const longitude = z.number().min(-180, 'must be a longitude from -180 to 180').max(180, 'must be a longitude from -180 to 180');
const latitude = z.number().min(-90, 'must be a latitude from -90 to 90').max(90, 'must be a latitude from -90 to 90');

const bbox = z
  .tuple([longitude, latitude, longitude, latitude], { error: 'must be four numbers: [minLon, minLat, maxLon, maxLat]' })
  .superRefine(([minLon, minLat, maxLon, maxLat], ctx) => {
    if (!(minLon < maxLon)) ctx.addIssue({ code: 'custom', message: 'minLon must be less than maxLon' });
    if (!(minLat < maxLat)) ctx.addIssue({ code: 'custom', message: 'minLat must be less than maxLat' });
  })
  .nullable()
  .meta({
    description:
      'Only stations inside this box, `[minLon, minLat, maxLon, maxLat]` (WGS 84 degrees); a station without coordinates never ' +
      'matches, and `station.deleted` always passes (its place is gone). Null or left out: anywhere.',
    examples: [[13.0, 52.3, 13.8, 52.7]],
  });

const description = boundedString(MAX_WEBHOOK_DESCRIPTION)
  .meta({ description: 'A note for the owner; empty by default.', examples: ['Fleet dashboard, Berlin'] });

/** `POST /portal/v1/webhooks`. */
export const newWebhookSchema = z
  .strictObject({ url, kinds, hrs_ids: hrsIds.optional(), bbox: bbox.optional(), description: description.optional() })
  .meta({
    title: 'New webhook subscription',
    description: `A subscription of the signed-in account (at most ${MAX_WEBHOOKS} that are not unsubscribed).`,
    examples: [
      { url: 'https://receiver.example/hrs/webhook', kinds: ['station_status', 'fuelling_options'] },
      { url: 'https://receiver.example/hrs/berlin', kinds: ['events'], bbox: [13.0, 52.3, 13.8, 52.7], description: 'Berlin events' },
    ],
  });

/** `PATCH /portal/v1/webhooks/{id}`. */
export const webhookPatchSchema = z
  .strictObject({
    url: url.optional(),
    kinds: kinds.optional(),
    hrs_ids: hrsIds.optional(),
    bbox: bbox.optional(),
    description: description.optional(),
    state: z.literal('active', { error: 'must be "active" (re-enables a disabled subscription)' }).optional().meta({
      description: '`active` re-enables a disabled subscription: its failures are forgotten and delivery resumes where it stopped.',
    }),
  })
  .refine((patch) => Object.keys(patch).length > 0, { message: 'must change at least one field' })
  .meta({
    title: 'Webhook subscription change',
    description: 'The fields to change; those left out stay as they are.',
    examples: [{ kinds: ['station_status'], hrs_ids: ['BERLA', 'HAMBG'] }, { state: 'active' }],
  });

const instant = () => z.iso.datetime({ offset: true });
const at = '2027-03-01T12:00:00.000Z';
const SECRET_PATTERN = /^whsec_[A-Za-z0-9+/]{32}$/;
const EXAMPLE_SECRET = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw';

const subscriptionExample = {
  id: 'wh_3k9v2m7q1x8c5t4b6n0p',
  url: 'https://receiver.example/hrs/webhook',
  description: '',
  kinds: ['station_status', 'fuelling_options'],
  hrs_ids: null,
  bbox: null,
  state: 'active',
  created_at: at,
  disabled_at: null,
  disabled_reason: null,
  failing_since: null,
  last_delivery_at: null,
  secret_rotated_at: null,
  previous_secret_valid_until: null,
};

/** A subscription as its owner sees it (never its secret). */
export const webhookSchema = z
  .strictObject({
    id: z.string().regex(/^wh_[a-z0-9]{16,40}$/),
    url: z.string(),
    description: z.string(),
    kinds: z.array(z.enum(WEBHOOK_KINDS)),
    hrs_ids: z.array(z.string()).nullable(),
    bbox: z.array(z.number()).length(4).nullable(),
    state: z.enum(['active', 'disabled', 'unsubscribed']).meta({
      description:
        '`active`: delivered; `disabled`: delivery failed for too long (re-enable it with `PATCH` `{"state": "active"}`); ' +
        '`unsubscribed`: the receiver answered 410 Gone.',
    }),
    created_at: instant(),
    disabled_at: instant().nullable(),
    disabled_reason: z.string().nullable(),
    failing_since: instant().nullable().meta({ description: 'When the delivery now pending first failed; null: not failing.' }),
    last_delivery_at: instant().nullable(),
    secret_rotated_at: instant().nullable(),
    previous_secret_valid_until: instant().nullable().meta({ description: 'Until when messages carry the previous secret\'s signature too (after a rotation).' }),
  })
  .meta({ title: 'Webhook subscription', description: 'A webhook subscription of the account.', examples: [subscriptionExample] });


export const webhookListSchema = z
  .strictObject({ webhooks: z.array(webhookSchema) })
  .meta({ title: 'Webhook subscriptions', description: 'Every subscription of the account, oldest first.', examples: [{ webhooks: [subscriptionExample] }] });

const secret = z.string().regex(SECRET_PATTERN).meta({
  description:
    'The signing secret, **shown this once** (Standard Webhooks form: `whsec_` and base64 of 24 random bytes). Give it to the ' +
    'receiver to verify `webhook-signature`; it is stored encrypted and cannot be shown again (rotate it for a new one).',
  examples: [EXAMPLE_SECRET],
});

export const createdWebhookSchema = webhookSchema
  .extend({ secret })
  .meta({ title: 'Created webhook subscription', description: 'The subscription and its signing secret (only here, only now).', examples: [{ ...subscriptionExample, secret: EXAMPLE_SECRET }] });

export const rotatedSecretSchema = z
  .strictObject({
    secret,
    previous_secret_valid_until: instant().meta({ description: 'Until then every message carries the previous secret\'s signature too.' }),
  })
  .meta({ title: 'Rotated secret', description: 'The new secret, shown once.', examples: [{ secret: EXAMPLE_SECRET, previous_secret_valid_until: '2027-03-02T12:00:00.000Z' }] });

export const pingAcceptedSchema = z
  .strictObject({ message_id: z.string().regex(/^msg_wh_[a-z0-9]+_ping_\d+$/).meta({ description: 'The ping\'s `webhook-id`, as its delivery shows it.' }) })
  .meta({ title: 'Ping accepted', description: 'The ping is queued; its delivery shows in the deliveries.', examples: [{ message_id: 'msg_wh_3k9v2m7q1x8c5t4b6n0p_ping_1' }] });

export const deliverySchema = z
  .strictObject({
    message_id: z.string().meta({ description: 'The message\'s `webhook-id` (the same for every attempt of the message).' }),
    kind: z.enum(['changes', 'ping']),
    changes: z.number().int().min(0).meta({ description: 'Changes the message held (0 for a ping).' }),
    attempt: z.number().int().min(1),
    status_code: z.number().int().nullable().meta({ description: 'The receiver\'s HTTP status; null: no answer (see `error`).' }),
    error: z.string().nullable(),
    latency_ms: z.number().int().nullable(),
    at: instant(),
  })
  .meta({ title: 'Delivery', description: 'One delivery attempt.' });

export const deliveryListSchema = z
  .strictObject({ deliveries: z.array(deliverySchema).max(MAX_DELIVERIES_SHOWN) })
  .meta({
    title: 'Deliveries',
    description: `The subscription's last ${MAX_DELIVERIES_SHOWN} delivery attempts, newest first.`,
    examples: [{ deliveries: [{ message_id: 'msg_wh_3k9v2m7q1x8c5t4b6n0p_41_57', kind: 'changes', changes: 17, attempt: 1, status_code: 204, error: null, latency_ms: 83, at }] }],
  });
