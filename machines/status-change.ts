import type { Category } from '../src/domain/categories/index.js';
import type { Freshness } from './freshness.js';
import type { Actor } from './status-actor.js';

/**
 * One event of the change stream: a section's published content or its freshness changed.
 * - `signal`: a live reading replaced the published one;
 * - `freshness`: the reading aged into `stale` or `unknown`;
 * - `registry`: the station's layout or assignments changed what may be published;
 * - `removed`: the station left the registry.
 * `section` is the section as the status endpoints now publish it (null: not published).
 */
export interface StatusChange {
  hrsId: string;
  category: Category;
  cause: 'signal' | 'freshness' | 'registry' | 'removed';
  previous: Freshness | null;
  freshness: Freshness | null;
  section: Record<string, unknown> | null;
  /** The held reading's measurement and receipt times (epoch ms) and who sent it. */
  datetime: number;
  receivedAt: number;
  originatorId: string;
}

/** One station and category as the admins' live view shows it (see `LiveStatus.categories`). */
export interface CategoryView {
  freshness: Freshness;
  datetime: number;
  receivedAt: number;
  originatorId: string;
  /** The section as published (null: not published). */
  section: Record<string, unknown> | null;
}

export type ChangeListener = (change: StatusChange) => void;

/** Where the actors report (a pino logger fits): freshness steps at debug level, failing listeners as errors. */
export interface StatusLog {
  debug(fields: object, message: string): void;
  error(fields: object, message: string): void;
}

/** The section an actor publishes in a freshness (null: not published). */
export type SectionOf = (actor: Actor, freshness: Freshness) => Record<string, unknown> | null;

/**
 * The change as listeners get it; without `section` the section is made (and kept serialised) the
 * first time a listener reads it, which listeners do during their call.
 */
export function changeOf(
  actor: Actor,
  sectionOf: SectionOf,
  cause: StatusChange['cause'],
  previous: Freshness | null,
  freshness: Freshness | null,
  section?: StatusChange['section'],
): StatusChange {
  let made = section;
  return {
    hrsId: actor.hrsId,
    category: actor.category,
    cause,
    previous,
    freshness,
    get section() {
      if (made === undefined) {
        made = freshness === null ? null : sectionOf(actor, freshness);
        actor.json ??= JSON.stringify(made);
      }
      return made;
    },
    datetime: actor.reading.datetime,
    receivedAt: actor.reading.receivedAt,
    originatorId: actor.originatorId,
  };
}

/** The listeners of the change stream; one failing listener is logged and the others still hear. */
export class ChangeStream {
  private readonly listeners = new Set<ChangeListener>();

  constructor(private readonly log: StatusLog) {}

  /** Subscribes; returns the unsubscribe function. */
  subscribe(listener: ChangeListener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** Whether anybody listens (nothing is made for a change nobody hears). */
  get listening(): boolean {
    return this.listeners.size > 0;
  }

  emit(change: StatusChange): void {
    for (const listener of this.listeners) {
      try {
        listener(change);
      } catch (err) {
        this.log.error({ err, hrs_id: change.hrsId, category: change.category }, 'status change listener failed');
      }
    }
  }
}
