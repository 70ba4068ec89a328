import { pino, type Logger, type DestinationStream } from 'pino';

export type { Logger };

/** JSON logs; secrets never reach them even when an object carrying them is logged. */
export function createLogger(level: string, destination?: DestinationStream): Logger {
  return pino(
    {
      level,
      base: { service: 'hrs' },
      timestamp: pino.stdTimeFunctions.isoTime,
      redact: {
        paths: [
          'token',
          '*.token',
          'value',
          'tokens[*].value',
          'authorization',
          'headers.authorization',
          'req.headers.authorization',
          'password',
          '*.password',
        ],
        censor: '[redacted]',
      },
    },
    destination,
  );
}

const LEVEL_WORDS: Record<number, string> = { 10: 'trace', 20: 'debug', 30: 'info', 40: 'warning', 50: 'error', 60: 'fatal' };

/**
 * A log record as one line for people (a terminal's reader, not a log shipper): its local time, level,
 * message and the error's message, without stack or fields: `12:03:09 warning: reading the registry for
 * DATEX II failed: PostgreSQL did not answer within 2000 ms`. A line that is not a record passes as it is.
 */
export function humanLine(json: string): string {
  let record: { level?: unknown; time?: unknown; msg?: unknown; err?: { message?: unknown } };
  try {
    record = JSON.parse(json) as typeof record;
  } catch {
    return json;
  }
  const at = typeof record.time === 'string' || typeof record.time === 'number' ? new Date(record.time).toTimeString().slice(0, 8) : '';
  const level = (typeof record.level === 'number' && LEVEL_WORDS[record.level]) || 'log';
  const cause = typeof record.err?.message === 'string' && record.err.message !== '' ? `: ${record.err.message}` : '';
  return `${at} ${level}: ${typeof record.msg === 'string' ? record.msg : ''}${cause}`.trim();
}

/** Where a logger writes human lines (see humanLine), one per record, to `out`. */
export function humanLines(out: (line: string) => void): DestinationStream {
  return {
    write(text: string) {
      for (const line of text.split('\n')) if (line !== '') out(humanLine(line));
    },
  };
}
