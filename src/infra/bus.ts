import { randomBytes } from 'node:crypto';
import type { Logger } from 'pino';
import type { Receipt } from './receipts.js';
import type { Redis } from './redis.js';

/**
 * What instances tell each other over Redis pub/sub. Every message is JSON with a `type`.
 * - registry: stations, layouts, assignments, originators, users or tokens changed (after COMMIT);
 *   `registry: false` says only tokens changed (a revocation), so instances clear their token cache
 *   without reading the whole registry again.
 * - signals: live transmissions were committed and replace the published snapshots they name; they
 *   carry the snapshots, so other instances update their live status without reading them back.
 *   `from` is the sending instance (it has applied them already).
 * - receipts: testing and unassigned transmissions were committed (no values), for the admins' live
 *   feed on every instance.
 */
export type BusMessage =
  | { type: 'registry'; hrs_ids: string[]; tokens: boolean; registry?: boolean }
  | { type: 'signals'; from: string; signals: AnnouncedSignal[] }
  | { type: 'receipts'; from: string; receipts: Receipt[] };

export interface AnnouncedSignal {
  hrs_id: string;
  category: string;
  originator_id: string;
  measured_at: string;
  received_at: string;
  payload: Record<string, unknown>;
}

type Handler = (message: BusMessage) => void;
export type BusType = BusMessage['type'];

/** Instance-to-instance announcements, on one channel per kind under the configured prefix. */
export class Bus {
  private readonly handlers = new Map<BusMessage['type'], Set<Handler>>();
  private subscriber: Redis | undefined;
  /** This process's identity on the bus, so it can recognise its own announcements. */
  readonly instanceId = randomBytes(8).toString('hex');

  constructor(
    private readonly publisher: Redis,
    private readonly prefix: string,
    private readonly log?: Logger,
  ) {}

  channel(type: BusMessage['type']): string {
    return `${this.prefix}:bus:${type}`;
  }

  async publish(message: BusMessage): Promise<void> {
    await this.publisher.publish(this.channel(message.type), JSON.stringify(message));
  }

  /** Registers a handler; the first call for a type subscribes the shared subscriber connection. */
  async on(type: BusMessage['type'], handler: Handler): Promise<void> {
    let set = this.handlers.get(type);
    if (!set) {
      set = new Set();
      this.handlers.set(type, set);
      this.subscriber ??= await this.openSubscriber();
      await this.subscriber.subscribe(this.channel(type), (raw) => this.dispatch(type, raw));
    }
    set.add(handler);
  }

  private async openSubscriber(): Promise<Redis> {
    const subscriber = this.publisher.duplicate();
    subscriber.on('error', (err: Error) => this.log?.warn({ err }, 'redis subscriber error'));
    await subscriber.connect();
    return subscriber;
  }

  private dispatch(type: BusMessage['type'], raw: string): void {
    let message: BusMessage;
    try {
      message = JSON.parse(raw) as BusMessage;
    } catch (err) {
      this.log?.warn({ err, type }, 'unreadable bus message ignored');
      return;
    }
    for (const handler of this.handlers.get(type) ?? []) {
      try {
        handler(message);
      } catch (err) {
        this.log?.error({ err, type }, 'bus handler failed');
      }
    }
  }

  async close(): Promise<void> {
    const subscriber = this.subscriber;
    this.subscriber = undefined;
    if (subscriber?.isOpen) await subscriber.close().catch(() => subscriber.destroy());
  }
}
