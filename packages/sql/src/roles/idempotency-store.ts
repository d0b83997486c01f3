import type { IdempotencyRecord, IdempotencyStore } from '@mailroom/core';
import type { SqlContext } from '../sql-context.js';

/** `IdempotencyStore` on SQL. Idempotency keys. */
export function sqlIdempotencyStore(ctx: SqlContext): IdempotencyStore {
  const { dialect, db, runner, codec, guard, first, write } = ctx;

  return {
    beginIdempotent(record, now) {
      return guard('beginIdempotent', () =>
        runner.transaction(
          db,
          async (tx): Promise<{ created: true } | { created: false; existing: IdempotencyRecord }> => {
            const columns = 'project_id, idem_key, request_hash, state, response, created_at, expires_at';
            const values = [
              record.projectId,
              record.key,
              record.requestHash,
              record.state,
              codec.json(record.response),
              record.createdAt.getTime(),
              record.expiresAt.getTime(),
            ];
            const inserted = await write(
              dialect.insertIgnore(
                'mailroom_idempotency',
                columns,
                runner.values(1, 7),
                'project_id, idem_key',
              ),
              values,
              tx,
            );
            if (inserted > 0) return { created: true };
            const row = await first(
              `SELECT * FROM mailroom_idempotency WHERE project_id = ? AND idem_key = ?${runner.forUpdate}`,
              [record.projectId, record.key],
              tx,
            );
            if (!row) {
              // Dropped between the two statements: the key is free again.
              await write(
                `INSERT INTO mailroom_idempotency (${columns}) VALUES ${runner.values(1, 7)}`,
                values,
                tx,
              );
              return { created: true };
            }
            const existing = codec.idempotency(row);
            if (existing.expiresAt.getTime() > now.getTime()) return { created: false, existing };
            await write(
              'UPDATE mailroom_idempotency SET request_hash = ?, state = ?, response = ?, created_at = ?, expires_at = ? WHERE project_id = ? AND idem_key = ?',
              [...values.slice(2), record.projectId, record.key],
              tx,
            );
            return { created: true };
          },
        ),
      );
    },

    finishIdempotent(projectId, key, response) {
      return guard('finishIdempotent', async () => {
        await write(
          "UPDATE mailroom_idempotency SET state = 'done', response = ? WHERE project_id = ? AND idem_key = ?",
          [codec.json(response), projectId, key],
        );
      });
    },

    dropIdempotent(projectId, key) {
      return guard('dropIdempotent', async () => {
        await write('DELETE FROM mailroom_idempotency WHERE project_id = ? AND idem_key = ?', [
          projectId,
          key,
        ]);
      });
    },
  };
}
