import { startPlatform } from '../../platform.js';
import { catchStopSignals, untilSignal, type Io } from '../command.js';
import { PROCESS_SLOT, type Message } from './messages.js';
import { shareMetrics } from './metrics.js';

/**
 * One server process of `hrs serve --processes`: the platform without workers, on the HOST:PORT it
 * shares with the others, DATABASE_URL and REDIS_URL as the supervisor settled them (migrated). Its
 * logs carry its slot (`process`); it tells the supervisor once it listens, and stops as `hrs serve`
 * does on SIGTERM, or when the supervisor is gone.
 */
export async function serveAsOneProcess(io: Io): Promise<number> {
  const slot = Number(io.env[PROCESS_SLOT]);
  const config = io.config();
  const log = io.logger(config).child({ process: slot });
  catchStopSignals(io.env);
  const platform = await startPlatform(config, log, { workers: false, process: { reusePort: true, metrics: (metrics) => shareMetrics(metrics, log) } });
  process.send?.({ hrs: 'ready', port: platform.port } satisfies Message);
  await untilSignal(log, (signal) => platform.stop(signal));
  return 0;
}
