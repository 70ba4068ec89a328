import { randomBytes } from 'node:crypto';
import type { Logger } from 'pino';
import type { Rejection } from '../domain/rejections.js';
import type { PublishedSignal, Receipt } from '../domain/signals.js';
import type { TokenEvent } from '../domain/token-events.js';
import { isCategory } from '../domain/categories/index.js';
import type { RegistryChange } from '../domain/registry-change.js';
import { registryMessage, type AnnouncedReceipt, type AnnouncedSignal, type Bus, type BusMessageOf } from './bus.js';
import type { Rejections, Receipts, TokenEvents } from './receipts.js';
import { RedisNotConnectedError, redisUsable, type Redis } from './redis.js';
import { acknowledgeChange, acknowledged, markAbsent, markPresent, presentListeners, PRESENCE_EVERY_MS } from './registry-acks.js';

/**
 * Everything one instance tells the others and hears from them over the bus (src/infra/bus.ts):
 * committed readings and receipts (Announcer, batched), registry and token changes (Announcements,
 * with the one `registry` handler), token events and refused import calls.
 */

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

  /** While Redis is down its outage was warned of once (src/infra/redis-outage.ts): each lost announcement is a debug line. */
  private failed(err: unknown, fields: Record<string, number>, msg: string): void {
    this.bus.failed(this.log, err, msg, fields);
  }

  private flushSignals(): void {
    const signals = this.pending;
    this.pending = [];
    if (signals.length === 0) {
      this.sending = false;
      return;
    }
    this.sentAt = performance.now();
    let text = `${this.bus.opening('signals')}"signals":[`;
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

/** What the announcements of other instances (and this one's own, through Redis) change or feed here. */
export interface AnnouncementPorts {
  /** The token cache, emptied when tokens or the registry changed. */
  tokens: { invalidate(): void };
  /** The registry in memory, read again when it changed. */
  registry: { reload(): Promise<unknown> };
  /** The admins' feeds, fed with what every instance announces. */
  receipts: Receipts;
  rejections: Rejections;
  tokenEvents: TokenEvents;
}

/** How long a change made here waits for every instance to have applied it. */
export const ACK_TIMEOUT_MS = 2000;

/** What became of a registry change's announcement (`registryChanged`). */
export interface ChangeAcknowledged {
  /** Subscribers Redis counted for the announcement: every platform's on the namespace's channel, over every database number. */
  subscribers: number;
  /** Instances of this platform waited for: the subscribers, at most as many as are present under the platform. */
  receivers: number;
  /** How many had applied the change when the wait ended. */
  acknowledged: number;
  /** Whether the wait ended at ACK_TIMEOUT_MS rather than with every receiver's acknowledgement. */
  timedOut: boolean;
}

/**
 * Registry and token changes, token events and refused import calls, told to every instance and
 * heard from every instance. One handler takes every `registry` message: it empties the token cache,
 * tells the listeners of token changes (the status streams recheck their credentials), reloads the
 * registry unless this instance made the change, and acknowledges a change that asks for it.
 */
export class Announcements {
  private readonly tokenListeners = new Set<() => void>();
  private presence: NodeJS.Timeout | undefined;

  constructor(
    private readonly bus: Bus,
    private readonly redis: Redis,
    private readonly prefix: string,
    private readonly log: Logger,
    private readonly local: AnnouncementPorts,
  ) {}

  /**
   * Subscribes to every kind of announcement; readings other instances committed go to `apply` (the
   * live status). Call before restoring the live status: a reading announced meanwhile is applied
   * either way (the newer wins).
   */
  async listen(apply: (signals: readonly PublishedSignal[]) => void): Promise<void> {
    const { receipts, rejections, tokenEvents } = this.local;
    await this.bus.on('registry', (message) => this.registryAnnounced(message));
    // Present under the platform, so a change waits for this instance's acknowledgement (src/infra/registry-acks.ts).
    await this.markPresent();
    this.presence = setInterval(() => void this.markPresent(), PRESENCE_EVERY_MS).unref();
    await this.bus.fromOthers('signals', (message) => apply(fromAnnouncement(message.signals)));
    await this.bus.fromOthers('receipts', (message) => receipts.emit(receiptsFromAnnouncement(message.receipts)));
    await this.bus.fromOthers('rejections', (message) => rejections.emit(message.rejections));
    // Every instance's (and the workers') token events, this one's included: they all come over the bus.
    await this.bus.on('tokens', (message) => tokenEvents.emit(message.events));
  }

  private async markPresent(): Promise<void> {
    // While Redis is away (reported once by watchRedis) the next renewal tries again.
    if (!redisUsable(this.redis)) return;
    try {
      await markPresent(this.redis, this.prefix, this.bus.platform, this.bus.instanceId);
    } catch (err) {
      // The outage is reported once by watchRedis; the next renewal tries again.
      this.log.debug({ err }, 'presence not renewed');
    }
  }

  /** Stops listening for acknowledgements' sake: no longer present under the platform. */
  async close(): Promise<void> {
    if (this.presence === undefined) return;
    clearInterval(this.presence);
    this.presence = undefined;
    // A shutdown does not wait for a Redis that is away: the presence then lapses by itself (PRESENCE_TTL_MS).
    if (!redisUsable(this.redis)) return;
    await markAbsent(this.redis, this.prefix, this.bus.platform, this.bus.instanceId).catch((err: unknown) => this.log.debug({ err }, 'presence not withdrawn'));
  }

  /** Calls `listener` whenever tokens changed on any instance (a revocation). */
  onTokensChanged(listener: () => void): void {
    this.tokenListeners.add(listener);
  }

  private registryAnnounced(message: BusMessageOf<'registry'>): void {
    this.local.tokens.invalidate();
    // A change this instance made is applied here before it is announced: only the others reload.
    const mine = message.change !== undefined && message.from === this.bus.instanceId;
    const applied = message.registry === false || mine ? Promise.resolve() : this.local.registry.reload();
    applied
      .then(
        () =>
          message.change
            ? acknowledgeChange(this.redis, this.prefix, message.change, this.bus.instanceId).catch((err: unknown) =>
                this.bus.failed(this.log, err, 'registry change applied here but not acknowledged (Redis unavailable): its instance answers after its wait', { change: message.change }),
              )
            : undefined,
        (err: unknown) => this.log.error({ err }, 'reloading the registry failed'),
      );
    if (message.tokens) for (const listener of this.tokenListeners) listener();
  }

  /**
   * Stations changed at start (the sandbox, re-encoded photos), before anything is served: other
   * instances reload. Rejects when Redis is unavailable; the caller says what was not announced.
   */
  async stationsChanged(hrsIds: readonly string[]): Promise<void> {
    await this.bus.publish(registryMessage({ hrsIds, tokens: false }));
  }

  /**
   * Tells this instance and every other that tokens changed (a revocation). The revocation is committed
   * before this runs: an unsent announcement must not fail it. This instance applies it at once; other
   * instances stop accepting the token when their token cache expires.
   */
  async tokensChanged(): Promise<void> {
    this.local.tokens.invalidate();
    const message = registryMessage({ tokens: true, registry: false });
    try {
      await this.bus.publish(message);
    } catch (err) {
      this.bus.deliverLocally(message);
      this.bus.failed(this.log, err, 'token change not announced (Redis unavailable): other instances may accept a revoked token until their token cache expires (30 s)', {}, 'info');
    }
  }

  /**
   * A committed registry change made through the portal or the admin API: this instance applies it at
   * once (its registry reloaded, its token cache emptied), then every other instance is told over the
   * bus, and the answer waits until each has applied it (src/infra/registry-acks.ts; at most
   * ACK_TIMEOUT_MS). The change is committed before this runs; when Redis is away the others learn of it
   * with the next announcement (a warning says so), the change itself is never undone.
   */
  async registryChanged(change: RegistryChange): Promise<ChangeAcknowledged | undefined> {
    const reload = change.hrsIds.length > 0 || change.registry === true;
    if (change.tokens) this.local.tokens.invalidate();
    if (reload) await this.local.registry.reload();
    const id = randomBytes(12).toString('hex');
    try {
      const subscribers = await this.bus.publish(registryMessage({ hrsIds: change.hrsIds, tokens: change.tokens === true, registry: reload, change: id, from: this.bus.instanceId }));
      // Only this platform's instances acknowledge: another platform's subscribers on the channel are not waited for.
      // (Presence unreadable: Redis's count, as before presence was kept.)
      const present = await presentListeners(this.redis, this.prefix, this.bus.platform).catch(() => subscribers);
      const receivers = Math.min(subscribers, present);
      const acks = await acknowledged(this.redis, this.prefix, id, receivers, ACK_TIMEOUT_MS);
      if (acks < receivers) {
        this.log.warn({ stations: change.hrsIds, receivers, acks }, `registry change not acknowledged by every instance within ${ACK_TIMEOUT_MS} ms: the others apply it as they get to it`);
      }
      return { subscribers, receivers, acknowledged: acks, timedOut: acks < receivers };
    } catch (err) {
      this.bus.failed(this.log, err, 'registry change not announced to other instances (Redis unavailable): they apply it with the next announcement', { stations: change.hrsIds }, 'info');
      return undefined;
    }
  }

  /** Tells every instance's admins' feed (this one's too, through Redis; locally when Redis is away) of token events. */
  async tokenEvents(events: readonly TokenEvent[]): Promise<void> {
    if (events.length === 0) return;
    const message = { type: 'tokens' as const, events: [...events] };
    try {
      await this.bus.publish(message);
    } catch (err) {
      this.bus.deliverLocally(message);
      this.log.debug({ err }, 'token events not announced to other instances (Redis unavailable)');
    }
  }

  /** Refused import calls to this instance's admins' feed and every other instance's. */
  rejected(list: Rejection[]): void {
    this.local.rejections.emit(list);
    this.bus.publish({ type: 'rejections', from: this.bus.instanceId, rejections: list }).catch((err: unknown) => this.log.debug({ err }, 'rejections not announced'));
  }
}
