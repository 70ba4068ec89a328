import { isSandboxId } from '../domain/sandbox.js';
import type { TemplatedApp } from 'uWebSockets.js';
import type { LiveStatus, StatusChange } from '../../machines/live-status.js';
import type { StationLookup } from '../domain/stations.js';
import type { Receipt } from '../domain/signals.js';
import type { ReceiptListener } from '../infra/receipts.js';
import type { OpeningChange, OpeningListener } from '../../machines/opening-clock.js';
import { changeMessage, mayRepeat, openingMessage, receiptMessage, registryMessage, rejectionMessage, sectionValue, tokenMessage, type SectionSeen, type VerdictSource } from './admin-view.js';
import { SECTION_KEYS } from '../domain/categories/index.js';
import type { Rejection } from '../domain/rejections.js';
import type { TokenEvent } from '../domain/token-events.js';

/**
 * The fan-out: what changed reaches the subscribers through uWS topics (`app.publish`), fed by this
 * instance's change stream (LiveStatus.onChange, which every instance feeds from the bus, so a change
 * accepted anywhere reaches every instance's subscribers), the receipt stream and registry reloads.
 *
 * Topics: `status/{hrs_id}` and `status/*` carry `status` and `removed` messages; `admin` carries
 * the admins' `change`, `receipt`, `station` and `removed` messages. Changes of one event-loop turn are
 * coalesced: a station changed several times in one turn gets one `status` message with its status
 * after the turn, and none when its status object did not change (a freshness step that changes no
 * published section). An admins' `change` carries the section they last saw (`previous_section`, see
 * adminChange); a repeat of the published value goes out (the table's times move) but is not kept in
 * the tail that admins get on connecting.
 */

/** Every station's `status` and `removed` messages. */
export const ALL_TOPIC = 'status/*';
/** The admins' feed. */
export const ADMIN_TOPIC = 'admin';
/** One station's `status` and `removed` messages. */
export const stationTopic = (hrsId: string) => `status/${hrsId}`;

export interface FanOutDeps {
  app: Pick<TemplatedApp, 'numSubscribers' | 'publish'>;
  status: Pick<LiveStatus, 'onChange' | 'stationJson' | 'categories'>;
  receipts: { on(listener: ReceiptListener): () => void };
  /** Stations opening and closing by their opening hours: `opening` messages on the admins' feed. */
  opening?: { onChange(listener: OpeningListener): () => void };
  /** Personal tokens' events: `token` messages on the admins' feed. */
  tokenEvents?: { on(listener: (events: readonly TokenEvent[]) => void): () => void };
  /** Refused import calls: `rejection` messages on the admins' feed. */
  rejections?: { on(listener: (rejections: readonly Rejection[]) => void): () => void };
  stations: StationLookup;
  /** Each station's verdict, which the admins' messages carry. */
  verdicts?: VerdictSource;
  /** Called after each turn's messages are published (the backlog check). */
  published: () => void;
}

/** How many tail messages an admin gets on connecting (the dashboard keeps as many). */
export const TAIL_KEPT = 200;
const ADMIN_LINGER_MS = 60_000;

export class FanOut {
  private readonly dirty = new Set<string>();
  /** The admins' messages of this turn, and whether each goes into the tail too. */
  private adminQueue: { json: string; tail: boolean }[] = [];
  /**
   * Per station and section key, the section as the admins' feed last carried it (a snapshot or a
   * change), for the next change's `previous_section`. Kept while admins listen; every snapshot sets
   * it anew, so what was missed while nobody listened is made good when somebody connects. `value` is
   * the section's `sectionValue`, made once when a repeat check first needs it (not once per check).
   */
  private readonly adminSections = new Map<string, { section: Record<string, unknown> | null; value?: string }>();
  /** The admins' tail as last published (changes, receipts, openings, tokens, rejections), newest last. */
  private readonly tail: string[] = [];
  /** Until when admin messages are built though nobody listens: an admin reloading the page misses nothing. */
  private adminsUntil = 0;
  private flushing = false;
  /** The status object last sent per station, so an unchanged status is not sent again. */
  private readonly lastSent = new Map<string, string>();
  private readonly unsubscribe: (() => void)[] = [];
  private stopped = false;

  constructor(private readonly deps: FanOutDeps) {}

  /** Listens to the change stream and the receipts. */
  start(): void {
    this.unsubscribe.push(this.deps.status.onChange((change) => this.changed(change)));
    this.unsubscribe.push(this.deps.receipts.on((receipts) => this.received(receipts)));
    if (this.deps.opening) this.unsubscribe.push(this.deps.opening.onChange((change) => this.openingChanged(change)));
    if (this.deps.tokenEvents) this.unsubscribe.push(this.deps.tokenEvents.on((events) => this.tokensChanged(events)));
    if (this.deps.rejections) this.unsubscribe.push(this.deps.rejections.on((rejections) => this.rejected(rejections)));
  }

  /** What an admin's snapshot carries, kept for the next change's `previous_section`. */
  readonly seen: SectionSeen = (hrsId, category, section) => {
    this.adminSections.set(`${hrsId}\u0000${category}`, { section });
  };

