import { randomBytes } from 'node:crypto';
import type { Logger } from 'pino';
import { z } from 'zod';
import { RedisNotConnectedError, redisUsable, withinRedis, type Redis } from './redis.js';
import { redisFailed, type RedisFailure } from './redis-outage.js';
import { TOKEN_EVENT_KINDS } from '../domain/token-events.js';

/**
 * What instances tell each other over Redis pub/sub: one channel per message type under the
 * configured prefix, every message JSON with a `type`, validated with zod on receipt (a malformed one
 * is logged and dropped, never handed to a handler).
 * - registry: stations, layouts, assignments, originators, users or tokens changed (after COMMIT);
 *   `registry: false` says only tokens changed (a revocation), so instances clear their token cache
 *   without reading the whole registry again.
 * - signals: live transmissions were committed and replace the published snapshots they name; they
 *   carry the snapshots, so other instances update their live status without reading them back.
 *   `from` is the sending instance (it has applied them already).
 * - receipts: testing and unassigned transmissions were committed (no values), for the admins' live
 *   feed on every instance.
 * - tokens: personal tokens were created, changed, revoked, or reminded of (never a value), for the
 *   admins' live feed on every instance, the sender's included.
 * Entries inside a message are checked by their readers (src/infra/announce.ts): one a later version
 * sends that this one does not understand is skipped, not the whole message.
 *
 * Every message carries `platform`, the sender's platform id (src/infra/namespace.ts). The channels are
 * under the platform's namespace already; a message that still carries another platform's id (two
 * platforms given one REDIS_PREFIX, a forged message) or none (an earlier version) is dropped unread,
 * and the first such message is logged once as a warning: another platform is on this bus.
 */

const announcedSignalSchema = z.object({
  hrs_id: z.string(),
  category: z.string(),
  originator_id: z.string(),
  measured_at: z.string(),
  received_at: z.string(),
  payload: z.record(z.string(), z.unknown()),
});

const announcedReceiptSchema = z.object({
  originator_id: z.string(),
  hrs_id: z.string(),
  category: z.string(),
  assignment: z.enum(['testing', 'unassigned']),
  datetime: z.string(),
  received_datetime: z.string(),
  source: z.enum(['import_v1', 'import_v1.1']).optional(),
});

const announcedTokenEventSchema = z.object({
  kind: z.enum(TOKEN_EVENT_KINDS),
  token_id: z.string(),
  user_id: z.string(),
  name: z.string(),
  hint: z.string().nullable(),
  at: z.string(),
  expires_at: z.string().nullable(),
  by: z.enum(['owner', 'admin']).optional(),
  days_before: z.number().optional(),
});

const announcedRejectionSchema = z.object({
  originator_id: z.string(),
  endpoint: z.string(),
  status: z.number().int(),
  hrs_ids: z.array(z.string()),
  error: z.object({ path: z.string(), message: z.string() }).nullable(),
  at: z.string(),
});

export const busMessageSchema = z.discriminatedUnion('type', [
  z.object({ type: z.literal('registry'), hrs_ids: z.array(z.string()), tokens: z.boolean(), registry: z.boolean().optional(), change: z.string().max(64).optional(), from: z.string().max(64).optional() }),
  z.object({ type: z.literal('signals'), from: z.string(), signals: z.array(announcedSignalSchema) }),
  z.object({ type: z.literal('receipts'), from: z.string(), receipts: z.array(announcedReceiptSchema) }),
  z.object({ type: z.literal('tokens'), events: z.array(announcedTokenEventSchema) }),
  z.object({ type: z.literal('rejections'), from: z.string(), rejections: z.array(announcedRejectionSchema) }),
]);

export type BusMessage = z.infer<typeof busMessageSchema>;
export type BusType = BusMessage['type'];
export type BusMessageOf<T extends BusType> = Extract<BusMessage, { type: T }>;
export type AnnouncedSignal = z.infer<typeof announcedSignalSchema>;
export type AnnouncedReceipt = z.infer<typeof announcedReceiptSchema>;

/**
 * The `registry` message, built in one place: these stations changed (and, with `tokens`, tokens too);
 * `registry: false` when nothing but tokens changed.
 */
export function registryMessage(change: { hrsIds?: readonly string[]; tokens: boolean; registry?: boolean; change?: string; from?: string }): BusMessageOf<'registry'> {
  return {
    type: 'registry',
    hrs_ids: [...(change.hrsIds ?? [])],
    tokens: change.tokens,
    registry: change.registry ?? true,
    ...(change.change ? { change: change.change } : {}),
    ...(change.from ? { from: change.from } : {}),
  };
}

