import { setTimeout as sleep } from 'node:timers/promises';
import type { Logger } from 'pino';
import type { Sql } from '../db/connect.js';
import { unbounded } from '../db/deadline.js';
import { openMigrated } from '../db/migrate.js';
import { pingDatabase } from '../db/queries/health.js';
import { readReferenceData } from '../db/queries/reference.js';
import { readRegistryRows } from '../db/queries/registry.js';
import { publishedSignalBatches, SignalWriter } from '../db/queries/signals.js';
import { LiveStatus } from '../machines/live-status.js';
import { OpeningClock } from '../machines/opening-clock.js';
import { PublishedStatus } from './domain/status/published-status.js';
import { Verdicts } from './domain/status/verdict.js';
import { CallLogRecorder } from '../workers/call-log/producer.js';
import { startWorkers, type Workers } from '../workers/index.js';
import { QUEUES, openQueue, openQueues, type OpenQueues } from '../workers/queues.js';
import { IMPORT_AREA, ROOT_AREA } from './api/areas.js';
import { docRoutes } from './api/docs/routes.js';
import { legacyExportGuards } from './api/export-legacy/family.js';
import { exportV1Api } from './api/export-v1/index.js';
import { exportV11Api } from './api/export-v1.1/index.js';
import { exportV2Api, type ExportV2Api } from './api/export-v2/index.js';
import { Forecasts } from './api/forecast.js';
import { datex2Api, type Datex2Api } from './api/datex2/index.js';
import { exportV2Limits } from './api/export-v2/family.js';
import { streamStatusDoc } from './api/export-v2/docs/push.js';
import { healthRoutes } from './api/health/routes.js';
import { classifyUnavailable } from './api/unavailable.js';
import { importV1Api } from './api/import-v1/index.js';
import { importV11Api } from './api/import-v1.1/index.js';
import { importV2Api } from './api/import-v2/index.js';
import { indexRoutes } from './api/index-page/routes.js';
import { mapApi, type MapApi } from './api/map/index.js';
import { MailProducer } from '../workers/mail/producer.js';
import { EventLoopGuard, metricsApi, PlatformMetrics, QUEUE_STATES } from './api/metrics/index.js';
import { systemClock, type Clock } from './config/clock.js';
import type { Config } from './config/config.js';
import { RateLimiter, STORING_CHECK_INTERVAL_MS } from './infra/rate-limit.js';
import { HttpServer } from './http/server.js';
import { failedAuthLimit } from './api/auth.js';
import { Announcements, Announcer } from './infra/announce.js';
import { Bus, type RejoinReason } from './infra/bus.js';
import { namespaceFields, resolveNamespace } from './infra/namespace.js';
import { databaseIdentity } from '../db/queries/platform.js';
import { closeRedis, openRedis, pingRedis, type Redis } from './infra/redis.js';
import { watchRedis } from './infra/redis-outage.js';
import { Receipts, Rejections, TokenEvents } from './infra/receipts.js';
import { watchImportCalls, type ImportCallWatch } from './api/call-stats.js';
import { dashboardRoutes } from './push/dashboard-page.js';
import { createPush, type Push } from './push/push.js';
import { StreamSlots } from './infra/stream-slots.js';
import { STREAM_PATH } from './push/subscriptions.js';
import { Registry } from './registry/registry.js';
import { recheckPhotos, setUpSandbox } from './platform-chores.js';
import { TokenStore } from './registry/tokens.js';
import { accountFamilies } from './platform-accounts.js';
import { placesLoader } from './api/places.js';
import type { Families, PlatformParts } from './platform-parts.js';
import { Closers } from './platform-closers.js';
import { scheduleJobs } from '../workers/schedules.js';
import { VERSION } from './config/version.js';
import { expiringTokens } from '../db/queries/credential-reminders.js';
import { compileTrust } from './config/trust-proxy.js';
import { changeRecorder, type ChangeRecorder } from './push/webhooks/recorder.js';

/**
 * The composition root: builds every module with only what it needs, wires who tells whom (the bus,
 * registry reloads, the change stream), serves, and shuts down in order. Nothing else constructs
 * modules or hands them to each other.
 */

const LAST_USED_FLUSH_MS = 15_000;

export type { Families, PlatformParts };

