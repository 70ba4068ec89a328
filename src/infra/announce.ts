import type { Logger } from 'pino';
import { CATEGORIES, type Category } from '../domain/vocabulary.js';
import type { AnnouncedSignal, Bus } from './bus.js';
import type { LiveStatus, PublishedSignal } from '../../machines/live-status.js';
import type { Receipt, Receipts } from './receipts.js';

const isCategory = (value: string): value is Category => (CATEGORIES as readonly string[]).includes(value);

/** Readings as another instance announced them; entries this version does not understand are skipped. */
export function fromAnnouncement(signals: readonly AnnouncedSignal[]): PublishedSignal[] {
  const out: PublishedSignal[] = [];
  for (const s of signals) {
    const datetime = Date.parse(s.measured_at);
    const receivedAt = Date.parse(s.received_at);
    if (!isCategory(s.category) || Number.isNaN(datetime) || Number.isNaN(receivedAt)) continue;
    out.push({ hrsId: s.hrs_id, category: s.category, originatorId: s.originator_id, datetime, receivedAt, payload: s.payload });
  }
  return out;
}

function toAnnouncement(signal: PublishedSignal): AnnouncedSignal {
  return {
    hrs_id: signal.hrsId,
    category: signal.category,
    originator_id: signal.originatorId,
    measured_at: new Date(signal.datetime).toISOString(),
    received_at: new Date(signal.receivedAt).toISOString(),
    payload: signal.payload,
  };
}

/**
 * Publishes committed live readings: applied to this instance's live status at once, and announced to
 * every other instance over the bus, one message per event-loop turn rather than one per request.
 * Receipts of testing and unassigned transmissions go the same way to the receipt stream.
 */
export class Publisher {
  private pending: PublishedSignal[] = [];
  private pendingReceipts: Receipt[] = [];

  constructor(
    private readonly status: LiveStatus,
    private readonly bus: Bus,
    private readonly log: Logger,
    private readonly receipts?: Receipts,
  ) {}

  /** Call only after the COMMIT that stored the transmissions `receipts` describe. */
  received(receipts: readonly Receipt[]): void {
    if (receipts.length === 0 || !this.receipts) return;
    this.receipts.emit(receipts);
    const first = this.pendingReceipts.length === 0;
    this.pendingReceipts.push(...receipts);
    if (first) {
      setImmediate(() => {
        const batch = this.pendingReceipts;
        this.pendingReceipts = [];
        this.bus
          .publish({ type: 'receipts', from: this.bus.instanceId, receipts: batch })
          .catch((err) => this.log.warn({ err, receipts: batch.length }, 'announcing receipts failed'));
      });
    }
  }

  /** Call only after the COMMIT that stored `signals`. */
  publish(signals: readonly PublishedSignal[]): void {
    if (signals.length === 0) return;
    this.status.publish(signals);
    const first = this.pending.length === 0;
    this.pending.push(...signals);
    if (first) setImmediate(() => this.flush());
  }

  private flush(): void {
    const signals = this.pending;
    this.pending = [];
    this.bus
      .publish({ type: 'signals', from: this.bus.instanceId, signals: signals.map(toAnnouncement) })
      .catch((err) => this.log.warn({ err, signals: signals.length }, 'announcing published signals failed'));
  }
}
