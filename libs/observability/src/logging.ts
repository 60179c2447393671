// Structured logging with pino; every service logs JSON lines to stdout.
import pino, { type Logger, type LevelWithSilent } from 'pino';

export type { Logger };

export interface LoggerOptions {
  readonly level: LevelWithSilent;
  readonly service: string;
  readonly instance: string;
  /** Where lines go; stdout by default (tests pass a stream they read). */
  readonly destination?: pino.DestinationStream;
}

/** Secret-bearing keys are redacted wherever they appear in a logged object. */
const REDACT_PATHS = ['password', '*.password', '*.*.password', 'token', '*.token', 'authorization', '*.authorization', 'headers.authorization'];

export function createLogger(opts: LoggerOptions): Logger {
  return pino(
    {
      level: opts.level,
      base: { service: opts.service, instance: opts.instance },
      redact: { paths: REDACT_PATHS, censor: '[redacted]' },
      timestamp: pino.stdTimeFunctions.isoTime,
    },
    opts.destination ?? pino.destination({ fd: 1, sync: false }),
  );
}