export interface PlatformOptions {
  /** Run the BullMQ workers in this process (default true). */
  workers?: boolean;
  /** Registers further routes beside the platform's own (embedding, tests of the HTTP core). */
  routes?: (server: HttpServer, parts: PlatformParts & { families: Families }) => void;
  /** `hrs serve --processes`: HOST:PORT shared with the set's other processes, the metrics handed over (scrapes answer for all). */
  process?: { reusePort: true; metrics: (metrics: PlatformMetrics) => void };
  /** The clock of the published versions and dates (the system clock by default; tests step one). */
  clock?: Clock;
}

export interface RunningPlatform {
  port: number;
  /** The absolute base of links the API returns (BASE_URL, or the address actually listened on). */
  baseUrl: string;
  parts: PlatformParts;
  /** Ordered, idempotent shutdown; resolves when everything is closed. */
  stop(reason?: string): Promise<void>;
}

/** PostgreSQL (created and migrated when needed) and Redis; throws a clear error if either is unreachable. */
async function openStores(given: Readonly<Config>, log: Logger, closers: Closers): Promise<{ sql: Sql; redis: Redis; config: Readonly<Config> }> {
  const { sql, applied } = await openMigrated(given.databaseUrl, { timeoutMs: given.databaseTimeoutMs });
  closers.add('PostgreSQL', () => sql.end({ timeout: 5 }));
  if (applied.length > 0) log.info({ migrations: applied.map((m) => `${m.version}_${m.name}`) }, 'migrations applied');
  // The Redis namespace (REDIS_PREFIX, or derived from the database) before anything touches Redis.
  const config = Object.freeze(await resolveNamespace(given, () => databaseIdentity(sql)));
  log.info(namespaceFields(config), 'redis namespace');
  const redis = await openRedis(config.redisUrl, 'hrs', { waitMs: config.redisTimeoutMs, sentinel: config.redisSentinel });
  closers.add('Redis', () => closeRedis(redis));
  watchRedis(redis, log);
  return { sql, redis, config };
}

/** The in-memory state (registry, tokens, live status, receipts) and the bus that keeps it in step with other instances. */
async function openParts(given: Readonly<Config>, log: Logger, closers: Closers, clock: Clock): Promise<PlatformParts> {
  const { sql, redis, config } = await openStores(given, log, closers);
  const bus = new Bus(redis, config.redisPrefix, config.platformId!, log);
  closers.add('the bus', () => bus.close());
  const tokens = new TokenStore(sql, { sandbox: config.sandbox });
  const registry = new Registry(() => readRegistryRows(sql));
  const receipts = new Receipts(log);
  const rejections = new Rejections(log);
  const tokenEvents = new TokenEvents(log);
  const announcements = new Announcements(bus, redis, config.redisPrefix, log, { tokens, registry, receipts, rejections, tokenEvents });
  closers.add('the announcements', () => announcements.close());
  // At start, before any request: its transaction may take longer than a request may wait.
  await setUpSandbox(config, unbounded(sql), announcements, log);
  await recheckPhotos(unbounded(sql), announcements, log);
  const status = new LiveStatus(registry, log, {
    staleAfterMs: config.statusStaleAfterMs,
    unknownAfterMs: config.statusUnknownAfterMs,
    pricingStaleAfterMs: config.statusPricingStaleAfterMs,
  });
  closers.add('the live status', () => status.close());
  registry.onReload((changed) => status.stationsChanged(changed));
  const opening = new OpeningClock(registry);
  closers.add('the opening clock', () => opening.close());
  registry.onReload((changed) => opening.stationsChanged(changed));
  const verdicts = new Verdicts({ stations: registry, status, opening, now: () => clock.now(), nowMs: clock.nowMs ? () => clock.nowMs!() : undefined });
  registry.onReload(() => verdicts.forget(registry));
  const published = new PublishedStatus(status, verdicts, registry);
  const loading = performance.now();
  await registry.reload();
  // The first load reports every station as changed: the opening clock has scheduled them all.
  log.info({ stations: registry.size, ms: Math.round(performance.now() - loading) }, 'registry loaded');
  // Listen before restoring: a reading announced meanwhile is applied either way (the newer wins).
  await announcements.listen((signals) => status.publish(signals));
  const started = performance.now();
  // At start, one cursor over every published reading: longer than a request may wait.
  const restored = await status.restore(publishedSignalBatches(unbounded(sql)));
  log.info({ actors: restored, ms: Math.round(performance.now() - started) }, 'live status restored');
  const catchUp = catchUpAfterRejoin({ sql, log, tokens, registry, status });
  bus.onRejoined(catchUp.run);
  closers.add('the catch-up after the bus rejoined', catchUp.stop);
  bus.watchHearing();
  const reference = await readReferenceData(sql);
  const callLog = new CallLogRecorder(openQueue(QUEUES.callLog, redis, config.redisPrefix, log), log, redis);
  closers.add('the call log', () => callLog.close());
  return { config, log, clock, sql, redis, bus, announcements, tokens, registry, reference, status, verdicts, published, receipts, tokenEvents, rejections, opening, callLog, places: placesLoader() };
}

