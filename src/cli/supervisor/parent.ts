import { openMigrated } from '../../../db/migrate.js';
import { untilSignal, type Io } from '../command.js';
import { configWithServers } from '../servers.js';
import { ProcessSet } from './children.js';
import { freePortOrRefuse } from './port.js';

/**
 * `hrs serve --processes N` (N > 1): the supervisor. It does what `hrs serve` does before serving
 * (configuration, local servers, migrations, the busy-port check) once, then runs N server processes
 * on HOST:PORT, which the kernel shares out between them connection by connection (SO_REUSEPORT), and
 * one `hrs worker` unless --no-workers; until a signal, then stops them in order, local servers last.
 */
export async function serveProcesses(processes: number, options: { embedded: boolean; workers: boolean }, io: Io): Promise<number> {
  const lines: string[] = [];
  const { config, local } = await configWithServers(io, options.embedded, (line) => lines.push(line));
  const log = io.logger(config);
  for (const line of lines) log.info(line);
  let set: ProcessSet | undefined;
  try {
    const port = await freePortOrRefuse(config.host, config.port);
    // Once here, so the processes find nothing to do and never wait for each other's migrations.
    const { sql, applied } = await openMigrated(config.databaseUrl, { timeoutMs: config.databaseTimeoutMs });
    await sql.end({ timeout: 1 });
    if (applied.length > 0) log.info({ migrations: applied.map((m) => `${m.version}_${m.name}`) }, 'migrations applied');
    const env = { ...io.env, DATABASE_URL: config.databaseUrl, REDIS_URL: config.redisUrl, PORT: String(port) };
    set = new ProcessSet({ servers: processes, worker: options.workers, env, log });
    log.info({ processes, workers: options.workers }, options.workers ? 'starting the server processes and one worker process' : 'starting the server processes (no workers)');
    await set.start();
    const pids = set.pids();
    log.info({ host: config.host, port, processes, pids: pids.servers, worker_pid: pids.worker }, 'listening');
  } catch (err) {
    await set?.stop();
    await local.stop();
    throw err;
  }
  const running = set;
  await untilSignal(log, async () => {
    await running.stop();
    log.info('every process stopped');
    await local.stop();
  });
  return 0;
}
