import type { Logger } from 'pino';
import type { PublishedSignal, Receipt } from '../domain/signals.js';
import { isCategory } from '../domain/vocabulary.js';
import type { AnnouncedReceipt, AnnouncedSignal, Bus } from './bus.js';
import { RedisNotConnectedError } from './redis.js';

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

/** Receipts as another instance announced them; entries of a category this version does not know are skipped. */
export function receiptsFromAnnouncement(receipts: readonly AnnouncedReceipt[]): Receipt[] {
  return receipts.filter((r): r is AnnouncedReceipt & Pick<Receipt, 'category'> => isCategory(r.category));
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

export interface AnnouncerPorts {
  /** Applies committed live readings to this instance's live status. */
  apply(signals: readonly PublishedSignal[]): void;
  /** Hands receipts to this instance's listeners (the admins' feed). */
  receive(receipts: readonly Receipt[]): void;
}

/**
 * Publishes committed live readings: applied to this instance's live status at once, and announced to
 * every other instance over the bus, one message per event-loop turn rather than one per request, and
 * while one is on its way to Redis the readings committed meanwhile wait for its answer and go together
 * in the next (so under load a message carries many requests' readings; each publish is a write and a
 * read on the socket, most of its cost). Receipts of testing and unassigned transmissions go the same
 * way to the receipt stream.
 */
export class Announcer {
  private pending: PublishedSignal[] = [];
  private pendingReceipts: Receipt[] = [];
  /** Whether a message of signals is out, or one is about to go (the next waits). */
  private sending = false;

  constructor(
    private readonly bus: Bus,
    private readonly log: Logger,
    private readonly local: AnnouncerPorts,
  ) {}

  /** Call only after the COMMIT that stored the transmissions `receipts` describe. */
  received(receipts: readonly Receipt[]): void {
    if (receipts.length === 0) return;
    this.local.receive(receipts);
    const first = this.pendingReceipts.length === 0;
    this.pendingReceipts.push(...receipts);
    if (first) setImmediate(() => this.flushReceipts());
  }

  /** Call only after the COMMIT that stored `signals`. */
  publish(signals: readonly PublishedSignal[]): void {
    if (signals.length === 0) return;
    this.local.apply(signals);
    for (const signal of signals) this.pending.push(signal);
    if (this.sending) return;
    this.sending = true;
    setImmediate(() => this.flushSignals());
  }

  /** While Redis is not connected its outage was warned of once (watchRedis): each lost announcement is a debug line. */
  private failed(err: unknown, fields: Record<string, number>, msg: string): void {
    if (err instanceof RedisNotConnectedError) this.log.debug({ err, ...fields }, msg);
    else this.log.warn({ err, ...fields }, msg);
  }

  private flushSignals(): void {
    const signals = this.pending;
    this.pending = [];
    if (signals.length === 0) {
      this.sending = false;
      return;
    }
    this.bus
      .publish({ type: 'signals', from: this.bus.instanceId, signals: signals.map(toAnnouncement) })
      .catch((err) => this.failed(err, { signals: signals.length }, 'announcing published signals failed'))
      .finally(() => setImmediate(() => this.flushSignals()));
  }

  private flushReceipts(): void {
    const receipts = this.pendingReceipts;
    this.pendingReceipts = [];
    this.bus
      .publish({ type: 'receipts', from: this.bus.instanceId, receipts })
      .catch((err) => this.failed(err, { receipts: receipts.length }, 'announcing receipts failed'));
  }
}