type Handler = (message: BusMessage) => void;

/** Why the subscriber may have missed messages before it heard again (`Bus.onRejoined`). */
export type RejoinReason = 'reconnected' | 'deaf';

/** How often an instance checks that its subscriber hears what is published (`Bus.checkHearing`). */
export const HEARING_EVERY_MS = 5_000;

interface Subscription {
  handler: Handler;
  /** Only messages other instances sent (see `Bus.fromOthers`). */
  othersOnly: boolean;
}

/** Instance-to-instance announcements, on one channel per kind under the platform's namespace. */
export class Bus {
  private readonly handlers = new Map<BusType, Set<Subscription>>();
  private subscriber: Redis | undefined;
  /** Called once the subscriber hears again after it may have missed messages (see `onRejoined`). */
  private readonly rejoinListeners = new Set<(why: RejoinReason) => void>();
  /** The hearing check's timer, its consecutive checks that found the subscriber deaf, and whether one runs. */
  private hearingTimer: NodeJS.Timeout | undefined;
  private deafChecks = 0;
  private checking = false;
  private closed = false;
  /** This process's identity on the bus, so it can recognise its own announcements. */
  readonly instanceId = randomBytes(8).toString('hex');
  /** Messages dropped because they carried another platform's id or none. */
  foreignMessages = 0;
  private foreignWarned = false;

  /** The platform id once known (at once when given as a string). */
  private platformId: string | undefined;
  private readonly platformKnown: Promise<string>;
  /**
   * The publisher as announcements use it: without node-redis's own command timeout, which arms an
   * `AbortSignal.timeout` per command (a timer, a weak reference and a finalizer that outlive the
   * answer by seconds). `withinRedis` bounds each publish by REDIS_TIMEOUT instead.
   */
  private readonly announcer: Redis;

  /**
   * `prefix` is the platform's namespace, `platform` its id (src/infra/namespace.ts), or the id still
   * being read (a bus that only publishes): stamped on every message sent, required of every message
   * received.
   */
  constructor(
    private readonly publisher: Redis,
    private readonly prefix: string,
    platform: string | Promise<string>,
    private readonly log?: Logger,
  ) {
    if (prefix === '' || platform === '') throw new Error('the bus needs the platform\'s namespace and id (resolveNamespace)');
    this.announcer = publisher.withCommandOptions({ timeout: 0 }) as unknown as Redis;
    if (typeof platform === 'string') this.platformId = platform;
    this.platformKnown = Promise.resolve(platform).then((id) => (this.platformId = id));
    // A failed read surfaces where the id is awaited (publish, subscribe), never as an unhandled rejection.
    this.platformKnown.catch(() => undefined);
  }

  /** The platform id; only where it is known (a bus given it, or one that has published or subscribed). */
  get platform(): string {
    if (this.platformId === undefined) throw new Error('the platform id is still being read');
    return this.platformId;
  }

  channel(type: BusType): string {
    return `${this.prefix}:bus:${type}`;
  }

  /**
   * Announces to every instance, this one included (through Redis); resolves to the number of
   * instances that received it. Fails at once while Redis is not connected (rather than waiting in the
   * client's offline queue) or not answering, and after REDIS_TIMEOUT when it leaves the publish
   * unanswered (Redis may still deliver it late): the caller decides what a missed announcement means.
   */
  async publish(message: BusMessage): Promise<number> {
    await this.platformKnown;
    return this.publishText(message.type, this.serialise(message));
  }

  /**
   * A message as it goes on the bus: `type`, `from` (when it has one) and `platform` first, so this
   * instance knows its own message by its first bytes (fromOthers).
   */
  private serialise(message: BusMessage): string {
    const { type, from, ...rest } = message as { type: BusType; from?: string; platform?: string };
    delete rest.platform;
    return from === undefined ? JSON.stringify({ type, platform: this.platform, ...rest }) : JSON.stringify({ type, from, platform: this.platform, ...rest });
  }

  /**
   * How a message of `type` from this instance begins, up to the comma before its own fields: for a
   * caller that serialises the rest itself (publishText).
   */
  opening(type: BusType): string {
    return `{"type":${JSON.stringify(type)},"from":${JSON.stringify(this.instanceId)},"platform":${JSON.stringify(this.platform)},`;
  }

  /**
   * Announces a message already serialised by the caller (which builds it from parts it has as JSON
   * already); it must be a valid message of `type` beginning with `opening(type)`, as `publish`
   * writes them: the receivers validate it like any other.
   */
  async publishText(type: BusType, text: string): Promise<number> {
    if (!redisUsable(this.publisher)) throw new RedisNotConnectedError('Redis is not connected or not answering: the announcement was not sent');
    return withinRedis(this.publisher, this.announcer.publish(this.channel(type), text));
  }

