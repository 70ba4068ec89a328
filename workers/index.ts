import type { Logger } from 'pino';
import type { Sql } from '../db/connect.js';
import type { Config } from '../src/config.js';
import type { Redis } from '../src/infra/redis.js';
import { startCallLogWorker } from './call-log/processor.js';
import { startMailWorker } from './mail/processor.js';

export interface Workers {
  names: string[];
  close(): Promise<void>;
}

/** Starts every BullMQ worker this configuration allows; `close` lets active jobs finish. */
export function startWorkers(config: Config, redis: Redis, sql: Sql, log: Logger): Workers {
  const workers: { name: string; close(): Promise<void> }[] = [];
  if (config.smtpUrl) {
    const mail = startMailWorker({ redis, redisPrefix: config.redisPrefix, smtpUrl: config.smtpUrl, mailFrom: config.mailFrom, log });
    workers.push({
      name: mail.name,
      async close() {
        // A BullMQ worker closed before it is ready can leave its connection open: let it get ready first.
        let timer: NodeJS.Timeout | undefined;
        await Promise.race([mail.waitUntilReady().catch(() => {}), new Promise((resolve) => (timer = setTimeout(resolve, 2000)))]);
        clearTimeout(timer);
        await mail.close();
      },
    });
  } else {
    log.warn('SMTP_URL is not set: mail jobs stay queued until a worker with SMTP_URL runs');
  }
  workers.push(startCallLogWorker({ redis, redisPrefix: config.redisPrefix, sql, log }));
  return {
    names: workers.map((w) => w.name),
    async close() {
      await Promise.all(workers.map((w) => w.close()));
    },
  };
}
