import type { Logger } from 'pino';

/**
 * A transmission that was stored but not published: its originator is not (or not live) assigned to
 * the station for that signal type. Admins see these in the live feed to follow an originator's
 * commissioning; values are never part of a receipt (they may be confidential).
 */
export interface Receipt {
  originator_id: string;
  hrs_id: string;
  /** The signal type, as in the import path: `availability`, `usage`, `hydrogen-storage`, `pricing`. */
  category: string;
  /** `testing`: assigned for testing; `unassigned`: no assignment for that station and type. */
  assignment: 'testing' | 'unassigned';
  /** Measurement and receipt times, ISO 8601 UTC. */
  datetime: string;
  received_datetime: string;
}

export type ReceiptListener = (receipts: readonly Receipt[]) => void;

/** Receipts of this instance's and every other instance's imports, as one stream (see Publisher and the bus). */
export class Receipts {
  private readonly listeners = new Set<ReceiptListener>();

  constructor(private readonly log: Logger) {}

  /** Subscribes; returns the unsubscribe function. */
  on(listener: ReceiptListener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  emit(receipts: readonly Receipt[]): void {
    if (receipts.length === 0) return;
    for (const listener of this.listeners) {
      try {
        listener(receipts);
      } catch (err) {
        this.log.error({ err }, 'receipt listener failed');
      }
    }
  }
}
