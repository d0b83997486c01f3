import type { WorkerOptions } from '@mailroom/core';
import type { FlagSpec, ParsedArgs } from './args.js';

/** Flags of the commands that deliver (`serve`, `worker`): the database, SMTP or outbox, and worker tuning. */
export const DELIVERY_FLAGS: FlagSpec = {
  database: { type: 'string' },
  smtp: { type: 'string' },
  outbox: { type: 'string' },
  concurrency: { type: 'string' },
  rate: { type: 'string' },
};

/** Help lines of {@link DELIVERY_FLAGS}. */
export const DELIVERY_FLAGS_HELP = `  --database URL     SQLite file, sqlite:FILE, postgres://... or mysql://...
                     (default: MAILROOM_DATABASE_URL, else ./mailroom.db)
  --smtp URL         deliver through this SMTP server, smtp://user:pass@host:587 or smtps://...
                     (default: MAILROOM_SMTP_URL; with neither, messages go to the outbox)
  --outbox DIR       write each message as an .eml file into DIR (default: ./.mailroom/outbox)
  --concurrency N    deliveries sent at once by the worker (default: 8)
  --rate N           at most N messages per second from this worker (default: unlimited)`;

/** The worker settings given by `--concurrency` and `--rate`. */
export function workerOptionsOf(args: ParsedArgs): WorkerOptions {
  const concurrency = args.int('concurrency', { min: 1, max: 1000 });
  const rate = args.int('rate', { min: 1, max: 1_000_000 });
  return {
    ...(concurrency === undefined ? {} : { concurrency }),
    ...(rate === undefined ? {} : { ratePerSecond: rate }),
  };
}
