import { pino, type Logger } from 'pino';
import { InputError } from '../errors.js';

/** The log levels `--log-level` accepts, from the most to the least verbose, and `silent`. */
export const LOG_LEVELS = ['trace', 'debug', 'info', 'warn', 'error', 'fatal', 'silent'] as const;

/** A `--log-level` value. */
export type LogLevel = (typeof LOG_LEVELS)[number];

/** Where log lines go: a stream (`write(line)`), standard error by default. */
export interface LogDestination {
  write(line: string): unknown;
}

/**
 * The proxy's structured logger: one JSON line per event (pino), to standard error unless
 * `destination` is given. It is never handed a request's headers or body: what is logged is
 * chosen field by field at each call, so an API key cannot reach a log line. `authorization`,
 * `x-api-key` and `apiKey` paths are redacted anyway, in case a future call passes an object.
 */
export function createLogger(level: LogLevel = 'info', destination?: LogDestination): Logger {
  if (!(LOG_LEVELS as readonly string[]).includes(level)) throw new InputError('logLevel', `must be one of ${LOG_LEVELS.join(', ')}, got ${JSON.stringify(level)}`);
  const options = {
    level,
    base: { name: 'ctxfold' },
    redact: { paths: ['authorization', 'apiKey', 'headers.authorization', 'headers["x-api-key"]', '*.authorization', '*.apiKey'], censor: '[redacted]' },
  };
  return pino(options, (destination ?? pino.destination({ dest: 2, sync: true })) as pino.DestinationStream);
}
