import type { Logger } from 'pino';
import { ensureDatabase, openDatabase } from '../db/connect.js';
import { migrate } from '../db/migrate.js';
import { readReferenceData } from '../db/queries/reference.js';
import { CallLogRecorder } from '../workers/call-log.js';
import { startWorkers, type Workers } from '../workers/index.js';
import { QUEUES, openQueue } from '../workers/queues.js';
import { adminCallLogRoutes } from './api/admin/call-logs.js';
import { adminTokenRoutes } from './api/admin/tokens.js';
import { docRoutes } from './api/docs/routes.js';
import { healthRoutes } from './api/health/routes.js';
import { statusRoutes } from './api/export-v2/status.js';
import { stationRoutes } from './api/export-v2/stations.js';
import { activeStationsRoute } from './api/import-v2/active-stations.js';
import { callLogObserver, signalRoutes } from './api/import-v2/signals.js';
import { referenceRoutes } from './api/reference.js';
import type { Config } from './config.js';
import { Authenticator } from './http/auth.js';
import { exportV2RateLimit, importV2RateLimit } from './http/rate-limit-guard.js';
import { EXPORT_V2_POLICY } from './http/policy.js';
import { HttpServer } from './http/server.js';
import { createPush, type Push } from './push/push.js';
import { StreamSlots } from './push/stream-slots.js';
import { dashboardRoutes } from './push/dashboard.js';
import { Bus } from './infra/bus.js';
import { closeRedis, openRedis } from './infra/redis.js';
import { Registry } from './registry/registry.js';
import type { Services } from './services.js';
import { fromAnnouncement } from './infra/announce.js';
import { LiveStatus } from '../machines/live-status.js';
import { Receipts } from './infra/receipts.js';
import { TokenStore } from './registry/tokens.js';

const LAST_USED_FLUSH_MS = 15_000;

export interface PlatformOptions {
  /** Run the BullMQ workers in this process (default true). */
  workers?: boolean;
  /** Registers further routes beside the platform's own (embedding, tests of the HTTP core). */
  routes?: (server: HttpServer, services: Services) => void;
}

export interface RunningPlatform {
  port: number;
  services: Services;
  /** Ordered, idempotent shutdown; resolves when everything is closed. */
  stop(reason?: string): Promise<void>;
}

/** Prepares the database (create, migrate) and opens every connection; throws a clear error if one fails. */
export async function openServices(config: Config, log: Logger): Promise<Services> {
  await ensureDatabase(config.databaseUrl);
  const sql = await openDatabase(config.databaseUrl);
  let redis;
  try {
    const applied = await migrate(sql);
    if (applied.length > 0) log.info({ migrations: applied.map((m) => `${m.version}_${m.name}`) }, 'migrations applied');
    redis = await openRedis(config.redisUrl, 'hrs');
  } catch (err) {
    await sql.end({ timeout: 1 });
    throw err;
  }
  redis.on('error', (err: Error) => log.warn({ err }, 'redis connection error'));
  const bus = new Bus(redis, config.redisPrefix, log);
  const tokens = new TokenStore(sql);
  const registry = new Registry(sql);
  await registry.reload();
  await bus.on('registry', (message) => {
    tokens.invalidate();
    if (message.type === 'registry' && message.registry === false) return;
    registry.reload().catch((err) => log.error({ err }, 'reloading the registry failed'));
  });
  const status = new LiveStatus(registry, log, {
    staleAfterMs: config.statusStaleAfterMs,
    unknownAfterMs: config.statusUnknownAfterMs,
    pricingStaleAfterMs: config.statusPricingStaleAfterMs,
  });
  // Listen before restoring: a reading announced meanwhile is applied either way (the newer wins).
  await bus.on('signals', (message) => {
    if (message.type === 'signals' && message.from !== bus.instanceId) status.publish(fromAnnouncement(message.signals));
  });
  const receipts = new Receipts(log);
  await bus.on('receipts', (message) => {
    if (message.type === 'receipts' && message.from !== bus.instanceId) receipts.emit(message.receipts);
  });
  const started = performance.now();
  const restored = await status.restore(sql);
  log.info({ actors: restored, ms: Math.round(performance.now() - started) }, 'live status restored');
  const reference = await readReferenceData(sql);
  const callLog = new CallLogRecorder(openQueue(QUEUES.callLog, redis, config.redisPrefix), log);
  return {
    config: { ...config },
    log,
    sql,
    redis,
    bus,
    tokens,
    registry,
    reference,
    status,
    receipts,
    callLog,
    lifecycle: { shuttingDown: false },
  };
}

