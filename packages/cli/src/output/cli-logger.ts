import type { Logger } from '@mailroom/core';
import { pino } from 'pino';
import type { CliOutput } from './io.js';
import type { LogLevel } from './log-level.js';

export type { LogLevel } from './log-level.js';

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
