import type { DestinationLimitStore, TokenBucket } from '@mailroom/core';
import { decideTokens, tokenWindowSpan } from '@mailroom/core';
import type { SqlContext } from '../sql-context.js';

/**
 * `DestinationLimitStore` on SQL (tables of migration `014_destination_limits`). A take is one
 * transaction: lock the key's row (`FOR UPDATE` on PostgreSQL and MySQL; SQLite's write transaction
 * locks the file), read its counted buckets, decide (`decideTokens`, the core's rule), add the grant to
 * the current buckets. Takes of one key are thereby serialized across processes; takes of other keys
 * do not wait for each other.
 */
export function sqlDestinationLimitStore(ctx: SqlContext): DestinationLimitStore {
  const { dialect, db, runner, all, write, guard } = ctx;
  /** Adds tokens to `rows` buckets of a key, one statement. */
  const addTokens = dialect.onConflictUpdate(
    'mailroom_destination_tokens',
    'dest_key, window_ms, bucket_start',
    ({ stored, incoming }) => [`tokens = ${stored('tokens')} + ${incoming('tokens')}`],
  );
  const upsert = (rows: number) =>
    `INSERT INTO mailroom_destination_tokens (dest_key, window_ms, bucket_start, tokens) VALUES ${runner.values(rows, 4)}${addTokens}`;
  const addKey = dialect.insertIgnore(
    'mailroom_destination_keys',
    'dest_key, created_at',
    '(?, ?)',
    'dest_key',
  );
  /** Per window, `(window_ms = ? AND bucket_start <op> ?)`, joined by OR. */
  const perWindow = (windows: number, op: string) =>
    Array.from({ length: windows }, () => `(t.window_ms = ? AND t.bucket_start ${op} ?)`).join(' OR ');
  // The key's row locked and its counted buckets read in one round trip (no row: the key is new); a
  // locking read sees the latest committed buckets. Where it reads the joined rows from the snapshot
  // taken before it waited for the lock (`lockBeforeJoinedRead`: PostgreSQL), the lock goes first, alone,
  // and the buckets are read by the next statement (a new snapshot, under read committed).
  const lockAndRead = (windows: number) => `SELECT t.window_ms, t.bucket_start, t.tokens
    FROM mailroom_destination_keys k
    LEFT JOIN mailroom_destination_tokens t ON t.dest_key = k.dest_key AND (${perWindow(windows, '>=')})
    WHERE k.dest_key = ?${dialect.lockBeforeJoinedRead ? '' : runner.forUpdate}`;
  const lockOnly = 'SELECT dest_key FROM mailroom_destination_keys WHERE dest_key = ? FOR UPDATE';

  return {
    takeTokens(request) {
      return guard('takeTokens', () =>
        runner.transaction(db, async (tx) => {
          const now = request.now.getTime();
          const spans = request.windows.flatMap((w) => [
            w.windowMs,
            tokenWindowSpan(w.windowMs, request.now).since,
          ]);
          const read = lockAndRead(request.windows.length);
          const locked = async () =>
            dialect.lockBeforeJoinedRead ? (await all(lockOnly, [request.key], tx)).length > 0 : undefined;
          let rows: Awaited<ReturnType<typeof all>> = [];
          let found = await locked();
          if (found !== false) rows = await all(read, [...spans, request.key], tx);
          if (found === false || rows.length === 0) {
            // First take of the key: create its row (a racing creator's insert is skipped), then lock it.
            await write(addKey, [request.key, now], tx);
            found = await locked();
            rows = await all(read, [...spans, request.key], tx);
          }
          const stored: TokenBucket[] = rows
            .filter((row) => row.window_ms !== null && row.window_ms !== undefined)
            .map((row) => ({
              windowMs: Number(row.window_ms),
              start: Number(row.bucket_start),
              tokens: Number(row.tokens),
            }));
          const decision = decideTokens(request, stored);
          // A bucket's first take also clears the key's buckets that no window counts any more.
          if (
            decision.buckets.some(
              (b) => !stored.some((x) => x.windowMs === b.windowMs && x.start === b.start),
            )
          ) {
            await write(
              `DELETE FROM mailroom_destination_tokens WHERE dest_key = ? AND (${perWindow(decision.counted.length, '<').replaceAll('t.', '')})`,
              [request.key, ...decision.counted.flatMap((c) => [c.windowMs, c.since])],
              tx,
            );
          }
          if (decision.buckets.length > 0) {
            const params = decision.buckets.flatMap((b) => [
              request.key,
              b.windowMs,
              b.start,
              decision.granted,
            ]);
            await write(upsert(decision.buckets.length), params, tx);
          }
          return decision.retryAt
            ? { granted: decision.granted, retryAt: decision.retryAt }
            : { granted: decision.granted };
        }),
      );
    },
  };
}
