import type { Logger } from 'pino';
import type { ExpiringTokenRow } from '../../db/queries/credential-reminders.js';
import { expiringTokensMessage, expiringTokensView } from './admin-view.js';

/**
 * The tokens expiring soon that the admins' dashboard lists (every kind: import, legacy export and
 * personal tokens, neither revoked nor of a deactivated owner, expiring within 30 days), kept in memory
 * so that the feed's snapshot carries them without waiting for PostgreSQL. Read again on each snapshot
 * sent (an admin connecting), on every token change (revoked, created, expiry changed, a registry
 * file loaded) and every few minutes while admins are connected (time brings tokens into the window);
 * when the list changes, an `expiring_tokens` message goes to every admin. A failed read keeps the last
 * list (the dashboard still shows it).
 */

/** The window the dashboard lists, as the first reminder: 30 days. */
export const EXPIRING_WITHIN_MS = 30 * 86_400_000;
/** At most this many are listed (soonest first); the admin API lists them all. */
export const EXPIRING_LIMIT = 500;
const REFRESH_EVERY_MS = 5 * 60_000;

export interface ExpiringTokensDeps {
  /** Reads the list (db/queries/credential-reminders.ts `expiringTokens`). */
  read: (now: Date, withinMs: number, limit: number) => Promise<ExpiringTokenRow[]>;
  /** Sends a message to every admin connected to this instance. */
  publish: (message: string) => void;
  /** Whether any admin is connected to this instance (the timer reads only then). */
  listening: () => boolean;
  log: Logger;
  refreshEveryMs?: number;
}

export class ExpiringTokens {
  /** The list as JSON (an array), or null before the first read. */
  private json: string | null = null;
  private reading = false;
  private again = false;
  private timer: NodeJS.Timeout | undefined;
  private stopped = false;

  constructor(private readonly deps: ExpiringTokensDeps) {}

  start(): void {
    this.timer = setInterval(() => {
      if (this.deps.listening()) this.refresh();
    }, this.deps.refreshEveryMs ?? REFRESH_EVERY_MS);
    this.timer.unref();
  }

  stop(): void {
    this.stopped = true;
    clearInterval(this.timer);
  }

  /** The list for the snapshot: JSON text, `null` while not read yet. */
  current(): string {
    return this.json ?? 'null';
  }

  /** Reads the list again (one read at a time; a request meanwhile makes one more after it). */
  refresh(): void {
    if (this.stopped) return;
    if (this.reading) {
      this.again = true;
      return;
    }
    this.reading = true;
    void this.read().finally(() => {
      this.reading = false;
      if (this.again) {
        this.again = false;
        this.refresh();
      }
    });
  }

  private async read(): Promise<void> {
    try {
      const rows = await this.deps.read(new Date(), EXPIRING_WITHIN_MS, EXPIRING_LIMIT);
      const json = JSON.stringify(rows.map(expiringTokensView));
      if (json === this.json || this.stopped) return;
      this.json = json;
      this.deps.publish(expiringTokensMessage(json));
    } catch (err) {
      this.deps.log.debug({ err }, 'the tokens expiring soon could not be read: the dashboard keeps the last list');
    }
  }
}
