import type { Logger } from 'pino';
import type { OpenQueues } from './queues.js';
import { QUEUES } from './queues.js';
import { scheduleSandbox } from './sandbox/schedule.js';
import { scheduleHistory } from './history/processor.js';
import { scheduleChangeLog } from './change-log/processor.js';

/**
 * The repeatable jobs every `hrs serve` (re)declares at start: the sandbox simulator's minute (removed
 * when SANDBOX is off), the status history's jobs (materialiser, roll-up, partitions) and the change
 * log's upkeep (events' ends, pruning). Declaring one again is harmless, so every instance does; a
 * failure is logged, never fatal (the stations are served without them).
 */
export async function scheduleJobs(queues: OpenQueues, settings: { sandbox: boolean; historyEveryMs: number }, log: Logger): Promise<void> {
  await scheduleSandbox(queues.get(QUEUES.sandbox), settings.sandbox).catch((err: unknown) => log.error({ err }, 'scheduling the sandbox simulator failed'));
  await scheduleHistory(queues.get(QUEUES.history), settings.historyEveryMs).catch((err: unknown) => log.error({ err }, 'scheduling the status history jobs failed'));
  await scheduleChangeLog(queues.get(QUEUES.changeLog)).catch((err: unknown) => log.error({ err }, 'scheduling the change log upkeep failed'));
}
