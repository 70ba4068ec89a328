import type { Logger } from 'pino';
import type { Receipt } from '../domain/signals.js';

export type ReceiptListener = (receipts: readonly Receipt[]) => void;

/** Receipts of this instance's and every other instance's imports, as one stream (see Announcer and the bus). */
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
