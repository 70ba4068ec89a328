import type { OptionSummary } from '../status/summary.js';

/**
 * What a driver sees of one station, per fuelling option: the public map's station detail
 * (`GET /map/v1/stations/{hrs_id}`). It starts from the five-state value the map's feed already
 * computed for each option (export v1.1's summary: status, reason, the reading's time) and adds what
 * the option costs and holds, read through the station's layout: the gross price and the green
 * hydrogen share of the product its nozzles dispense. Nothing record-level is carried over: no
 * dispenser, nozzle, storage or product id, no net price (those stay with export v2's personal tokens).
 *
 * Which product an option takes:
 * 1. the products one of whose nozzles offers the option;
 * 2. none: the products of the option's pressure stage that are mapped to no nozzle of the layout (the
 *    spec lets a product's nozzle list be empty until the operator maps it), so an unmapped product's
 *    price still reaches the driver;
 * of those, the one with the lowest published gross price (the first in the layout's order on a tie),
 * or, with none priced, the first. Its price and green share are the option's.
 *
 * Pure: the caller hands in the layout of the station's export v2 record and its published pricing.
 */

/** What is read of an export v2 record's layout (null sections: no confirmed layout). */
export interface DriverLayout {
  dispensers?: { nozzles: { external_id: string; is_effectively_certified: boolean; fuelling_options: readonly string[] }[] }[] | null;
  products?: { external_id: string; pressure_stage: number; green_hydrogen_share: number | null; nozzle_external_ids: readonly string[] }[] | null;
}

/** What is read of the published pricing section. */
export interface DriverPricing {
  datetime: string;
  products: { id: string; gross_price: string; currency: string }[];
}

/** One fuelling option as a driver sees it: the feed's entry, its price and green share. */
export interface DriverOption extends OptionSummary {
  /** The VAT-inclusive price per kg (decimal string); null when none is published. */
  gross_price: string | null;
  currency: string | null;
  /** When the price was measured (ISO 8601); null with no price. */
  price_datetime: string | null;
  /** The product's share of renewable hydrogen in per cent; null until the operator declares it. */
  green_hydrogen_share: number | null;
  /** The nozzles offering the option and how many are certified; null without a confirmed layout. */
  certification: NozzleCertification | null;
}

/** How many nozzles of the confirmed layout are certified (nozzle and dispenser both). */
export interface NozzleCertification {
  nozzles: number;
  certified: number;
}

type Product = NonNullable<DriverLayout['products']>[number];

/** `700ld` → 700: the pressure stage an option's code starts with. */
const stageOf = (option: string): number => Number.parseInt(option, 10);

/** The products that serve each option, by the rules above. */
function productsByOption(layout: DriverLayout, options: readonly string[]): Map<string, Product[]> {
  const optionsOf = new Map<string, readonly string[]>();
  for (const dispenser of layout.dispensers ?? []) for (const nozzle of dispenser.nozzles) optionsOf.set(nozzle.external_id, nozzle.fuelling_options);
  const products = layout.products ?? [];
  const served = (product: Product) => new Set(product.nozzle_external_ids.flatMap((id) => optionsOf.get(id) ?? []));
  const serving = products.map((product) => ({ product, options: served(product) }));
  const unmapped = serving.filter((s) => !s.product.nozzle_external_ids.some((id) => optionsOf.has(id))).map((s) => s.product);
  return new Map(
    options.map((option) => {
      const mapped = serving.filter((s) => s.options.has(option)).map((s) => s.product);
      return [option, mapped.length > 0 ? mapped : unmapped.filter((p) => p.pressure_stage === stageOf(option))];
    }),
  );
}

/** Of an option's products, the cheapest priced one (the first on a tie), or the first when none is priced. */
function chosen(products: readonly Product[], prices: ReadonlyMap<string, DriverPricing['products'][number]>): Product | undefined {
  let best: Product | undefined;
  for (const product of products) {
    const price = prices.get(product.external_id);
    if (price === undefined) continue;
    if (best === undefined || Number(price.gross_price) < Number(prices.get(best.external_id)!.gross_price)) best = product;
  }
  return best ?? products[0];
}

/** Every option of the feed's entries (in their order), with its price and green share. */
export function driverOptions(entries: readonly OptionSummary[], layout: DriverLayout, pricing: DriverPricing | null): DriverOption[] {
  const byOption = productsByOption(layout, entries.map((e) => e.fuelling_option));
  const prices = new Map((pricing?.products ?? []).map((p) => [p.id, p]));
  return entries.map((entry) => {
    const product = chosen(byOption.get(entry.fuelling_option) ?? [], prices);
    const price = product === undefined ? undefined : prices.get(product.external_id);
    return {
      ...entry,
      gross_price: price?.gross_price ?? null,
      currency: price?.currency ?? null,
      price_datetime: price === undefined ? null : pricing!.datetime,
      green_hydrogen_share: product?.green_hydrogen_share ?? null,
      certification: nozzleCertification(layout, entry.fuelling_option),
    };
  });
}

/** The layout's nozzles (those offering `option`, when given) and how many of them are certified; null without a confirmed layout. */
export function nozzleCertification(layout: DriverLayout, option?: string): NozzleCertification | null {
  if (layout.dispensers == null) return null;
  const nozzles = layout.dispensers.flatMap((d) => d.nozzles).filter((n) => option === undefined || n.fuelling_options.includes(option));
  return { nozzles: nozzles.length, certified: nozzles.filter((n) => n.is_effectively_certified).length };
}