  /**
   * Logs a failure to announce (or to use Redis on the bus's behalf) under the process's one Redis
   * outage report (src/infra/redis-outage.ts): a debug line during an outage, a warning otherwise.
   */
  failed(log: Logger, err: unknown, msg: string, fields: Record<string, unknown> = {}, during: 'debug' | 'info' = 'debug'): RedisFailure {
    return redisFailed(this.publisher, log, err, msg, fields, during);
  }

  /** Hands a message to this instance's own handlers only, as if it had come over the bus (when it could not be sent). */
  deliverLocally(message: BusMessage): void {
    this.dispatch(message.type, this.serialise(message));
  }

  /** Registers a handler; the first call for a type subscribes the shared subscriber connection. */
  async on<T extends BusType>(type: T, handler: (message: BusMessageOf<T>) => void): Promise<void> {
    await this.subscribe(type, { handler: handler as Handler, othersOnly: false });
  }

  /**
   * Registers a handler for the messages of `type` other instances sent (their `from` is not this
   * instance). This instance's own are recognised by their first bytes and dropped unread when no
   * handler of the type wants them: an instance receiving its own announcements of signals back from
   * Redis pays nothing for them.
   */
  async fromOthers<T extends Extract<BusType, 'signals' | 'receipts' | 'rejections'>>(type: T, handler: (message: BusMessageOf<T>) => void): Promise<void> {
    const own = this.instanceId;
    await this.subscribe(type, {
      handler: ((message: BusMessageOf<T>) => {
        if ((message as { from?: string }).from !== own) handler(message);
      }) as Handler,
      othersOnly: true,
    });
  }

  private async subscribe(type: BusType, subscription: Subscription): Promise<void> {
    let set = this.handlers.get(type);
    if (!set) {
      set = new Set();
      this.handlers.set(type, set);
      await this.platformKnown;
      this.subscriber ??= await this.openSubscriber();
      await this.subscriber.subscribe(this.channel(type), (raw) => this.dispatch(type, raw));
    }
    set.add(subscription);
  }

  /**
   * Calls `listener` whenever this instance's subscriber hears again after it may have missed
   * messages: it reconnected after losing its connection (`reconnected`), or the hearing check found
   * it deaf and it was opened again (`deaf`). What other instances announced meanwhile is lost to it:
   * the listener reads again what the announcements would have told (the registry, the live status).
   */
  onRejoined(listener: (why: RejoinReason) => void): void {
    this.rejoinListeners.add(listener);
  }

  /** This instance's own channel for the hearing check (see `checkHearing`). */
  private hearingChannel(): string {
    return `${this.prefix}:bus:hearing:${this.instanceId}`;
  }

  /**
   * Checks every HEARING_EVERY_MS that the subscriber hears what is published (`checkHearing`), once
   * it exists; the timer does not keep the process alive.
   */
  watchHearing(everyMs = HEARING_EVERY_MS): void {
    if (this.hearingTimer !== undefined || this.closed) return;
    this.hearingTimer = setInterval(() => void this.checkHearing(), everyMs).unref();
  }

  /**
   * One hearing check: a PUBLISH on this instance's own hearing channel, which its subscriber alone
   * listens to, answers with how many subscribers heard it. None, twice running, while the publisher's
   * connection is usable: the subscriber is connected, but not where announcements go (after a Sentinel
   * failover, a subscriber that stayed with the old master or lost its subscriptions), and nothing would
   * tell it so. It is then closed and opened again, subscribed to every channel, and the rejoin
   * listeners called. Once is not enough: right after a failover the subscriber may be moving on its
   * own. Resolves to what it found; never rejects (a Redis that does not answer is an outage, reported
   * once elsewhere).
   */
  async checkHearing(): Promise<'hearing' | 'deaf' | 'reopened' | 'skipped'> {
    if (this.checking || this.closed || this.subscriber === undefined || !redisUsable(this.publisher)) return 'skipped';
    this.checking = true;
    try {
      const receivers = await withinRedis(this.publisher, this.announcer.publish(this.hearingChannel(), 'hearing'));
      if (receivers > 0) {
        this.deafChecks = 0;
        return 'hearing';
      }
      if (++this.deafChecks < 2) return 'deaf';
      this.deafChecks = 0;
      this.log?.warn({ channel: this.hearingChannel() }, 'the bus subscriber hears nothing published (connected, but not where announcements go): opening it again and reading again what it may have missed');
      await this.reopenSubscriber();
      this.rejoined('deaf');
      return 'reopened';
    } catch (err) {
      this.log?.debug({ err }, 'bus hearing check not done');
      return 'skipped';
    } finally {
      this.checking = false;
    }
  }

