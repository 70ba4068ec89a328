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
