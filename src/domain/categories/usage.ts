import { z } from 'zod';
import { NULL_WHEN_UNKNOWN, entityId, sectionTimes } from '../export-v2/section-fields.js';
import { choice, entry, envelopeShape, list, nozzleReference } from '../import-v2/fields.js';
import { BEYOND_SCHEMA, EXACTLY_ONE_REFERENCE } from '../import-v2/formats.js';
import { resolveNozzles } from '../import-v2/rules.js';
import { USAGE_STATUSES } from '../vocabulary.js';
import { entriesOf, type CategoryDefinition } from './definition.js';

/** Usage: per nozzle whether it is free, in use or reserved. */

const usageSchema = entry({
  ...envelopeShape,
  nozzles: list(
    entry({
      ...nozzleReference,
      usage_status: choice(USAGE_STATUSES).meta({
        description:
          '`free`: idle, ready; `in-use`: dispensing; `reserved`: reserved for a known incoming vehicle. ' +
          'When a multi-nozzle dispenser cannot serve two vehicles at once, the blocked sibling nozzles are reported as `in-use`.',
      }),
    }).meta({ description: 'One nozzle, or one dispenser standing for each of its nozzles.', ...EXACTLY_ONE_REFERENCE }),
  ).meta({ description: 'Non-empty. Each transmission replaces the previous usage state of the station.' }),
}).meta({
  title: 'Usage transmission',
  description: `Usage of the nozzles of one station (no \`station\` object). ${BEYOND_SCHEMA}`,
  examples: [
    {
      hrs: 'BERLA',
      datetime: '2026-11-22T10:00:00+01:00',
      transmission_id: 'run-42',
      nozzles: [
        { id: 'N1', usage_status: 'in-use' },
        { id: 'N2', usage_status: 'free' },
      ],
    },
    { hrs: 'BERLA', datetime: '2026-11-22T09:00:00Z', nozzles: [{ dispenser_id: 'D1', usage_status: 'reserved' }] },
  ],
});

const usageSectionSchema = z
  .strictObject({
    ...sectionTimes,
    nozzles: z.array(
      z.strictObject({
        id: entityId('nozzle', 'N1'),
        usage_status: z.enum(USAGE_STATUSES).meta({
          description: '`free`: idle, ready; `in-use`: dispensing (or blocked by a sibling nozzle); `reserved`: reserved for a known incoming vehicle.',
        }),
      }),
    ),
  })
  .meta({ title: 'Usage section', description: 'The last live usage reading.' });

interface UsageData {
  nozzles: { usage_status: string }[];
}

/** The usage snapshot: one entry per nozzle, the dispenser shorthand expanded. */
function usagePayload(data: UsageData, covered: Map<number, string[]>) {
  return {
    nozzles: data.nozzles.flatMap((entry, index) => covered.get(index)!.map((id) => ({ id, usage_status: entry.usage_status }))),
  };
}

export const usage = {
  name: 'usage',
  sectionKey: 'usage',
  label: 'Usage',
  freshness: { stale: 'staleAfterMs', unknown: 'unknownAfterMs' },
  transmission: usageSchema,
  check(input, errors, station, data) {
    const covered = resolveNozzles(input, errors, station);
    return data !== undefined && errors.empty ? usagePayload(data as UsageData, covered) : {};
  },
  section: {
    schema: usageSectionSchema,
    component: 'UsageSection',
    nullWhen: NULL_WHEN_UNKNOWN,
    example: {
      datetime: '2026-11-22T10:00:00.000Z',
      received_datetime: '2026-11-22T10:00:01.180Z',
      freshness: 'fresh',
      nozzles: [
        { id: 'N1', usage_status: 'in-use' },
        { id: 'N2', usage_status: 'free' },
      ],
    },
  },
  build(payload, layout, times) {
    return {
      ...times,
      nozzles: entriesOf(payload, 'nozzles')
        .filter((n) => layout?.nozzles.has(String(n.id)) === true)
        .map((n) => ({ id: n.id, usage_status: n.usage_status })),
    };
  },
  docs: {
    component: 'UsageTransmission',
    operationId: 'postUsage',
    summary: 'Send usage signals',
    examples: [
      ['by_nozzle', 'Per nozzle'],
      ['by_dispenser', 'Dispenser shorthand: the state of each of its nozzles'],
    ],
    rules:
      '- Each nozzle entry carries exactly one of `id` or `dispenser_id`, as for availability.\n' +
      '- `usage_status` is `free`, `in-use` or `reserved`; blocked sibling nozzles of a dispenser that cannot serve two ' +
      'vehicles at once are reported as `in-use`.',
  },
} satisfies CategoryDefinition<'usage', 'usage'>;
