/** Token values of the standard test fixture, one per generation. */
export const TOKENS = {
  import_v1: 'test-import-v1-token-0001',
  import_v2: 'test-import-v2-token-0001',
  export_v1: 'test-export-v1-token-0001',
  export_v2: 'test-export-v2-token-0001',
} as const;

export interface TokenInput {
  generation: string;
  originator?: string;
  user?: string;
  name?: string;
  value: string;
  expires_at?: string | null;
}

/** A small, complete registry: two stations (one with a draft), an originator, a user, four tokens. */
export function baseFixture() {
  return {
    operators: [{ id: 'h2-demo', name: 'H2 Demo GmbH', email: 'ops@h2-demo.example' }],
    stations: [
      {
        hrs_id: 'BERLA',
        operator: 'h2-demo',
        name: 'Berlin Airport',
        heavy_duty: false,
        opening_hours: '24/7',
        details: { city: 'Berlin', vehicle_types: ['M1'] },
        v1_fuel_types: ['700car', '350car'],
        layout: {
          dispensers: [
            {
              external_id: 'D1',
              is_certified: true,
              nozzles: [
                { external_id: 'N1', connector_type: 'H70', vehicle_side: 'left', is_certified: true, fuelling_options: ['700ld'] },
                { external_id: 'N2', connector_type: 'H35', vehicle_side: 'right', is_certified: false, fuelling_options: ['350ld'] },
              ],
            },
          ],
          storages: [{ external_id: 'S1', nominal_capacity_kg: 500, dispenser_external_ids: ['D1'] }],
          products: [
            { external_id: 'P700', pressure_stage: 700, green_hydrogen_share: null, nozzle_external_ids: ['N1'] },
            { external_id: 'P350', pressure_stage: 350, green_hydrogen_share: 50, nozzle_external_ids: ['N2'] },
          ],
        },
        draft_layout: null as unknown,
        // Upcoming for years: an event that has ended is left out of the records, and within the change
        // log's retention a sweep writes its `ended` row, which tests that count changes would see.
        events: [
          { id: 'ev-1', kind: 'maintenance', starts_at: '2036-12-01T08:00:00Z', ends_at: '2036-12-01T12:00:00Z', description: 'Compressor service' },
        ],
      },
      {
        hrs_id: 'HAMBG',
        operator: 'h2-demo',
        name: 'Hamburg Port',
        heavy_duty: true,
        draft_layout: { dispensers: [{ external_id: 'DX', is_certified: false, nozzles: [] }] },
      } as Record<string, unknown>,
    ],
    originators: [{ id: 'mon-1', name: 'Monitoring One', call_log_mode: 'errors' }],
    assignments: [
      { originator: 'mon-1', hrs_id: 'BERLA', signal_type: 'availability', state: 'live' },
      { originator: 'mon-1', hrs_id: 'BERLA', signal_type: 'pricing', state: 'testing' },
      { originator: 'mon-1', hrs_id: 'HAMBG', signal_type: 'usage', state: 'live' },
    ],
    users: [{ id: 'alice', email: 'alice@example.org' }],
    tokens: <TokenInput[]>[
      { generation: 'import_v2', originator: 'mon-1', value: TOKENS.import_v2 },
      { generation: 'import_v1', originator: 'mon-1', value: TOKENS.import_v1 },
      { generation: 'export_v2', user: 'alice', name: 'laptop', value: TOKENS.export_v2, expires_at: '2099-06-01T00:00:00Z' },
      { generation: 'export_v1', name: 'legacy-client', value: TOKENS.export_v1 },
    ],
  };
}

type AssignmentState = 'live' | 'testing' | 'inactive';

/**
 * mon-1 live for BERLA's availability, usage and hydrogen storage, `pricing` (live unless told) for
 * its pricing, and live for HAMBG's usage: the assignments the status and push tests start from.
 */
export function berlaAssignments(pricing: AssignmentState = 'live') {
  return [
    { originator: 'mon-1', hrs_id: 'BERLA', signal_type: 'availability', state: 'live' as AssignmentState },
    { originator: 'mon-1', hrs_id: 'BERLA', signal_type: 'usage', state: 'live' as AssignmentState },
    { originator: 'mon-1', hrs_id: 'BERLA', signal_type: 'hydrogen-storage', state: 'live' as AssignmentState },
    { originator: 'mon-1', hrs_id: 'BERLA', signal_type: 'pricing', state: pricing },
    { originator: 'mon-1', hrs_id: 'HAMBG', signal_type: 'usage', state: 'live' as AssignmentState },
  ];
}

/**
 * The base registry with a heavy-duty station for the legacy import: BERLA (700ld, 350ld; v1 700car,
 * 350car) and TRUCK (700ld, 700hd, 350hd; v1 700car, 350bus). Assignments for v1 are the caller's.
 */
export function legacyFixture() {
  const f = baseFixture();
  f.stations.push({
    hrs_id: 'TRUCK',
    operator: 'h2-demo',
    name: 'Truck Stop',
    heavy_duty: true,
    v1_fuel_types: ['700car', '350bus'],
    layout: {
      dispensers: [
        {
          external_id: 'D1',
          is_certified: true,
          nozzles: [
            { external_id: 'T1', connector_type: 'H70', vehicle_side: 'left', is_certified: true, fuelling_options: ['700ld'] },
            { external_id: 'T2', connector_type: 'H70', vehicle_side: 'right', is_certified: true, fuelling_options: ['700hd'] },
            { external_id: 'T3', connector_type: 'H35HF', vehicle_side: 'right', is_certified: true, fuelling_options: ['350hd'] },
          ],
        },
      ],
      storages: [],
      products: [],
    },
  } as Record<string, unknown>);
  return f;
}