  /** A new subscriber, subscribed to every channel the old one was, in its place; the old one is closed. */
  private async reopenSubscriber(): Promise<void> {
    const old = this.subscriber;
    const fresh = await this.openSubscriber();
    for (const type of this.handlers.keys()) await fresh.subscribe(this.channel(type), (raw) => this.dispatch(type, raw));
    if (this.closed) {
      await fresh.close().catch(() => fresh.destroy());
      return;
    }
    this.subscriber = fresh;
    if (old?.isOpen) await old.close().catch(() => old.destroy());
  }

  private rejoined(why: RejoinReason): void {
    for (const listener of this.rejoinListeners) {
      try {
        listener(why);
      } catch (err) {
        this.log?.error({ err, why }, 'bus rejoin listener failed');
      }
    }
  }

  private async openSubscriber(): Promise<Redis> {
    const subscriber = this.publisher.duplicate();
    // Its outages are the publisher's too, which watchRedis reports once: only debug lines here.
    subscriber.on('error', (err: Error) => this.log?.debug({ err }, 'redis subscriber error'));
    await subscriber.connect();
    // Its own channel, for the hearing check: the one subscription no other instance shares.
    await subscriber.subscribe(this.hearingChannel(), () => {});
    // Lost (an error, or a reconnection begun), then ready again: messages of the gap may be missed.
    let lost = false;
    subscriber.on('error', () => (lost = true));
    subscriber.on('reconnecting', () => (lost = true));
    subscriber.on('ready', () => {
      if (!lost || this.subscriber !== subscriber) return;
      lost = false;
      // Part of the outage that watchRedis reports with one warning and one info line: a debug line here.
      this.log?.debug('the bus subscriber is connected again: reading again what it may have missed');
      this.rejoined('reconnected');
    });
    return subscriber;
  }

  /** How this instance's own messages of `type` begin as `publish` sends them (`type`, `from`, `platform`). */
  private ownPrefix(type: BusType): string {
    return this.opening(type);
  }

  private dispatch(type: BusType, raw: string): void {
    const subscriptions = this.handlers.get(type);
    if (!subscriptions) return;
    let othersOnly = true;
    for (const s of subscriptions) othersOnly &&= s.othersOnly;
    if (othersOnly && raw.startsWith(this.ownPrefix(type))) return;
    const message = this.parse(type, raw);
    if (!message) return;
    for (const { handler } of subscriptions) {
      try {
        handler(message);
      } catch (err) {
        this.log?.error({ err, type }, 'bus handler failed');
      }
    }
  }

  /** The message, or undefined (logged) when it is not JSON or not a valid message of its channel's type. */
  private parse(type: BusType, raw: string): BusMessage | undefined {
    let value: unknown;
    try {
      value = JSON.parse(raw);
    } catch (err) {
      this.log?.warn({ err, type }, 'unreadable bus message ignored');
      return undefined;
    }
    // Another platform's message (or one of none) is not this platform's business, valid or not.
    if (value !== null && typeof value === 'object' && (value as { platform?: unknown }).platform !== this.platform) {
      this.foreign(type, (value as { platform?: unknown }).platform);
      return undefined;
    }
    const parsed = busMessageSchema.safeParse(value);
    if (!parsed.success || parsed.data.type !== type) {
      const issues = parsed.success ? [`type "${parsed.data.type}" on the ${type} channel`] : parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`);
      this.log?.warn({ type, issues: issues.slice(0, 5) }, 'malformed bus message ignored');
      return undefined;
    }
    return parsed.data;
  }

  /** A message of another platform (or of none): dropped; the first one is logged, once per instance. */
  private foreign(type: BusType, platform: unknown): void {
    this.foreignMessages++;
    if (this.foreignWarned) return;
    this.foreignWarned = true;
    this.log?.warn(
      { namespace: this.prefix, platform: this.platform, other_platform: typeof platform === 'string' ? platform.slice(0, 64) : null, type },
      'another platform is on this Redis bus (a message with another platform id, or none, on this namespace\'s channels): its messages are dropped; ' +
        'give each platform a REDIS_PREFIX of its own, or leave REDIS_PREFIX unset (said once)',
    );
  }

  async close(): Promise<void> {
    this.closed = true;
    clearInterval(this.hearingTimer);
    this.hearingTimer = undefined;
    const subscriber = this.subscriber;
    this.subscriber = undefined;
    if (subscriber?.isOpen) await subscriber.close().catch(() => subscriber.destroy());
  }
}