export function buildHttpServer(services: Services): { server: HttpServer; push: Push } {
  const { config, log, tokens } = services;
  const server = new HttpServer({
    log,
    maxBodyBytes: config.maxBodyBytes,
    authenticator: new Authenticator(tokens, config.adminToken),
    // Export v2 is open data: the CC BY 4.0 licence and CORS on every response under /v2/.
    policies: { export_v2: EXPORT_V2_POLICY },
  });
  server.guard('import_v2', importV2RateLimit(services));
  server.guard('export_v2', exportV2RateLimit(services));
  healthRoutes(server, services);
  referenceRoutes(server, services);
  activeStationsRoute(server, services);
  signalRoutes(server, services);
  server.observe('import_v2', callLogObserver(services));
  statusRoutes(server, services);
  stationRoutes(server, services);
  adminTokenRoutes(server, services);
  adminCallLogRoutes(server, services);
  const push = createPush({
    server,
    log,
    settings: {
      streamsPerUser: config.pushStreamsPerUser,
      authTimeoutMs: config.pushAuthTimeoutMs,
      idleTimeoutSeconds: config.pushIdleTimeoutSeconds,
      maxBacklogBytes: config.pushMaxBacklogBytes,
    },
    status: services.status,
    receipts: services.receipts,
    stations: services.registry,
    slots: new StreamSlots(services.redis, config.redisPrefix, config.pushStreamsPerUser, log.child({ component: 'push' })),
    recheck: async (credential) => {
      await server.authenticator.authenticate('export_v2', credential);
    },
  });
  push.start();
  services.registry.onReload((changed) => push.stationsChanged(changed));
  void services.bus
    .on('registry', (message) => {
      if (message.type === 'registry' && message.tokens) push.tokensChanged();
    })
    .catch((err: unknown) => log.error({ err, component: 'push' }, 'listening for token changes failed'));
  dashboardRoutes(server);
  docRoutes(server, services);
  return { server, push };
}

/** `hrs serve`: connections, routes, workers, and the shutdown that undoes them in order. */
export async function startPlatform(config: Config, log: Logger, options: PlatformOptions = {}): Promise<RunningPlatform> {
  const services = await openServices(config, log);
  let server: HttpServer;
  let push: Push;
  let workers: Workers | undefined;
  try {
    ({ server, push } = buildHttpServer(services));
    options.routes?.(server, services);
    workers = options.workers === false ? undefined : startWorkers(config, services.redis, services.sql, log);
  } catch (err) {
    await closeServices(services);
    throw err;
  }
  const flushLastUsed = () =>
    services.tokens.flushLastUsed().catch((err) => log.warn({ err }, 'recording token last-used times failed'));
  const flushTimer = setInterval(flushLastUsed, LAST_USED_FLUSH_MS).unref();

  let port: number;
  try {
    port = await server.listen(config.host, config.port);
  } catch (err) {
    clearInterval(flushTimer);
    await push.close();
    await workers?.close();
    await closeServices(services);
    throw err;
  }
  // With PORT=0 the port is known only now; links must name the one actually bound.
  if (config.baseUrlDerived) services.config.baseUrl = `http://${config.host}:${port}`;
  log.info({ host: config.host, port, base_url: services.config.baseUrl, workers: workers?.names ?? [] }, 'listening');

  let stopping: Promise<void> | undefined;
  const stop = (reason = 'stop requested') =>
    (stopping ??= (async () => {
      log.info({ reason }, 'shutting down');
      services.lifecycle.shuttingDown = true;
      if (config.shutdownDelayMs > 0) await sleep(config.shutdownDelayMs);
      server.stopListening();
      // WebSockets are told at once (1001): they reconnect elsewhere while requests drain.
      await push.close();
      let timer: NodeJS.Timeout | undefined;
      const drained = await Promise.race([
        server.drained().then(() => true),
        new Promise<false>((resolve) => (timer = setTimeout(() => resolve(false), config.shutdownTimeoutMs))),
      ]);
      clearTimeout(timer);
      if (!drained) log.warn('requests still in flight at the shutdown timeout');
      server.closeConnections();
      clearInterval(flushTimer);
      await workers?.close();
      await flushLastUsed();
      await closeServices(services);
      log.info('stopped');
    })());
  return { port, services, stop };
}

export async function closeServices(services: Services): Promise<void> {
  services.status.close();
  await services.callLog.close();
  await services.bus.close();
  await closeRedis(services.redis);
  await services.sql.end({ timeout: 5 });
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