/**
 * What the bus would have told this instance while its subscriber could not hear (it reconnected, or
 * was found deaf: Bus.onRejoined), read again from the stores: the token cache emptied, the registry
 * reloaded, and the published readings newer than those held applied as if announced (their changes
 * reach the streams and webhooks). One at a time; a rejoin meanwhile runs it once more after.
 */
function catchUpAfterRejoin(parts: Pick<PlatformParts, 'sql' | 'log' | 'tokens' | 'registry' | 'status'>): { run: (why: RejoinReason) => void; stop: () => Promise<void> } {
  const { sql, log, tokens, registry, status } = parts;
  let running: Promise<void> | undefined;
  let again: RejoinReason | undefined;
  let stopped = false;
  const once = async (why: RejoinReason) => {
    const started = performance.now();
    tokens.invalidate();
    await registry.reload();
    const applied = await status.catchUp(publishedSignalBatches(unbounded(sql)));
    // After a reconnection, part of the Redis outage already reported once (a debug line); after deafness, info.
    log[why === 'deaf' ? 'info' : 'debug']({ why, applied, ms: Math.round(performance.now() - started) }, 'caught up with what the bus may have missed');
  };
  const run = (why: RejoinReason) => {
    if (stopped) return;
    if (running) {
      again = why;
      return;
    }
    running = (async () => {
      for (let next: RejoinReason | undefined = why; next !== undefined && !stopped; next = again, again = undefined) {
        try {
          await once(next);
        } catch (err) {
          // At shutdown the stores close under it: nothing to report then.
          if (!stopped) log.warn({ err, why: next }, 'catching up with what the bus may have missed failed: the next announcements bring the rest');
        }
      }
      running = undefined;
    })();
  };
  return {
    run,
    stop: async () => {
      stopped = true;
      await running;
    },
  };
}

interface Served {
  server: HttpServer;
  push: Push;
  families: Families;
  exportV2: ExportV2Api;
  datex2: Datex2Api;
  /** The queues metrics count jobs in (closed at shutdown). */
  queues: OpenQueues;
  /** Where committed readings are announced (the last announced at shutdown). */
  outlet: Announcer;
  /** Import calls counted and refused ones announced (the last counts added at shutdown). */
  calls: ImportCallWatch;
  /** The public map and its feed; none with PUBLIC_MAP=false. */
  map: MapApi | undefined;
  /** Status and fuelling-option changes written to the change log for webhooks. */
  recorder: ChangeRecorder;
  /** Stalls of the event loop, reported in the log and the metrics. */
  loop: EventLoopGuard;
  /** Tells the status streams, the admins' feed and the map's streams that the server goes (1001), ahead of their turn. */
  closeSockets: () => Promise<void>;
}

