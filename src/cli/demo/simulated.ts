import type { StationEntry } from '../../domain/station-entry.js';
import type { demoFixture } from './fixture.js';

type Station = ReturnType<typeof demoFixture>['stations'][number];
type Layout = Station['layout'];
type Nozzle = Layout['dispensers'][number]['nozzles'][number];

/**
 * The stations the demo's simulated originator reports, as the registry has them now: the demo file's
 * stations that still exist, each with its confirmed layout (nozzles, dispensers, storages, products) as
 * edited since, so an edited layout is reported as it is and never refused for a nozzle it no longer
 * has. What the registry in memory does not hold (a tank's capacity, a product's pressure stage, a
 * nozzle's connector) comes from the demo file where the id is the same, otherwise from a plain default.
 */
export function simulatedStations(fixture: readonly Station[], station: (hrsId: string) => StationEntry | undefined): Station[] {
  return fixture.flatMap((s) => {
    const entry = station(s.hrs_id);
    if (!entry) return [];
    const layout = entry.layout;
    if (!layout) return [{ ...s, layout: { dispensers: [], storages: [], products: [] } }];
    const known = new Map(s.layout.dispensers.flatMap((d) => d.nozzles.map((n) => [n.external_id, n] as const)));
    const dispensers = [...layout.dispensers].map(([id, nozzles]) => ({
      external_id: id,
      is_certified: true,
      nozzles: nozzles.map((n): Nozzle => ({
        ...(known.get(n) ?? { external_id: n, connector_type: 'H70', vehicle_side: 'left', is_certified: true }),
        fuelling_options: layout.nozzles.get(n)?.fuellingOptions ?? [],
      })),
    }));
    const storages = [...layout.storages].map((id) => ({
      external_id: id,
      nominal_capacity_kg: s.layout.storages.find((t) => t.external_id === id)?.nominal_capacity_kg ?? 500,
      dispenser_external_ids: dispensers.map((d) => d.external_id),
    }));
    const products = [...layout.products].map((id) => ({
      ...(s.layout.products.find((p) => p.external_id === id) ?? { external_id: id, pressure_stage: /350/.test(id) ? 350 : 700, green_hydrogen_share: null }),
      nozzle_external_ids: [],
    }));
    return [{ ...s, layout: { dispensers, storages, products } }];
  });
}
