import type { Logger } from 'pino';
import type { PublishedSignal, Receipt } from '../domain/signals.js';
import { isCategory } from '../domain/categories/index.js';
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

/**
 * A reading as an AnnouncedSignal in JSON, built from the JSON the import path made of its payload
 * and its times when it stored it (PublishedSignal.text), so a payload is serialised once.
 */
function announcementJson(signal: PublishedSignal): string {
  const text = signal.text;
  return (
    `{"hrs_id":${JSON.stringify(signal.hrsId)},"category":${JSON.stringify(signal.category)},"originator_id":${JSON.stringify(signal.originatorId)},` +
    `"measured_at":"${text?.measuredAt ?? new Date(signal.datetime).toISOString()}","received_at":"${text?.receivedAt ?? new Date(signal.receivedAt).toISOString()}",` +
    `"payload":${text?.payload ?? JSON.stringify(signal.payload)}}`
  );
}

export interface AnnouncerPorts {
  /** Applies committed live readings to this instance's live status. */
  apply(signals: readonly PublishedSignal[]): void;
  /** Hands receipts to this instance's listeners (the admins' feed). */
  receive(receipts: readonly Receipt[]): void;
}

/** Least time between two announcements of readings, in milliseconds (see Announcer). */
export const ANNOUNCE_EVERY_MS = 5;

/**
 * Publishes committed live readings: applied to this instance's live status at once, and announced to
 * every other instance over the bus in one message per {@link ANNOUNCE_EVERY_MS} at most (and never
 * while the previous one is still on its way to Redis): under load one message carries the readings of
 * many requests, where each publish costs a write and a read on the socket (and on a machine shared
 * with Redis, waking it), most of what announcing costs. Other instances are at most that much later
 * than this one. Receipts of testing and unassigned transmissions go once per event-loop turn to the
 * receipt stream.
 */
export class Announcer {
  private pending: PublishedSignal[] = [];
  private pendingReceipts: Receipt[] = [];
  /** Whether a message of signals is out, or one is about to go (the next waits). */
  private sending = false;
  /** When the last message of signals went (performance.now()). */
  private sentAt = Number.NEGATIVE_INFINITY;

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
    this.later();
  }

  /** Flushes the signals at the end of this turn, or when ANNOUNCE_EVERY_MS has passed since the last message. */
  private later(): void {
    const wait = this.sentAt + ANNOUNCE_EVERY_MS - performance.now();
    if (wait <= 0) setImmediate(() => this.flushSignals());
    else setTimeout(() => this.flushSignals(), wait);
  }

  /** Resolves once every reading handed over so far has been announced, or its announcement failed (at shutdown). */
  async flushed(): Promise<void> {
    while (this.sending || this.pending.length > 0) await new Promise((resolve) => setTimeout(resolve, ANNOUNCE_EVERY_MS));
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
    this.sentAt = performance.now();
    let text = `{"type":"signals","from":${JSON.stringify(this.bus.instanceId)},"signals":[`;
    for (let i = 0; i < signals.length; i++) text += (i === 0 ? '' : ',') + announcementJson(signals[i]!);
    this.bus
      .publishText('signals', `${text}]}`)
      .catch((err) => this.failed(err, { signals: signals.length }, 'announcing published signals failed'))
      .finally(() => this.later());
  }

  private flushReceipts(): void {
    const receipts = this.pendingReceipts;
    this.pendingReceipts = [];
    this.bus
      .publish({ type: 'receipts', from: this.bus.instanceId, receipts })
      .catch((err) => this.failed(err, { receipts: receipts.length }, 'announcing receipts failed'));
  }
}