/** Every family's routes, the push layer, the dashboard and the documents on one server. */
function serve(parts: PlatformParts, lifecycle: Lifecycle, options: PlatformOptions, closers: Closers): Served {
  const { config, log, sql, redis, bus, announcements, tokens, registry, reference, status } = parts;
  const metrics = new PlatformMetrics(VERSION);
  options.process?.metrics(metrics);
  const server = new HttpServer({
    log,
    maxBodyBytes: config.maxBodyBytes,
    fallback: ROOT_AREA,
    classify: classifyUnavailable,
    onAnswered: metrics.answered,
    trustProxy: compileTrust(config.trustProxy),
    socketMaxAgeSeconds: config.pushMaxAgeSeconds,
  });
  // Every queue, opened once: producers that need no queue of their own use them, metrics count their jobs.
  const queues = openQueues(parts.redis, parts.config.redisPrefix);
  closers.add('the queues', () => queues.close());
  server.family(IMPORT_AREA);
  const limiter = new RateLimiter(redis, config.redisPrefix, config.rateLimitTimeoutMs);
  // The imports' checks gather for longer: their answers wait for a COMMIT in any case.
  const importLimiter = new RateLimiter(redis, config.redisPrefix, config.rateLimitTimeoutMs, STORING_CHECK_INTERVAL_MS);
  // Keys of their own (`{prefix}:auth:rl:…`), apart from the families' rate limits.
  server.watchAuthentication(failedAuthLimit(new RateLimiter(redis, `${config.redisPrefix}:auth`, config.rateLimitTimeoutMs), log));
  const legacy = { tokens, reference };
  healthRoutes(server, ROOT_AREA, {
    isStopping: () => lifecycle.stopping,
    pingDatabase: () => pingDatabase(sql),
    pingRedis: () => pingRedis(redis),
  });
  const outlet = new Announcer(bus, log, { apply: (signals) => status.publish(signals), receive: (receipts) => parts.receipts.emit(receipts) });
  // Other instances hear of the last readings before the bus closes.
  closers.add('the announcer', () => outlet.flushed());
  const importV2 = importV2Api(server, { sql, tokens, limiter: importLimiter, log, registry, perMinute: config.importV2RateLimit, callLog: parts.callLog, metrics, outlet });
  const legacyImport = {
    sql, tokens, reference, limiter: importLimiter, log, registry, outlet, callLog: parts.callLog,
    perMinute: config.importV1RateLimit,
    writer: new SignalWriter(sql, { onCommit: metrics.committed }),
    counted: metrics.legacySignals,
  };
  // One set of learned models: export v2, the map and the portal give the same figures.
  const forecasts = new Forecasts({ sql, stations: registry, availability: status, now: () => parts.clock.now(), retentionDays: config.historyRetentionDays });
  const { admin, portal } = accountFamilies(parts, server, { baseUrl: lifecycle.baseUrl, mailQueue: queues.get(QUEUES.mail), limiter, forecasts });
  const legacyExport = {
    ...legacy, sql, baseUrl: lifecycle.baseUrl, now: () => parts.clock.now(), stations: registry, status, opening: parts.opening,
    guards: legacyExportGuards({ limiter, log, perMinute: config.exportV1RateLimit, sandboxPerMinute: config.sandboxRateLimit }),
  };
  const exportV2 = exportV2Api(server, {
    sql, tokens, limiter, limits: exportV2Limits(config), log, reference, status: parts.published, baseUrl: lifecycle.baseUrl,
    stations: registry, unknownAfterMs: config.statusUnknownAfterMs, retentionDays: config.historyRetentionDays, deletedRetentionDays: config.deletedRetentionDays,
    now: () => parts.clock.now(), forecasts,
  });
  const datex2 = datex2Api(server, {
    sql, tokens, limiter, limits: exportV2Limits(config), log, status, stations: registry, opening: parts.opening, publisher: config.datex2Publisher,
    now: () => parts.clock.now(),
  });
  const families: Families = {
    root: ROOT_AREA,
    import_v1: importV1Api(server, legacyImport),
    'import_v1.1': importV11Api(server, legacyImport),
    import_v2: importV2,
    export_v1: exportV1Api(server, legacyExport),
    'export_v1.1': exportV11Api(server, legacyExport),
    export_v2: exportV2.family,
    datex2: datex2.family,
    admin,
    portal,
  };
  const calls = watchImportCalls(server, [families.import_v1, families['import_v1.1'], families.import_v2], {
    sql, log, rejected: (list) => announcements.rejected(list),
  });
  closers.add('the import call watch', () => calls.close());
  const push = pushLayer(parts, server, families, exportV2.authenticate);
  const closePush = closers.add('the status streams', () => push.close());
  // Driver alerts' confirmation links go by the mail queue; a confirmed alert has the option changes recorded at once.
  const alertMail = new MailProducer(queues.get(QUEUES.mail), redis, log, config.mailRetryMs);
  let recorder: ChangeRecorder | undefined;
  const map = mapApi(server, {
    config, sql, redis, limiter, log, stations: registry, status, opening: parts.opening, openingChanges: parts.opening, baseUrl: lifecycle.baseUrl,
    now: () => parts.clock.now(), places: parts.places, forecasts,
    alerts: {
      sendLink: (to, mail) => alertMail.sendLink(to, mail),
      mailReady: () => alertMail.ready(),
      confirmed: async () => await recorder?.refreshTopics(),
    },
  });
  const closeMap = closers.add('the map', () => map?.close());
  dashboardRoutes(server, families.admin);
  metricsApi(server, { adminToken: config.adminToken, metricsToken: config.metricsToken, metrics });
  indexRoutes(server, ROOT_AREA, { baseUrl: lifecycle.baseUrl, version: VERSION, streamPath: STREAM_PATH, ...(map ? { mapPage: map.page } : {}) });
  metrics.watch({
    actors: () => status.countByFreshness(), push: () => push.connections, queues: () => queues.counts(QUEUE_STATES), datex2LeftOut: () => datex2.publications.leftOutCounts(),
    ...(map ? { mapStreams: () => map.openStreams } : {}),
  });
  // The last changes are recorded before PostgreSQL closes.
  recorder = changeRecorder({ sql, status, opening: parts.opening, stations: registry, log, counted: metrics.webhookChanges });
  const recording = recorder;
  closers.add('the change recorder', () => recording.close());
  const loop = new EventLoopGuard({ log, thresholdMs: config.eventLoopStallMs, registry: metrics.registry, sections: server });
  closers.add('the event loop guard', () => loop.stop());
  const closeSockets = async () => {
    await closePush();
    await closeMap();
  };
  return { server, push, families, exportV2, datex2, queues, calls, outlet, map, recorder: recording, loop, closeSockets };
}

