import type { Page } from '@mailroom/core';
import { type CliIo, println } from '../output/io.js';
import { printJson } from '../output/output.js';
import type { FlagSpec, ParsedArgs } from './args.js';

/** `--limit` and `--after` of the listing commands. */
export const PAGE_FLAGS: FlagSpec = { limit: { type: 'string' }, after: { type: 'string' } };

/** The help lines of {@link PAGE_FLAGS} (with --project and --database). */
export const PAGE_HELP = `  --project ID       the project (mailroom project list shows the ids)
  --limit N          page size (1 to 200; default 50)
  --after CURSOR     the page after CURSOR (printed after a full page)
  --database URL     database (default: MAILROOM_DATABASE_URL, else ./mailroom.db)`;

/** The page request of the command line. */
export function pageOf(args: ParsedArgs): { after?: string; limit?: number } {
  const after = args.string('after');
  const limit = args.int('limit', { min: 1, max: 200 });
  return { ...(after ? { after } : {}), ...(limit !== undefined ? { limit } : {}) };
}

/**
 * Prints a page: `{ items, next }` as JSON, else a line per item and, when there is more, how to get it.
 * Remotely and locally alike, since both sides answer the engine's page.
 */
export function printPage<T>(io: CliIo, args: ParsedArgs, page: Page<T>, line: (item: T) => string): void {
  if (args.flag('json')) {
    printJson(io, page);
    return;
  }
  if (page.items.length === 0) println(io.stdout, 'None.');
  for (const item of page.items) println(io.stdout, line(item));
  if (page.next) println(io.stdout, `More: add --after ${page.next}`);
}
