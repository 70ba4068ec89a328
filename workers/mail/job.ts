import { z } from 'zod';

/** A mail job: one message to one recipient. Validated again when the worker picks it up. */
export const mailJobSchema = z.strictObject({
  to: z.email(),
  subject: z.string().min(1).max(200),
  text: z.string().min(1),
});
export type MailJob = z.infer<typeof mailJobSchema>;
