import type { Logger } from 'pino';
import type { Receipt } from '../domain/signals.js';
import type { TokenEvent } from '../domain/token-events.js';
import type { Rejection } from '../domain/rejections.js';

/** Items of this instance and every other instance (through the bus), as one stream its listeners follow. */
export class EventStream<T> {
  private readonly listeners = new Set<(items: readonly T[]) => void>();

  constructor(
    private readonly log: Logger,
    private readonly what: string,
  ) {}

  /** Subscribes; returns the unsubscribe function. */
  on(listener: (items: readonly T[]) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  emit(items: readonly T[]): void {
    if (items.length === 0) return;
    for (const listener of this.listeners) {
      try {
        listener(items);
      } catch (err) {
        this.log.error({ err }, `${this.what} listener failed`);
      }
    }
  }
}

export type ReceiptListener = (receipts: readonly Receipt[]) => void;

/** Receipts of this instance's and every other instance's imports, as one stream (see Announcer and the bus). */
export class Receipts extends EventStream<Receipt> {
  constructor(log: Logger) {
    super(log, 'receipt');
  }
}

/** Personal tokens' events from every instance and worker (the bus's `tokens` messages), as one stream. */
export class TokenEvents extends EventStream<TokenEvent> {
  constructor(log: Logger) {
    super(log, 'token event');
  }
}

/** Refused import calls of this instance and every other (the bus's `rejections`), for the admins' feed. */
export class Rejections extends EventStream<Rejection> {
  constructor(log: Logger) {
    super(log, 'rejection');
  }
}
