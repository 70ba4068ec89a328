import { z } from 'zod';

/**
 * The WebSocket protocol of the status stream (`/v2/hrs/status/stream`) and the admins' live feed
 * (`/admin/v1/live`). Every message either way is one JSON object with a `type`; docs/live-status.md and the
 * export v2 OpenAPI document describe them with examples.
 */

/** Close codes the server uses besides the standard ones (1000 normal, 1009 message too big). */
export const CLOSE = {
  /** The server is shutting down (standard "going away"): reconnect, to another instance if there is one. */
  shuttingDown: 1001,
  /** A client message over 64 KiB (standard "message too big"). */
  tooBig: 1009,
  /** The subscriber fell too far behind: more than PUSH_MAX_BACKLOG bytes waited to be sent to it. */
  tooSlow: 4000,
  /** The auth message's token was refused, or the token was revoked or expired while connected. */
  unauthorized: 4401,
  /** No auth message within PUSH_AUTH_TIMEOUT seconds of connecting. */
  authTimeout: 4408,
  /** The user already holds PUSH_STREAMS_PER_USER streams, or a rate limit is exhausted. */
  tooMany: 4429,
} as const;

/** Reasons sent with the close codes (a close frame's reason is at most 123 bytes). */
export const CLOSE_REASON: Record<keyof typeof CLOSE, string> = {
  shuttingDown: 'server shutting down',
  tooBig: 'message over 64 KiB',
  tooSlow: 'subscriber too slow: backlog limit exceeded',
  unauthorized: 'not authenticated',
  authTimeout: 'no auth message in time',
  tooMany: 'too many streams or requests',
};

const HRS_ID = z.string().regex(/^[A-Za-z0-9_-]{1,64}$/, 'a station id (hrs_id)');
/** Client-chosen correlation id, echoed in the answer. */
const ID = z.union([z.string().max(100), z.number()]).optional();

const stations = z.union([
  z.literal('*'),
  z.array(HRS_ID).min(1, 'at least one station id, or "*" for every station').max(10_000, 'at most 10000 station ids per message'),
]);

export const clientMessageSchema = z.discriminatedUnion('type', [
  z.strictObject({ type: z.literal('auth'), token: z.string().min(1, 'the token is empty').max(512), id: ID }),
  z.strictObject({ type: z.literal('subscribe'), hrs_ids: stations, id: ID }),
  z.strictObject({ type: z.literal('unsubscribe'), hrs_ids: stations, id: ID }),
]);

export type ClientMessage = z.infer<typeof clientMessageSchema>;

/** Error codes of `error` messages. */
export type ErrorCode =
  | 'invalid_message'
  | 'not_authenticated'
  | 'already_authenticated'
  | 'authentication_failed'
  | 'too_many_streams'
  | 'throttled'
  | 'unknown_station'
  | 'not_subscribed';

export function errorMessage(code: ErrorCode, detail: string, extra: Record<string, unknown> = {}): string {
  return JSON.stringify({ type: 'error', code, detail, ...extra });
}

/**
 * Parses one client message; returns it, or the `error` message to answer with. Text only: a binary
 * frame is refused the same way as malformed JSON.
 */
export function parseClientMessage(data: ArrayBuffer, isBinary: boolean, allowed: readonly ClientMessage['type'][]): ClientMessage | string {
  if (isBinary) return errorMessage('invalid_message', 'Messages are JSON text frames; a binary frame was received.');
  let value: unknown;
  try {
    value = JSON.parse(Buffer.from(data).toString('utf8'));
  } catch (err) {
    return errorMessage('invalid_message', `JSON parse error - ${(err as Error).message}`);
  }
  const id = typeof value === 'object' && value !== null && 'id' in value ? (value as { id: unknown }).id : undefined;
  const echo = typeof id === 'string' || typeof id === 'number' ? { id } : {};
  const type = typeof value === 'object' && value !== null ? (value as { type?: unknown }).type : undefined;
  if (typeof type !== 'string' || !(allowed as readonly string[]).includes(type)) {
    return errorMessage(
      'invalid_message',
      `"type" must be one of ${allowed.map((t) => `"${t}"`).join(', ')}` + (typeof type === 'string' ? ` (got "${type}").` : '.'),
      echo,
    );
  }
  const parsed = clientMessageSchema.safeParse(value);
  if (!parsed.success) {
    const problems = parsed.error.issues.map((issue) => {
      const at = issue.path.length > 0 ? issue.path.join('.') : 'message';
      return `${at}: ${issue.message}`;
    });
    return errorMessage('invalid_message', `Invalid "${type}" message - ${problems.join('; ')}.`, echo);
  }
  return parsed.data;
}
