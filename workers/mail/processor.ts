import { Worker, createNodeRedisClient, UnrecoverableError, type Job } from 'bullmq';
import nodemailer from 'nodemailer';
import type { Logger } from 'pino';
import type { Redis } from '../../src/infra/redis.js';
import { QUEUES, bullPrefix } from '../queues.js';
import { mailJobSchema } from './job.js';

/** The mail processor: the worker that delivers queued mail jobs over SMTP. */

export interface MailWorkerOptions {
  redis: Redis;
  redisPrefix: string;
  smtpUrl: string;
  mailFrom: string;
  log: Logger;
}

/** Sends queued mails over SMTP; failed deliveries are retried with backoff by BullMQ. */
export function startMailWorker(options: MailWorkerOptions): Worker {
  const transport = nodemailer.createTransport(options.smtpUrl);
  const log = options.log.child({ worker: QUEUES.mail });
  const worker = new Worker(
    QUEUES.mail,
    async (job: Job) => {
      const parsed = mailJobSchema.safeParse(job.data);
      if (!parsed.success) throw new UnrecoverableError(`invalid mail job: ${parsed.error.message}`);
      const info = await transport.sendMail({ from: options.mailFrom, ...parsed.data });
      log.info({ job_id: job.id, message_id: info.messageId }, 'mail sent');
      return { messageId: info.messageId };
    },
    { connection: createNodeRedisClient(options.redis), prefix: bullPrefix(options.redisPrefix), concurrency: 4 },
  );
  worker.on('failed', (job, err) => log.warn({ job_id: job?.id, err }, 'mail delivery failed'));
  worker.on('error', (err) => log.error({ err }, 'mail worker error'));
  worker.on('closed', () => transport.close());
  return worker;
}
