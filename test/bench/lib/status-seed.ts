/**
 * Gives benchmark stations (BERLA's layout, the `status` fixture) all four status sections through
 * real import v2 requests: what the status and push scenarios start from.
 */
import { TOKENS } from '../../helpers/fixtures.js';
import { SIGNAL_TYPES } from './fixtures.js';

/** The four sections of the export v2 station status. */
export const SECTIONS = ['availability', 'usage', 'hydrogen_storage', 'pricing'] as const;

export type SignalType = (typeof SIGNAL_TYPES)[number];

/** One transmission of `type` for a benchmark station, dated `datetime`; values vary a little by station (`i`). */
export function transmission(type: SignalType, hrsId: string, i: number, datetime: string): Record<string, unknown> {
  switch (type) {
    case 'availability':
      return {
        hrs: hrsId,
        datetime,
        nozzles: [
          { id: 'N1', available: i % 7 !== 0 },
          { id: 'N2', available: true },
        ],
        station: { maintenance: false, limitedly_available: i % 11 === 0 },
      };
    case 'usage':
      return {
        hrs: hrsId,
        datetime,
        nozzles: [
          { id: 'N1', usage_status: i % 3 === 0 ? 'in-use' : 'free' },
          { id: 'N2', usage_status: i % 5 === 0 ? 'reserved' : 'free' },
        ],
      };
    case 'hydrogen-storage':
      return { hrs: hrsId, datetime, storages: [{ id: 'S1', remaining_kg: i % 10 === 0 ? '42.50' : '420.50' }] };
    case 'pricing':
      return {
        hrs: hrsId,
        datetime,
        products: [
          { id: 'P700', gross_price: '13.850', net_price: '11.639', currency: 'EUR' },
          { id: 'P350', gross_price: '11.500', net_price: '9.664', currency: 'EUR' },
        ],
      };
  }
}

/**
 * Gives every station all four sections: per signal type one POST carrying one transmission per
 * station, dated a second ago (well within the 5 minutes import v2 accepts).
 */
export async function seedAllSections(port: number, stations: readonly string[]): Promise<void> {
  const datetime = new Date(Date.now() - 1000).toISOString();
  for (const type of SIGNAL_TYPES) {
    const res = await fetch(`http://127.0.0.1:${port}/import/v2/signal/${type}/`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${TOKENS.import_v2}`, 'Content-Type': 'application/json' },
      body: JSON.stringify(stations.map((hrsId, i) => transmission(type, hrsId, i, datetime))),
    });
    if (res.status !== 204) throw new Error(`seeding: POST ${type} answered ${res.status} ${(await res.text()).slice(0, 300)}`);
  }
}


/** Posts import v2 transmissions of one signal type with the standard import v2 token; throws unless 204. */
export async function postSignals(port: number, type: SignalType, transmissions: Record<string, unknown>[]): Promise<void> {
  const res = await fetch(`http://127.0.0.1:${port}/import/v2/signal/${type}/`, {
    method: 'POST',
    headers: { Authorization: `Bearer ${TOKENS.import_v2}`, 'Content-Type': 'application/json' },
    body: JSON.stringify(transmissions),
  });
  const text = await res.text();
  if (res.status !== 204) throw new Error(`POST ${type} answered ${res.status} ${text.slice(0, 300)}`);
}

/** One signal of the churn: its type, station and transmission. */
export interface ChurnSignal {
  type: SignalType;
  hrsId: string;
  transmission: Record<string, unknown>;
}

/**
 * Posts one transmission (one request) every 1/perSecond s while a target is measured, each the
 * `n`-th signal `next` makes; keeps count of what was posted and accepted and of the newest accepted.
 */
export class SignalChurn {
  posted = 0;
  accepted = 0;
  failures: string[] = [];
  last: { hrsId: string; datetime: string } | undefined;
  private timer: NodeJS.Timeout | undefined;
  private readonly inflight = new Set<Promise<void>>();

  constructor(
    private readonly port: number,
    private readonly perSecond: number,
    private readonly next: (n: number, datetime: string) => ChurnSignal,
  ) {}

  start(): void {
    this.timer = setInterval(() => this.post(), 1000 / this.perSecond);
  }

  private post(): void {
    const n = this.posted++;
    const datetime = new Date().toISOString();
    const { type, hrsId, transmission } = this.next(n, datetime);
    const sent = postSignals(this.port, type, [transmission]).then(
      () => {
        this.accepted++;
        if (!this.last || this.last.datetime <= datetime) this.last = { hrsId, datetime };
      },
      (err: unknown) => {
        if (this.failures.length < 5) this.failures.push((err as Error).message);
      },
    );
    this.inflight.add(sent);
    void sent.finally(() => this.inflight.delete(sent));
  }

  async stop(): Promise<void> {
    clearInterval(this.timer);
    await Promise.all(this.inflight);
  }
}
