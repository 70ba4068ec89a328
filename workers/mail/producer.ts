import type { Queue } from 'bullmq';
import type { Logger } from 'pino';
import type { MailIntent } from '../../db/queries/token-mail.js';
import { RedisDeadlineError, RedisNotConnectedError, redisUsable, type Redis } from '../../src/infra/redis.js';
import { MAIL_RETRY_MS, scheduleMail, within } from './outbox.js';

/**
 * The mail producer: what the API process uses to queue e-mail. Token e-mails go through the outbox
 * (./outbox.ts; their intents are committed first); sign-in and reveal links are plain jobs whose
 * secrets live in the job only, gone once sent.
 */

/** A plain message to one recipient: its secret is in the text, so it is never stored elsewhere. */
export interface LinkMail {
  subject: string;
  text: string;
  html: string;
}

/** How long queueing a link may keep the request waiting before it is told no e-mail was sent. */
const LINK_WAIT_MS = 2000;

export class MailProducer {
  constructor(
    private readonly queue: Queue,
    private readonly redis: Redis,
    private readonly log: Logger,
    /** The first retry's delay of a token e-mail after a temporary failure (MAIL_RETRY_DELAY). */
    private readonly retryMs = MAIL_RETRY_MS,
  ) {}

  /** Gives the committed token e-mails their jobs; never throws (the outbox sweep makes up for what it misses). */
  async schedule(intents: readonly MailIntent[]): Promise<void> {
    await scheduleMail(this.queue, intents, this.log, this.redis, this.retryMs);
  }

  /**
   * Whether a link can be queued now: Redis connected and answering, as `sendLink` asks. A sign-in for
   * an unknown address sends nothing but must be answered as a known one would be, so this is the
   * same test: connected alone would let an unknown address through (202) while a known one is
   * refused (503) during a frozen Redis or a Sentinel failover.
   */
  ready(): boolean {
    return redisUsable(this.redis);
  }

  /**
   * Queues a link e-mail. Throws a `RedisNotConnectedError` at once while Redis is not usable, and a
   * `RedisDeadlineError` when it does not take the job within LINK_WAIT_MS (both say Redis did not
   * answer, src/infra/redis-outage.ts's `redisUnanswered`): then nothing was sent and the caller says so.
   */
  async sendLink(to: string, mail: LinkMail): Promise<void> {
    if (!redisUsable(this.redis)) throw new RedisNotConnectedError('Redis is not connected or not answering: the e-mail was not queued');
    const job = this.queue.add('link', { to, ...mail }, { removeOnComplete: true, removeOnFail: { age: 3600 }, attempts: 5 });
    await within(job, LINK_WAIT_MS, () => new RedisDeadlineError(`the e-mail's deadline (${LINK_WAIT_MS} ms) passed before Redis took it`));
  }
}
