import type { Logger } from '@mailroom/core';
import { describeFailure } from './cli-errors.js';
import type { CliOutput } from './io.js';

const LEVELS = ['debug', 'info', 'warn', 'error'] as const;

/** A log level of {@link cliLogger}. */
export type LogLevel = (typeof LEVELS)[number];

/**
 * A logger writing one line per entry (`2026-01-01T10:00:00.000Z warn lease renewal failed err="..."`),
 * dropping entries below `level`. The engine never hands a logger a secret or a message body, and
 * errors are reduced to their one-line description here, so nothing else can leak through a stack.
 */
export function cliLogger(out: CliOutput, level: LogLevel = 'info'): Logger {
  const threshold = LEVELS.indexOf(level);
  const write = (at: LogLevel) => (obj: object, msg?: string) => {
    if (LEVELS.indexOf(at) < threshold) return;
    const fields = Object.entries(obj)
      .filter(([, value]) => value !== undefined)
      .map(([key, value]) => `${key}=${formatValue(value)}`);
    out.write(`${[new Date().toISOString(), at, msg ?? '', ...fields].filter(Boolean).join(' ')}\n`);
  };
  return { debug: write('debug'), info: write('info'), warn: write('warn'), error: write('error') };
}

function formatValue(value: unknown): string {
  if (value instanceof Error) return JSON.stringify(describeFailure(value));
  if (typeof value === 'string') return /^[\w.:@/-]+$/.test(value) ? value : JSON.stringify(value);
  if (typeof value === 'object' && value !== null) {
    // A neutral HTTP layer passes `err` as a plain `{ message, code }` description.
    const message = (value as { message?: unknown }).message;
    if (typeof message === 'string') return JSON.stringify(message.replace(/[\r\n]+/g, ' '));
  }
  return JSON.stringify(value) ?? String(value);
}
