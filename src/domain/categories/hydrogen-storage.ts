import { z } from 'zod';
import { NULL_WHEN, entityId, sectionTimes } from '../export-v2/section-fields.js';
import { bool, decimalString, entry, envelopeShape, list, presence, text } from '../import-v2/fields.js';
import { AT_LEAST_ONE_STORAGE_VALUE, BEYOND_SCHEMA, KG_MAXIMUM, KG_PATTERN } from '../import-v2/formats.js';
import { checkStorages, resolveIds } from '../import-v2/rules.js';
import { entriesOf, type CategoryDefinition } from './definition.js';

/**
 * Hydrogen storage: per storage whether it runs low. The inventory in kg is stored, never published:
 * the section carries only the flag.
 */

const storageSchema = entry({
  ...envelopeShape,
  storages: list(
    entry({
      id: text().meta({ description: 'Registered storage identifier.', examples: ['S1'] }),
      remaining_kg: z
        .union([decimalString(), z.number()], { error: presence(() => 'A valid number is required.') })
        .nullish()
        .meta({
          description:
            'Current usable inventory in kg: a decimal string or a number, up to 8 digits with 2 decimals, not negative. ' +
            'Confidential: stored, never exported; data users see only the derived `low_h2_storage`.',
          examples: ['240.50', 87],
          pattern: KG_PATTERN,
          minimum: 0,
          maximum: KG_MAXIMUM,
          multipleOf: 0.01,
        }),
      low_h2_storage: bool()
        .nullish()
        .meta({
          description:
            'True when the inventory is below the threshold (100 kg per storage; exactly 100 kg is not low). ' +
            'Derived from `remaining_kg` when omitted; when both are sent they must agree.',
        }),
    }).meta({ description: 'One storage: at least one of `remaining_kg` / `low_h2_storage`.', ...AT_LEAST_ONE_STORAGE_VALUE }),
  ).meta({ description: 'Non-empty.' }),
}).meta({
  title: 'Hydrogen storage transmission',
  description:
    'Hydrogen storage of one station, per registered storage. A `remaining_kg` and a `low_h2_storage` that contradict ' +
    'each other at the 100 kg threshold are rejected. ' + BEYOND_SCHEMA,
  examples: [
    {
      hrs: 'BERLA',
      datetime: '2026-11-22T10:00:00+01:00',
      storages: [{ id: 'S1', remaining_kg: '240.50' }],
    },
    { hrs: 'BERLA', datetime: '2026-11-22T09:00:00Z', storages: [{ id: 'S1', low_h2_storage: true }] },
  ],
});

const hydrogenStorageSectionSchema = z
  .strictObject({
    ...sectionTimes,
    storages: z.array(
      z.strictObject({
        id: entityId('storage', 'S1'),
        low_h2_storage: z.boolean().meta({ description: 'Inventory below 100 kg (exactly 100 kg is not low). The inventory itself is confidential.' }),
      }),
    ),
  })
  .meta({ title: 'Hydrogen storage section', description: 'The last live hydrogen storage reading: flags only, no numeric inventory.' });

/** Stored as sent or derived at receipt; derived here from the number for snapshots that lack the flag. */
export function lowStorage(storage: Record<string, unknown>): boolean {
  if (typeof storage.low_h2_storage === 'boolean') return storage.low_h2_storage;
  return storage.remaining_kg !== null && storage.remaining_kg !== undefined && Number(storage.remaining_kg) < 100;
}

export const hydrogenStorage = {
  name: 'hydrogen-storage',
  sectionKey: 'hydrogen_storage',
  label: 'Hydrogen storage',
  freshness: { stale: 'staleAfterMs', unknown: null },
  transmission: storageSchema,
  check(input, errors, station) {
    resolveIds(input, errors, station, 'storages');
    return { storages: checkStorages(input, errors) };
  },
  section: {
    schema: hydrogenStorageSectionSchema,
    component: 'HydrogenStorageSection',
    nullWhen: NULL_WHEN,
    example: {
      datetime: '2026-11-22T09:58:00.000Z',
      received_datetime: '2026-11-22T09:58:00.950Z',
      freshness: 'fresh',
      storages: [{ id: 'S1', low_h2_storage: false }],
    },
  },
  build(payload, layout, times) {
    return {
      ...times,
      storages: entriesOf(payload, 'storages')
        .filter((s) => layout?.storages.has(String(s.id)) === true)
        .map((s) => ({ id: s.id, low_h2_storage: lowStorage(s) })),
    };
  },
  docs: {
    component: 'HydrogenStorageTransmission',
    operationId: 'postHydrogenStorage',
    summary: 'Send hydrogen storage signals',
    examples: [
      ['inventory', 'The inventory in kg (the platform derives the flag)'],
      ['flag_only', 'The low-storage flag only'],
    ],
    rules:
      '- Each storage entry carries at least one of `remaining_kg` and `low_h2_storage`.\n' +
      '- The threshold is 100 kg per storage (exactly 100 kg is not low); a `remaining_kg` and a `low_h2_storage` that ' +
      'contradict each other at the threshold are rejected.\n' +
      '- `remaining_kg` is confidential: data users only see the derived flag.',
  },
} satisfies CategoryDefinition<'hydrogen-storage', 'hydrogen_storage'>;
