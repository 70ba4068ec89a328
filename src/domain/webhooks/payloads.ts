import { z } from 'zod';
import { DEFINITIONS } from '../categories/index.js';
import { eventSchema } from '../export-v2/stations.js';
import { summaryReasonSchema, summaryStateSchema } from '../status/summary.js';
import { FUELLING_OPTIONS } from '../vocabulary.js';

/**
 * The webhook messages as zod schemas: `hrs.changes` (up to 100 changes of the change log, in `seq`
 * order) and `webhook.ping`, in the Standard Webhooks envelope (`type`, `timestamp`, `data`). The
 * export v2 document describes them under `webhooks` (OpenAPI 3.1) from these schemas; its tests check
 * its examples against them. A change's common fields (`seq`, `type`, `hrs_id`, `at`) come first, then
 * what its type adds: the record's URL, the event, a status section, a fuelling option's five states.
 */

/** Changes one message holds at most. */
export const MAX_CHANGES_PER_MESSAGE = 100;

const instant = (description: string) => z.iso.datetime({ offset: true }).meta({ description });

const common = {
  seq: z.string().regex(/^\d+$/).meta({
    description: 'The change\'s place in the platform\'s change log (a decimal string; compare as integers): increasing, never reused.',
    examples: ['4711'],
  }),
  hrs_id: z.string().meta({ examples: ['BERLA'] }),
  at: instant('When the change was recorded (RFC 3339, UTC).'),
};

export const stationChangeSchema = z
  .union([
    z.strictObject({
      ...common,
      type: z.enum(['station.created', 'station.changed']),
      record_url: z.string().meta({ description: 'The station\'s record in export v2 (`GET /v2/hrs/{hrs_id}`), to read it as it is now.', examples: ['https://hrs.example/v2/hrs/BERLA'] }),
    }),
    z.strictObject({ ...common, type: z.literal('station.deleted') }),
  ])
  .meta({
    title: 'Station change',
    description:
      'A station was created, its exported static content changed (its fields, layout, events or photo), or it was deleted (or is no longer published). Kind `station_records`.',
  });

export const eventChangeSchema = z
  .strictObject({
    ...common,
    type: z.enum(['event.created', 'event.changed', 'event.ended', 'event.deleted']),
    event: z.union([eventSchema, z.strictObject({ id: z.string() })]).meta({ description: 'The event as `GET /v2/hrs/{hrs_id}/events` lists it; for `event.deleted` only its `id`.' }),
  })
  .meta({ title: 'Event change', description: 'A station event was created, changed, ended (its end passed) or deleted. Kind `events`.' });

export const statusChangeSchema = z
  .union(
    DEFINITIONS.map((d) =>
      z.strictObject({
        ...common,
        type: z.literal('status.changed'),
        category: z.literal(d.name),
        freshness: z.enum(['fresh', 'stale', 'unknown']).nullable().meta({ description: 'The section\'s freshness now; null: nothing is published.' }),
        status: d.section.schema.nullable().meta({
          description: `The \`${d.sectionKey}\` section exactly as \`GET /v2/hrs/{hrs_id}/status\` shows it; null: ${d.section.nullWhen}.`,
        }),
      }),
    ) as unknown as [z.ZodObject, z.ZodObject, ...z.ZodObject[]],
  )
  .meta({
    title: 'Status change',
    description: 'A station\'s status of one category changed: a new reading, its freshness, or what its layout lets it publish. Kind `station_status`.',
  });

export const fuellingOptionChangeSchema = z
  .strictObject({
    ...common,
    type: z.literal('fuelling_option.changed'),
    fuelling_option: z.enum(FUELLING_OPTIONS),
    status: summaryStateSchema,
    reason: summaryReasonSchema,
    datetime: z.iso.datetime({ offset: true }).nullable().meta({ description: 'The measurement time of the reading the entry was computed from; null when there is none.' }),
  })
  .meta({
    title: 'Fuelling option change',
    description: 'The five-state status of one fuelling option changed (as one entry of `GET /v1.1/hrs/status`, `fuel_type` named `fuelling_option`). Kind `fuelling_options`.',
  });

const subscriptionId = z.string().regex(/^wh_[a-z0-9]{16,40}$/).meta({ description: 'The subscription the message is for.', examples: ['wh_3k9v2m7q1x8c5t4b6n0p'] });

const changesExample = {
  type: 'hrs.changes',
  timestamp: '2027-03-01T12:00:00.900Z',
  data: {
    subscription_id: 'wh_3k9v2m7q1x8c5t4b6n0p',
    changes: [
      { seq: '4711', type: 'station.changed', hrs_id: 'BERLA', at: '2027-03-01T11:59:58.120Z', record_url: 'https://hrs.example/v2/hrs/BERLA' },
      {
        seq: '4712', type: 'event.created', hrs_id: 'BERLA', at: '2027-03-01T11:59:59.004Z',
        event: { id: 'ev-7', kind: 'maintenance', starts_at: '2027-03-02T08:00:00Z', ends_at: '2027-03-02T12:00:00Z', description: 'Compressor service' },
      },
      {
        seq: '4713', type: 'status.changed', hrs_id: 'BERLA', at: '2027-03-01T12:00:00.310Z', category: 'availability', freshness: 'fresh',
        status: DEFINITIONS[0].section.example,
      },
      { seq: '4714', type: 'fuelling_option.changed', hrs_id: 'BERLA', at: '2027-03-01T12:00:00.310Z', fuelling_option: '700ld', status: 'AVAILABLE', reason: 'reported_available', datetime: '2027-03-01T12:00:00Z' },
      { seq: '4715', type: 'station.deleted', hrs_id: 'OLDST', at: '2027-03-01T12:00:00.900Z' },
    ],
  },
};

export const changesMessageSchema = z
  .strictObject({
    type: z.literal('hrs.changes'),
    timestamp: instant('When the newest change of the message was recorded (its last change\'s `at`, RFC 3339): a message sent again is the same, byte for byte. When this attempt was signed is `webhook-timestamp`.'),
    data: z.strictObject({
      subscription_id: subscriptionId,
      changes: z
        .array(z.union([stationChangeSchema, eventChangeSchema, statusChangeSchema, fuellingOptionChangeSchema]))
        .min(1)
        .max(MAX_CHANGES_PER_MESSAGE)
        .meta({ description: `The changes, in \`seq\` order, at most ${MAX_CHANGES_PER_MESSAGE}.` }),
    }),
  })
  .meta({ title: 'Changes message', description: 'Changes the subscription wants, in the order they were made.', examples: [changesExample] });

export const pingMessageSchema = z
  .strictObject({
    type: z.literal('webhook.ping'),
    timestamp: instant('When the ping was made (RFC 3339).'),
    data: z.strictObject({ subscription_id: subscriptionId }),
  })
  .meta({
    title: 'Ping message',
    description: 'A test message, sent when the owner asks for one in the portal.',
    examples: [{ type: 'webhook.ping', timestamp: '2027-03-01T12:00:00.000Z', data: { subscription_id: 'wh_3k9v2m7q1x8c5t4b6n0p' } }],
  });
