import { createHash } from 'node:crypto';
import { z } from 'zod';

/** A mail job: one message to one recipient, made by the producer. Validated again when the worker picks it up. */
export const mailJobSchema = z.strictObject({
  to: z.email(),
  subject: z.string().min(1).max(200),
  text: z.string().min(1),
  html: z.string().min(1).optional(),
});
export type MailJob = z.infer<typeof mailJobSchema>;

/** A token e-mail of the outbox (db/queries/token-mail.ts), named by its key: rendered when it is sent. */
export const OUTBOX_JOB = 'outbox';
export const outboxJobSchema = z.strictObject({ key: z.string().min(1).max(300) });
export type OutboxJob = z.infer<typeof outboxJobSchema>;

/** The sweep: every unsent e-mail of the outbox gets its job again (a Redis flush loses none). */
export const SWEEP_JOB = 'sweep';

/** The job id of an outbox e-mail: deterministic, so one e-mail never has two jobs. */
export function outboxJobId(key: string): string {
  return `mail-${createHash('sha256').update(key).digest('hex').slice(0, 40)}`;
}

/** The Message-ID of an outbox e-mail: deterministic, so a receiving system can tell a repeat. */
export function outboxMessageId(key: string, from: string): string {
  const domain = /@([^>\s]+)>?\s*$/.exec(from)?.[1] ?? 'hrs.invalid';
  return `<${createHash('sha256').update(key).digest('hex').slice(0, 32)}@${domain}>`;
}
