import type { PlacesLoader } from './api/places.js';
import type { Logger } from 'pino';
import type { Sql } from '../db/connect.js';
import type { ReferenceData } from '../db/queries/reference.js';
import type { LiveStatus } from '../machines/live-status.js';
import type { OpeningClock } from '../machines/opening-clock.js';
import type { CallLogRecorder } from '../workers/call-log/producer.js';
import type { Clock } from './config/clock.js';
import type { PublishedStatus } from './domain/status/published-status.js';
import type { Verdicts } from './domain/status/verdict.js';
import type { Config } from './config/config.js';
import type { Family } from './http/family.js';
import type { Announcements } from './infra/announce.js';
import type { Bus } from './infra/bus.js';
import type { Rejections, Receipts, TokenEvents } from './infra/receipts.js';
import type { Redis } from './infra/redis.js';
import type { Registry } from './registry/registry.js';
import type { TokenStore } from './registry/tokens.js';

/**
 * What the composition root builds first and hands on, in a file of its own so the root
 * (src/platform.ts) and its part for people (src/platform-accounts.ts) both read it without reading
 * each other.
 */

/** Every API family as built, by name (tests add routes to them). */
export interface Families {
  root: Family;
  import_v1: Family;
  'import_v1.1': Family;
  import_v2: Family;
  export_v1: Family;
  'export_v1.1': Family;
  export_v2: Family;
  datex2: Family;
  admin: Family;
  portal: Family;
}

/** The running platform's parts, for the one that started it (the `hrs` command, tests); modules never get this. */
export interface PlatformParts {
  readonly config: Readonly<Config>;
  readonly log: Logger;
  /** The clock of the times published as versions and dates (`Last-Modified`, the stations' `static_modified_at`). */
  readonly clock: Clock;
  readonly sql: Sql;
  readonly redis: Redis;
  readonly bus: Bus;
  /** What this instance tells the other instances of its changes, and what it hears of theirs. */
  readonly announcements: Announcements;
  readonly tokens: TokenStore;
  /** Stations, confirmed layouts, assignments in memory; reloaded on every registry announcement. */
  readonly registry: Registry;
  readonly reference: ReferenceData;
  /** Live status per station and signal category (the freshness actors), served from memory. */
  readonly status: LiveStatus;
  /** Every station's verdict per fuelling option and as a whole, as every face shows it. */
  readonly verdicts: Verdicts;
  /** Export v2's status objects: the live status with the verdicts (REST and the status stream). */
  readonly published: PublishedStatus;
  /** Receipts of testing and unassigned transmissions, this instance's and announced ones (admins' live feed). */
  readonly receipts: Receipts;
  /** Stations opening and closing by their opening hours (admins' live feed). */
  readonly opening: OpeningClock;
  /** Personal tokens created, changed, revoked and reminded of, on every instance (admins' live feed). */
  readonly tokenEvents: TokenEvents;
  /** Refused import calls of every instance, for the admins' feed. */
  readonly rejections: Rejections;
  /** Records API calls per originator (enqueues; the call-log worker writes them). */
  readonly callLog: CallLogRecorder;
  /** The place names of the map and the nearest town beside the portal's pin, made on first use. */
  readonly places: PlacesLoader;
}