  /** The admins' recent tail, oldest first, as a `tail` message (sent to an admin after the snapshot). */
  tailMessage(): string {
    return `{"type":"tail","events":[${this.tail.join(',')}]}`;
  }

  /** Stops listening; nothing more is published. */
  stop(): void {
    this.stopped = true;
    for (const stop of this.unsubscribe.splice(0)) stop();
  }

  /** After a registry reload: the stations added, removed, or whose published status may differ. */
  stationsChanged(changed: ReadonlySet<string>): void {
    if (this.stopped) return;
    const admins = this.adminsListening;
    for (const id of changed) {
      this.dirty.add(id);
      if (admins) this.adminQueue.push({ json: registryMessage(this.deps.stations, this.deps.status, id, this.deps.verdicts), tail: false });
    }
    this.schedule();
  }

  /**
   * Whether anybody reads the admins' feed on this instance, or did within the last minute (otherwise
   * its messages are not even built).
   */
  private get adminsListening(): boolean {
    if (this.deps.app.numSubscribers(ADMIN_TOPIC) > 0) {
      this.adminsUntil = Date.now() + ADMIN_LINGER_MS;
      return true;
    }
    return Date.now() < this.adminsUntil;
  }

  private rejected(rejections: readonly Rejection[]): void {
    if (this.stopped || !this.adminsListening) return;
    for (const r of rejections) this.adminQueue.push({ json: rejectionMessage(r), tail: true });
    this.schedule();
  }

  /** A station opening or closing changes its verdict: its status object goes out again, and admins hear of it. */
  private openingChanged(change: OpeningChange): void {
    if (this.stopped) return;
    this.dirty.add(change.hrsId);
    if (this.adminsListening) this.adminQueue.push({ json: openingMessage(change, this.deps.verdicts), tail: true });
    this.schedule();
  }

  private tokensChanged(events: readonly TokenEvent[]): void {
    if (this.stopped || !this.adminsListening) return;
    for (const event of events) this.adminQueue.push({ json: tokenMessage(event), tail: true });
    this.schedule();
  }

  private changed(change: StatusChange): void {
    if (this.stopped) return;
    this.dirty.add(change.hrsId);
    if (this.adminsListening) this.adminChange(change);
    this.schedule();
  }

  /** The admins' `change`, with the section they last saw; a repeat of the published value stays out of the tail. */
  private adminChange(change: StatusChange): void {
    const category = SECTION_KEYS[change.category];
    const key = `${change.hrsId}\u0000${category}`;
    const previous = this.adminSections.get(key);
    const kept: { section: Record<string, unknown> | null; value?: string } = { section: change.section };
    // isRepeat, with each section's value serialised once: the previous one's was made as the last change's.
    let repeat = false;
    if (mayRepeat(change)) {
      kept.value = sectionValue(kept.section);
      repeat = kept.value === (previous ? (previous.value ??= sectionValue(previous.section)) : sectionValue(null));
    }
    if (change.cause === 'removed') this.adminSections.delete(key);
    else this.adminSections.set(key, kept);
    this.adminQueue.push({ json: changeMessage(change, previous?.section ?? null, repeat, this.deps.verdicts), tail: !repeat });
  }

  private received(receipts: readonly Receipt[]): void {
    if (this.stopped || !this.adminsListening) return;
    const at = new Date().toISOString();
    for (const r of receipts) this.adminQueue.push({ json: receiptMessage(r, at), tail: true });
    this.schedule();
  }

  private schedule(): void {
    if (this.flushing) return;
    this.flushing = true;
    setImmediate(() => this.flush());
  }

  private flush(): void {
    this.flushing = false;
    if (this.stopped) return;
    const { app, status } = this.deps;
    for (const id of this.dirty) {
      // The export v1.1 sandbox's stations are never on the status stream (export v2).
      if (isSandboxId(id)) continue;
      const topic = stationTopic(id);
      if (app.numSubscribers(topic) + app.numSubscribers(ALL_TOPIC) === 0) {
        // Nobody to tell: forget what was sent, so the next change goes out to whoever subscribes.
        this.lastSent.delete(id);
        continue;
      }
      const json = status.stationJson(id);
      // Undefined only for a station that left the registry (changes name registered stations).
      const message = json === undefined ? JSON.stringify({ type: 'removed', hrs_id: id }) : `{"type":"status","station":${json}}`;
      if (json === undefined) this.lastSent.delete(id);
      else if (this.lastSent.get(id) === json) continue;
      else this.lastSent.set(id, json);
      app.publish(topic, message);
      app.publish(ALL_TOPIC, message);
    }
    this.dirty.clear();
    const admin = this.adminQueue;
    this.adminQueue = [];
    for (const message of admin) {
      app.publish(ADMIN_TOPIC, message.json);
      // Registry rows (`station`, `removed`) are the table's, not the tail's; nor are repeats.
      if (message.tail) this.tail.push(message.json);
    }
    if (this.tail.length > TAIL_KEPT) this.tail.splice(0, this.tail.length - TAIL_KEPT);
    this.deps.published();
  }
}
