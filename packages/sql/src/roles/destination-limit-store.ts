import type { DestinationLimitStore, TokenBucket } from '@mailroom/core';
import { decideTokens } from '@mailroom/core';
import type { SqlContext } from '../sql-context.js';

/**
 * `DestinationLimitStore` on SQL (tables of migration `014_destination_limits`). A take is one
 * transaction: lock the key's row (`FOR UPDATE` on PostgreSQL and MySQL; SQLite's write transaction
 * locks the file), read its counted buckets, decide (`decideTokens`, the core's rule), add the grant to
 * the current buckets. Takes of one key are thereby serialized across processes; takes of other keys
 * do not wait for each other.
 */
export function sqlDestinationLimitStore(ctx: SqlContext): DestinationLimitStore {
  const { mysql, db, r, all, first, write, guard } = ctx;
  const upsert = mysql
    ? `INSERT INTO mailroom_destination_tokens (dest_key, window_ms, bucket_start, tokens) VALUES ${r.values(1, 4)}
       ON DUPLICATE KEY UPDATE tokens = tokens + VALUES(tokens)`
    : `INSERT INTO mailroom_destination_tokens (dest_key, window_ms, bucket_start, tokens) VALUES ${r.values(1, 4)}
       ON CONFLICT (dest_key, window_ms, bucket_start) DO UPDATE SET tokens = mailroom_destination_tokens.tokens + excluded.tokens`;
  const addKey = mysql
    ? 'INSERT IGNORE INTO mailroom_destination_keys (dest_key, created_at) VALUES (?, ?)'
    : 'INSERT INTO mailroom_destination_keys (dest_key, created_at) VALUES (?, ?) ON CONFLICT (dest_key) DO NOTHING';

  return {
    takeTokens(request) {
      return guard('takeTokens', () =>
        r.transaction(db, async (tx) => {
          const now = request.now.getTime();
          const lock = `SELECT dest_key FROM mailroom_destination_keys WHERE dest_key = ?${r.forUpdate}`;
          if (!(await first(lock, [request.key], tx))) {
            // First take of the key: create its row (a racing creator's insert is skipped), then lock it.
            await write(addKey, [request.key, now], tx);
            await first(lock, [request.key], tx);
          }
          const oldest = Math.min(...request.windows.map((w) => now - 2 * w.windowMs));
          const rows = await all(
            'SELECT window_ms, bucket_start, tokens FROM mailroom_destination_tokens WHERE dest_key = ? AND bucket_start >= ?',
            [request.key, oldest],
            tx,
          );
          const stored: TokenBucket[] = rows.map((row) => ({
            windowMs: Number(row.window_ms),
            start: Number(row.bucket_start),
            tokens: Number(row.tokens),
          }));
          const decision = decideTokens(request, stored);
          for (const b of decision.buckets) {
            // A bucket's first take also clears the key's buckets that no window counts any more.
            const fresh = !stored.some((s) => s.windowMs === b.windowMs && s.start === b.start);
            if (fresh) {
              await write(
                'DELETE FROM mailroom_destination_tokens WHERE dest_key = ? AND window_ms = ? AND bucket_start < ?',
                [request.key, b.windowMs, decision.expiredBefore],
                tx,
              );
            }
            await write(upsert, [request.key, b.windowMs, b.start, decision.granted], tx);
          }
          return decision.retryAt
            ? { granted: decision.granted, retryAt: decision.retryAt }
            : { granted: decision.granted };
        }),
      );
    },
  };
}
