import type { ApiKeyRecord, KeyStore } from '@mailroom/core';
import type { Codec } from '../rows/codec.js';
import { ms } from '../rows/codec.js';
import type { SqlContext } from '../sql-context.js';

/** The columns of a key row, in the order of {@link keyParams}. */
export const KEY_COLUMNS =
  'hash, id, project_id, mode, scope, domains, prefix, created_at, last_used_at, revoked_at, expires_at, replaced_by, name';

/** `INSERT` of one key row. */
export const INSERT_KEY = `INSERT INTO mailroom_project_secrets (${KEY_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`;

/** The parameters of one key row, in {@link KEY_COLUMNS} order. */
export function keyParams(codec: Codec, key: ApiKeyRecord): unknown[] {
  return [
    key.hash,
    key.id,
    key.projectId,
    key.mode,
    key.scope,
    codec.json(key.domains),
    key.prefix,
    key.createdAt.getTime(),
    ms(key.lastUsedAt),
    ms(key.revokedAt),
    ms(key.expiresAt),
    key.replacedBy,
    key.name ?? null,
  ];
}

/** `KeyStore` on SQL, over the table of project secrets (which 010 made the table of keys). */
export function sqlKeyStore(ctx: SqlContext): KeyStore {
  const { db, runner, codec, guard, all, first, write } = ctx;

  const read = async (projectId: string, id: string): Promise<ApiKeyRecord | undefined> => {
    const row = await first('SELECT * FROM mailroom_project_secrets WHERE project_id = ? AND id = ?', [
      projectId,
      id,
    ]);
    return row && codec.secret(row);
  };

  return {
    listKeys(projectId) {
      return guard('listKeys', async () =>
        (
          await all('SELECT * FROM mailroom_project_secrets WHERE project_id = ? ORDER BY created_at, id', [
            projectId,
          ])
        ).map(codec.secret),
      );
    },

    getKey(projectId, id) {
      return guard('getKey', () => read(projectId, id));
    },

    revokeKey(projectId, id, at) {
      return guard('revokeKey', async () => {
        // The guarded update keeps the first revocation's time whoever races it.
        await write(
          'UPDATE mailroom_project_secrets SET revoked_at = ? WHERE project_id = ? AND id = ? AND revoked_at IS NULL',
          [at.getTime(), projectId, id],
        );
        return read(projectId, id);
      });
    },

    rotateKey(projectId, id, replacement, expiresAt, now) {
      return guard('rotateKey', () =>
        runner.transaction(db, async (tx) => {
          // The update takes the row's lock: a racing rotation waits, then finds `replaced_by` set.
          const changed = await write(
            `UPDATE mailroom_project_secrets SET expires_at = ?, replaced_by = ?
             WHERE project_id = ? AND id = ? AND revoked_at IS NULL AND replaced_by IS NULL
               AND (expires_at IS NULL OR expires_at > ?)`,
            [expiresAt.getTime(), replacement.id, projectId, id, now.getTime()],
            tx,
          );
          if (changed !== 1) return false;
          await write(INSERT_KEY, keyParams(codec, replacement), tx);
          return true;
        }),
      );
    },

    touchKey(id, at) {
      return guard('touchKey', async () => {
        await write(
          'UPDATE mailroom_project_secrets SET last_used_at = ? WHERE id = ? AND (last_used_at IS NULL OR last_used_at < ?)',
          [at.getTime(), id, at.getTime()],
        );
      });
    },
  };
}
