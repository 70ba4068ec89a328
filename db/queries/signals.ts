import type { Sql } from '../connect.js';

export type AssignmentAtReceipt = 'live' | 'testing' | 'unassigned';

export interface StoredTransmission {
  originatorId: string;
  hrsId: string;
  category: string;
  state: AssignmentAtReceipt;
  measuredAt: Date;
  receivedAt: Date;
  transmissionId: string | null;
  payload: Record<string, unknown>;
}

const columns = (rows: StoredTransmission[]) => ({
  originators: rows.map((r) => r.originatorId),
  stations: rows.map((r) => r.hrsId),
  categories: rows.map((r) => r.category),
  states: rows.map((r) => r.state),
  measured: rows.map((r) => r.measuredAt.toISOString()),
  received: rows.map((r) => r.receivedAt.toISOString()),
  ids: rows.map((r) => r.transmissionId),
  payloads: rows.map((r) => JSON.stringify(r.payload)),
});

/**
 * Stores accepted transmissions in one transaction: the latest per originator, station and category
 * for all; for live ones also the published snapshot (replacing the previous one entirely, unless the
 * stored one was measured later: a late reading never overwrites a newer one) and a history row.
 * Resolves only after COMMIT.
 */
export async function storeTransmissions(sql: Sql, rows: StoredTransmission[]): Promise<void> {
  if (rows.length === 0) return;
  const all = columns(rows);
  const live = columns(rows.filter((r) => r.state === 'live'));
  await sql.begin(async (tx) => {
    await tx`
      INSERT INTO signal_latest (originator_id, hrs_id, category, assignment_state, measured_at, received_at, transmission_id, payload)
      SELECT o, h, c, s, m, r, i, p::jsonb
      FROM unnest(${all.originators}::text[], ${all.stations}::text[], ${all.categories}::text[], ${all.states}::text[],
                  ${all.measured}::timestamptz[], ${all.received}::timestamptz[], ${all.ids}::text[], ${all.payloads}::text[])
        AS u(o, h, c, s, m, r, i, p)
      ON CONFLICT (originator_id, hrs_id, category) DO UPDATE SET
        assignment_state = EXCLUDED.assignment_state, measured_at = EXCLUDED.measured_at, received_at = EXCLUDED.received_at,
        transmission_id = EXCLUDED.transmission_id, payload = EXCLUDED.payload`;
    if (live.stations.length === 0) return;
    await tx`
      INSERT INTO published_signals (hrs_id, category, originator_id, measured_at, received_at, transmission_id, payload)
      SELECT h, c, o, m, r, i, p::jsonb
      FROM unnest(${live.stations}::text[], ${live.categories}::text[], ${live.originators}::text[],
                  ${live.measured}::timestamptz[], ${live.received}::timestamptz[], ${live.ids}::text[], ${live.payloads}::text[])
        AS u(h, c, o, m, r, i, p)
      ON CONFLICT (hrs_id, category) DO UPDATE SET
        originator_id = EXCLUDED.originator_id, measured_at = EXCLUDED.measured_at, received_at = EXCLUDED.received_at,
        transmission_id = EXCLUDED.transmission_id, payload = EXCLUDED.payload
      WHERE EXCLUDED.measured_at >= published_signals.measured_at`;
    await tx`
      INSERT INTO signal_history (hrs_id, category, originator_id, measured_at, received_at, transmission_id, payload)
      SELECT h, c, o, m, r, i, p::jsonb
      FROM unnest(${live.stations}::text[], ${live.categories}::text[], ${live.originators}::text[],
                  ${live.measured}::timestamptz[], ${live.received}::timestamptz[], ${live.ids}::text[], ${live.payloads}::text[])
        AS u(h, c, o, m, r, i, p)`;
  });
}