/** The status stream and the admins' feed, on the export v2 and admin families. */
function pushLayer(parts: PlatformParts, server: HttpServer, families: Families, authenticate: ExportV2Api['authenticate']): Push {
  const { config, log, redis } = parts;
  return createPush({
    server,
    families: { stream: families.export_v2, admin: families.admin },
    log,
    settings: {
      streamsPerUser: config.pushStreamsPerUser, authTimeoutMs: config.pushAuthTimeoutMs,
      idleTimeoutSeconds: config.pushIdleTimeoutSeconds, maxBacklogBytes: config.pushMaxBacklogBytes,
    },
    // The stream's status objects are export v2's, verdicts included; changes come from the live status.
    status: {
      onChange: (listener) => parts.status.onChange(listener),
      categories: (hrsId) => parts.status.categories(hrsId),
      stationJson: (hrsId) => parts.published.stationJson(hrsId),
      allJson: () => parts.published.allJson(),
    },
    verdicts: parts.verdicts,
    streamDoc: streamStatusDoc(config.pushStreamsPerUser),
    receipts: parts.receipts,
    opening: parts.opening,
    tokenEvents: parts.tokenEvents,
    rejections: parts.rejections,
    stations: parts.registry,
    slots: new StreamSlots(redis, config.redisPrefix, config.pushStreamsPerUser, log.child({ component: 'push' })),
    recheck: async (credential) => void (await authenticate(credential)),
    expiringTokens: (now, withinMs, limit) => expiringTokens(parts.sql, now, withinMs, limit),
  });
}

/** Who tells whom once everything is built: registry reloads and token changes reach the routes and streams. */
async function wire(parts: PlatformParts, served: Served): Promise<void> {
  const { registry, announcements, log } = parts;
  registry.onReload((changed) => served.exportV2.stationsChanged(changed, registry));
  registry.onReload((changed) => served.push.stationsChanged(changed));
  registry.onReload(() => served.map?.stationsChanged());
  // The DATEX II status is served from memory: its registry rows are read at start and after every reload.
  const readForDatex2 = () => served.datex2.publications.refresh().catch((err: unknown) => log.warn({ err }, 'reading the registry for DATEX II failed'));
  registry.onReload(readForDatex2);
  void readForDatex2();
  announcements.onTokensChanged(() => served.push.tokensChanged());
  await scheduleJobs(served.queues, parts.config, log);
  served.push.start();
  // Not awaited: with a large registry the map's first settling takes seconds, and nothing else waits
  // for it (a feed request waits for the stations' static fields, a stream's hello too).
  void served.map?.start();
  registry.onReload((changed) => served.recorder.stationsChanged(changed));
  await served.recorder.start();
}

