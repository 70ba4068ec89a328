import { z } from 'zod';
import { NULL_WHEN, entityId, price, sectionTimes } from '../export-v2/section-fields.js';
import { choice, decimalString, entry, envelopeShape, list, text } from '../import-v2/fields.js';
import { BEYOND_SCHEMA, PRICE_PATTERN } from '../import-v2/formats.js';
import { checkProducts, resolveIds } from '../import-v2/rules.js';
import { CURRENCIES } from '../vocabulary.js';
import { entriesOf, type CategoryDefinition } from './definition.js';

/**
 * Pricing: the price of each registered product. Sent daily, so it turns stale after its own, longer
 * deadline; a section whose priced products are all unregistered is not published.
 */

const pricingSchema = entry({
  ...envelopeShape,
  products: list(
    entry({
      id: text().meta({
        description: 'Registered product identifier (see `products` in the export station record). Duplicates are rejected.',
        examples: ['P700'],
      }),
      gross_price: decimalString().meta({
        description: 'VAT-inclusive retail price per kg, as a JSON string: up to 8 digits with 3 decimals, above zero.',
        examples: ['13.850'],
        pattern: PRICE_PATTERN,
      }),
      net_price: decimalString()
        .nullish()
        .meta({
          description: 'Pre-VAT price per kg (professional consumers), as a JSON string; same format, above zero, not above `gross_price`.',
          examples: ['11.639'],
          pattern: PRICE_PATTERN,
        }),
      currency: choice(CURRENCIES)
        .nullish()
        .meta({
          description: 'ISO 4217 currency; `EUR` when left out or `null`. All products of one transmission use the same currency.',
          default: 'EUR',
        }),
    }).meta({ description: 'The price of one product (one price per station and product, not per nozzle).' }),
  ).meta({ description: 'Non-empty.' }),
}).meta({
  title: 'Pricing transmission',
  description:
    'Prices of the registered products of one station. A zero price is never valid; `net_price` must not exceed ' +
    '`gross_price`; all products use one currency (mixed currencies are rejected). ' + BEYOND_SCHEMA,
  examples: [
    {
      hrs: 'BERLA',
      datetime: '2026-11-22T10:00:00+01:00',
      products: [
        { id: 'P700', gross_price: '13.850', net_price: '11.639', currency: 'EUR' },
        { id: 'P350', gross_price: '11.500' },
      ],
    },
  ],
});

const pricingSectionSchema = z
  .strictObject({
    ...sectionTimes,
    products: z
      .array(
        z.strictObject({
          id: entityId('product', 'P700'),
          gross_price: price('VAT-inclusive retail price.'),
          net_price: price('Pre-VAT price; null when the source did not send one.').nullable(),
          currency: z.enum(CURRENCIES).meta({ description: 'ISO 4217 currency.' }),
        }),
      )
      .min(1),
  })
  .meta({
    title: 'Pricing section',
    description: 'The last live prices, for products currently registered only (the section is null when none of them is).',
  });

export const pricing = {
  name: 'pricing',
  sectionKey: 'pricing',
  label: 'Pricing',
  freshness: { stale: 'pricingStaleAfterMs', unknown: null },
  transmission: pricingSchema,
  check(input, errors, station) {
    resolveIds(input, errors, station, 'products');
    return { products: checkProducts(input, errors) };
  },
  section: {
    schema: pricingSectionSchema,
    component: 'PricingSection',
    nullWhen: `${NULL_WHEN}, or none of the priced products is registered any more`,
    example: {
      datetime: '2026-11-22T06:00:00.000Z',
      received_datetime: '2026-11-22T06:00:00.402Z',
      freshness: 'stale',
      products: [
        { id: 'P700', gross_price: '13.850', net_price: null, currency: 'EUR' },
        { id: 'P350', gross_price: '11.500', net_price: '9.664', currency: 'EUR' },
      ],
    },
  },
  build(payload, layout, times) {
    const products = entriesOf(payload, 'products')
      .filter((p) => layout?.products.has(String(p.id)) === true)
      .map((p) => ({ id: p.id, gross_price: p.gross_price, net_price: p.net_price ?? null, currency: p.currency }));
    return products.length === 0 ? null : { ...times, products };
  },
  docs: {
    component: 'PricingTransmission',
    operationId: 'postPricing',
    summary: 'Send pricing signals',
    examples: [['prices', 'Gross and net prices of two products']],
    rules:
      '- `id` is a product the station has registered (the `products` of the export station record); one price per ' +
      'station and product.\n' +
      '- Prices are JSON strings, up to 8 digits with 3 decimals, above zero; `net_price` must not exceed `gross_price`.\n' +
      '- All products of one transmission use the same currency (default `EUR`).\n' +
      '- Prices of products the operator removes stop being published at once.',
  },
} satisfies CategoryDefinition<'pricing', 'pricing'>;
