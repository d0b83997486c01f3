import type { Logger } from '@mailroom/core';
import { pino } from 'pino';
import { UsageError } from './cli-errors.js';
import type { CliOutput } from './io.js';

const LEVELS = ['debug', 'info', 'warn', 'error', 'silent'] as const;

/** A log level of {@link cliLogger} (`silent` logs nothing). */
export type LogLevel = (typeof LEVELS)[number];

/**
 * Fields censored wherever they appear at the top level or one object down. The engine and the HTTP layer
 * never hand a logger a secret, a header or a body; this catches a mistake before it reaches a log store.
 */
const REDACTED = ['secret', 'authorization', 'cookie', 'password', 'token', 'body', 'headers'].flatMap(
  (key) => [key, `*.${key}`],
);

/**
 * The server's logger: pino, one JSON object per line on `out` (`{"level":"info","time":"...","msg":...}`),
 * with the request id on every line the HTTP layer writes about a request. Entries below `level` are
 * dropped. Errors keep their code, message, SMTP reply and cause (pino's error serializer).
 */
export function cliLogger(out: CliOutput, level: LogLevel = 'info'): Logger {
  return pino(
    {
      level,
      base: { pid: process.pid },
      timestamp: pino.stdTimeFunctions.isoTime,
      formatters: { level: (label) => ({ level: label }) },
      redact: { paths: REDACTED, censor: '[redacted]' },
    },
    { write: (line: string) => out.write(line) },
  );
}

/** The log level from `--log-level`, else `MAILROOM_LOG_LEVEL`, else `info`. */
export function logLevelOf(flag: string | undefined, env: string | undefined, command: string): LogLevel {
  const given = (flag ?? env ?? '').trim().toLowerCase();
  if (given === '') return 'info';
  if (!(LEVELS as readonly string[]).includes(given)) {
    throw new UsageError(`--log-level must be one of ${LEVELS.join(', ')}, got '${flag ?? env}'`, command);
  }
  return given as LogLevel;
}
