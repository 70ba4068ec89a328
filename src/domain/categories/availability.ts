import { z } from 'zod';
import { NULL_WHEN_UNKNOWN, entityId, sectionTimes } from '../export-v2/section-fields.js';
import { bool, entry, envelopeShape, list, nozzleReference } from '../import-v2/fields.js';
import { BEYOND_SCHEMA, EXACTLY_ONE_REFERENCE } from '../import-v2/formats.js';
import { deriveFuellingOptions, resolveNozzles } from '../import-v2/rules.js';
import type { StationEntry } from '../station-entry.js';
import { entriesOf, type CategoryDefinition } from './definition.js';

/** Availability: per nozzle whether it can fuel, and the whole-station flags. */

export const availabilitySchema = entry({
  ...envelopeShape,
  nozzles: list(
    entry({
      ...nozzleReference,
      available: bool().meta({ description: 'Whether the nozzle (or every nozzle of the dispenser) can fuel now. `null` is rejected.' }),
    }).meta({ description: 'One nozzle, or one dispenser standing for each of its nozzles.', ...EXACTLY_ONE_REFERENCE }),
  ).meta({ description: 'Non-empty. Nozzles left out have no reported state afterwards (the transmission is a full snapshot).' }),
  station: entry({
    maintenance: bool().meta({
      description: 'The station is in maintenance: treated as out of service regardless of the nozzle flags.',
    }),
    limitedly_available: bool().meta({ description: 'The station is limitedly available: overrides the per-nozzle picture downstream.' }),
  }).meta({ description: 'Whole-station flags.' }),
}).meta({
  title: 'Availability transmission',
  description:
    'Availability of one station: per nozzle (or per dispenser) whether it can fuel, and the whole-station flags. ' +
    'The platform derives the per-fuelling-option status from the nozzles and the layout; a transmission from which ' +
    'no fuelling option can be derived is rejected. ' + BEYOND_SCHEMA,
  examples: [
    {
      hrs: 'BERLA',
      datetime: '2026-11-22T10:00:00+01:00',
      nozzles: [
        { id: 'N1', available: true },
        { id: 'N2', available: false },
      ],
      station: { maintenance: false, limitedly_available: false },
    },
  ],
});

const availabilitySectionSchema = z
  .strictObject({
    ...sectionTimes,
    station: z
      .strictObject({
        maintenance: z.boolean().meta({ description: 'In maintenance: out of service whatever the nozzle flags say.' }),
        limitedly_available: z.boolean().meta({ description: 'Limitedly available: overrides the per-nozzle picture.' }),
      })
      .meta({ description: 'Whole-station flags; `true` in either overrides the per-nozzle picture.' }),
    nozzles: z.array(
      z.strictObject({
        id: entityId('nozzle', 'N1'),
        available: z.boolean(),
      }),
    ),
    fuelling_options: z
      .array(
        z.strictObject({
          fuelling_option: z.enum(['700ld', '350ld', '700hd', '350hd']),
          available: z.boolean().nullable().meta({ description: '`null`: the reading did not say (unknown).' }),
        }),
      )
      .optional()
      .meta({
        description:
          'Present only when the reading came from the legacy import (v1 or v1.1), which reports per fuelling option: then `nozzles` is empty (per-nozzle availability cannot be derived from per-option data) and this lists every option the station provides.',
      }),
  })
  .meta({
    title: 'Availability section',
    description:
      'The last live availability reading, from import v2 or the legacy import, whichever is newest by `datetime`; nozzles no longer in the confirmed layout are left out.',
  });

interface AvailabilityData {
  nozzles: { available: boolean }[];
  station: { maintenance: boolean; limitedly_available: boolean };
}

/**
 * The availability snapshot: one entry per nozzle, and per fuelling option whether any nozzle offering
 * it reported available (the station flags override this downstream, as the spec says).
 */
function availabilityPayload(data: AvailabilityData, covered: Map<number, string[]>, station: StationEntry) {
  const nozzles = data.nozzles.flatMap((entry, index) => covered.get(index)!.map((id) => ({ id, available: entry.available })));
  const options: Record<string, boolean> = {};
  for (const { id, available } of nozzles) {
    for (const option of station.layout!.nozzles.get(id)!.fuellingOptions) options[option] = options[option] === true || available;
  }
  return {
    station: { maintenance: data.station.maintenance, limitedly_available: data.station.limitedly_available },
    nozzles,
    fuelling_options: options,
  };
}

export const availability = {
  name: 'availability',
  sectionKey: 'availability',
  label: 'Availability',
  freshness: { stale: 'staleAfterMs', unknown: 'unknownAfterMs' },
  transmission: availabilitySchema,
  check(input, errors, station, data) {
    const covered = resolveNozzles(input, errors, station);
    deriveFuellingOptions(input, errors, station, covered);
    return data !== undefined && errors.empty ? availabilityPayload(data as AvailabilityData, covered, station!) : {};
  },
  section: {
    schema: availabilitySectionSchema,
    component: 'AvailabilitySection',
    nullWhen: NULL_WHEN_UNKNOWN,
    example: {
      datetime: '2026-11-22T10:00:00.000Z',
      received_datetime: '2026-11-22T10:00:01.214Z',
      freshness: 'fresh',
      station: { maintenance: false, limitedly_available: false },
      nozzles: [
        { id: 'N1', available: true },
        { id: 'N2', available: false },
      ],
    },
  },
  build(payload, layout, times) {
    const station = (payload.station ?? {}) as Record<string, unknown>;
    const section: Record<string, unknown> = {
      ...times,
      station: { maintenance: station.maintenance === true, limitedly_available: station.limitedly_available === true },
      nozzles: entriesOf(payload, 'nozzles')
        .filter((n) => layout?.nozzles.has(String(n.id)) === true)
        .map((n) => ({ id: n.id, available: n.available === true })),
    };
    // A legacy (v1, v1.1) reading reports per fuelling option, in canonical codes.
    if (Array.isArray(payload.fuelling_options)) {
      section.fuelling_options = entriesOf(payload, 'fuelling_options').map((o) => ({
        fuelling_option: o.fuelling_option,
        available: typeof o.available === 'boolean' ? o.available : null,
      }));
    }
    return section;
  },
  docs: {
    component: 'AvailabilityTransmission',
    operationId: 'postAvailability',
    summary: 'Send availability signals',
    examples: [['by_nozzle', 'Per nozzle']],
    rules:
      '- Each nozzle entry carries exactly one of `id` (a nozzle) or `dispenser_id` (every nozzle of that dispenser); ' +
      'both kinds may be mixed if they do not overlap.\n' +
      '- The platform derives the per-fuelling-option status from the nozzles and the layout; a transmission from which ' +
      'no fuelling option can be derived is rejected.\n' +
      '- `station.maintenance: true` or `station.limitedly_available: true` override the per-nozzle picture downstream.',
  },
} satisfies CategoryDefinition<'availability', 'availability'>;