/** Where the running platform stands: stopping (readiness says 503), and the port it listens on. */
class Lifecycle {
  stopping = false;
  port: number | undefined;

  constructor(private readonly config: Readonly<Config>) {}

  /** Links name BASE_URL, or, when derived from HOST and PORT, the port actually bound (PORT=0). */
  readonly baseUrl = (): string =>
    this.config.baseUrlDerived && this.port !== undefined ? `http://${this.config.host}:${this.port}` : this.config.baseUrl;
}

/** `hrs serve`: connections, routes, workers, and the shutdown that undoes them in the reverse order. */
export async function startPlatform(given: Config, log: Logger, options: PlatformOptions = {}): Promise<RunningPlatform> {
  const closers = new Closers(log);
  let parts: PlatformParts;
  let lifecycle: Lifecycle;
  let workers: Workers | undefined;
  try {
    parts = await openParts(Object.freeze({ ...given }), log, closers, options.clock ?? systemClock);
    // With its namespace settled (src/infra/namespace.ts).
    const config = parts.config;
    lifecycle = new Lifecycle(config);
    const served = serve(parts, lifecycle, options, closers);
    await wire(parts, served);
    docRoutes(served.server, { config, reference: parts.reference });
    options.routes?.(served.server, { ...parts, families: served.families });
    workers = options.workers === false ? undefined : startWorkers(config, parts.redis, parts.sql, log, { stations: () => parts.registry });
    const started = workers;
    if (started) closers.add('the workers', () => started.close());
    const tokens = parts.tokens;
    const flushLastUsed = () => tokens.flushLastUsed().catch((err) => log.warn({ err }, 'recording token last-used times failed'));
    const flushTimer = setInterval(flushLastUsed, LAST_USED_FLUSH_MS).unref();
    closers.add('the last-used times', async () => {
      clearInterval(flushTimer);
      await flushLastUsed();
    });
    lifecycle.port = await served.server.listen(config.host, config.port, { reusePort: options.process?.reusePort === true });
    closers.add('the listener', () => stopServing(config, log, served, lifecycle));
  } catch (err) {
    await closers.close().catch(() => {});
    throw err;
  }
  // started_ms: since the process started (what a restart costs before requests are answered).
  log.info({ host: parts.config.host, port: lifecycle.port, base_url: lifecycle.baseUrl(), workers: workers?.names ?? [], started_ms: Math.round(performance.now()) }, 'listening');
  let stopping: Promise<void> | undefined;
  const stop = (reason = 'stop requested') =>
    (stopping ??= (async () => {
      log.info({ reason }, 'shutting down');
      await closers.close();
      log.info('stopped');
    })());
  return { port: lifecycle.port, baseUrl: lifecycle.baseUrl(), parts, stop };
}

/**
 * The listener's part of the shutdown (the first, as it started last): readiness turns 503,
 * SHUTDOWN_DELAY, the listen socket closes, WebSockets are told (1001), requests in flight finish (up
 * to SHUTDOWN_TIMEOUT). Then the rest stops in the reverse order it started: last-used times written,
 * workers finishing their jobs, the change recorder, the import call watch, the last announcements,
 * the queues, the call log, the live status, the bus, Redis and PostgreSQL.
 */
async function stopServing(config: Readonly<Config>, log: Logger, served: Served, lifecycle: Lifecycle): Promise<void> {
  lifecycle.stopping = true;
  if (config.shutdownDelayMs > 0) await sleep(config.shutdownDelayMs);
  served.server.stopListening();
  // WebSockets are told at once (1001): they reconnect elsewhere while requests drain.
  await served.closeSockets();
  if (!(await drained(served.server, config.shutdownTimeoutMs))) log.warn('requests still in flight at the shutdown timeout');
  served.server.closeConnections();
}

/** Whether every request in flight finished within the timeout. */
async function drained(server: HttpServer, timeoutMs: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const done = await Promise.race([
    server.drained().then(() => true),
    new Promise<false>((resolve) => (timer = setTimeout(() => resolve(false), timeoutMs))),
  ]);
  clearTimeout(timer);
  return done;
}
