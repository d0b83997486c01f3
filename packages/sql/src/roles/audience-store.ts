import type { AudienceStore } from '@mailroom/core';
import { foldAddress } from '@mailroom/core';
import { foldedAddressSql } from '../migrations/migration-unsubscribed-folded.js';
import type { SqlContext } from '../sql-context.js';
import { IN_LIST_SIZE } from '../sql-context.js';
import { writeOutbox } from './event-store.js';

/** `AudienceStore` on SQL. Audience groups, profiles and suppressions. */
export function sqlAudienceStore(ctx: SqlContext): AudienceStore {
  const { dialect, db, runner, codec, guard, all, first, write, upsertAll, pageAfter } = ctx;

  return {
    // Groups and profiles

    createGroup(group) {
      return guard(
        'createGroup',
        async () => {
          await write(
            'INSERT INTO mailroom_groups (id, project_id, ref, name, double_opt_in, created_at) VALUES (?, ?, ?, ?, ?, ?)',
            [
              group.id,
              group.projectId,
              group.ref,
              group.name,
              group.doubleOptIn ? 1 : 0,
              group.createdAt.getTime(),
            ],
          );
        },
        { exists: { what: `audience group ${group.ref}`, projectId: group.projectId } },
      );
    },

    getGroup(projectId, ref) {
      return guard('getGroup', async () => {
        const row = await first('SELECT * FROM mailroom_groups WHERE project_id = ? AND ref = ?', [
          projectId,
          ref,
        ]);
        return row && codec.group(row);
      });
    },

    listGroups(projectId) {
      return guard('listGroups', async () => {
        const rows = await all(
          `SELECT g.*, (SELECT COUNT(*) FROM mailroom_group_members gm WHERE gm.group_id = g.id) AS members
           FROM mailroom_groups g WHERE g.project_id = ? ORDER BY g.ref`,
          [projectId],
        );
        return rows.map((row) => ({ ...codec.group(row), members: Number(row.members) }));
      });
    },

    getProfile(projectId, address) {
      return guard('getProfile', async () => {
        const row = await first('SELECT * FROM mailroom_profiles WHERE project_id = ? AND address = ?', [
          projectId,
          address,
        ]);
        return row && codec.profile(row);
      });
    },

    findProfiles(projectId, addresses) {
      return guard('findProfiles', async () => {
        // Profiles keep the address as given and are found by it exactly (the contract; memory does so).
        const unique = [...new Set(addresses)];
        const found = [];
        for (let i = 0; i < unique.length; i += IN_LIST_SIZE) {
          const slice = unique.slice(i, i + IN_LIST_SIZE);
          const rows = await all(
            `SELECT * FROM mailroom_profiles WHERE project_id = ? AND address IN ${runner.values(1, slice.length)}`,
            [projectId, ...slice],
          );
          found.push(...rows.map(codec.profile));
        }
        return found;
      });
    },

    findUnsubscribed(projectId, addresses) {
      return guard('findUnsubscribed', async () => {
        const unique = [...new Set(addresses.map(foldAddress))];
        const folded = foldedAddressSql(dialect.kind);
        const found = new Set<string>();
        for (let i = 0; i < unique.length; i += IN_LIST_SIZE) {
          const slice = unique.slice(i, i + IN_LIST_SIZE);
          // The index of migration 030: the same expression, and the status of its condition.
          const rows = await all(
            `SELECT ${folded} AS folded FROM mailroom_profiles WHERE project_id = ? AND status = 'unsubscribed' AND ${folded} IN ${runner.values(1, slice.length)}`,
            [projectId, ...slice],
          );
          // The database's fold finds them; the core's names them (the same on ASCII, the only letters folded).
          for (const row of rows) found.add(foldAddress(String(row.folded)));
        }
        return [...found];
      });
    },

    setProfileStatus(projectId, address, status, now, outbox) {
      return guard('setProfileStatus', async () => {
        const head =
          'INSERT INTO mailroom_profiles (project_id, address, name, traits, status, labels, created_at, updated_at) VALUES (?, ?, NULL, ?, ?, ?, ?, ?)';
        const text = `${head}${dialect.onConflictUpdate('mailroom_profiles', 'project_id, address', ({ incoming }) => [`status = ${incoming('status')}`, `updated_at = ${incoming('updated_at')}`])}`;
        const params = [projectId, address, '{}', status, '[]', now.getTime(), now.getTime()];
        if (!outbox) return void (await write(text, params));
        await runner.transaction(db, async (tx) => {
          await write(text, params, tx);
          await writeOutbox(runner, codec, tx, [outbox]);
        });
      });
    },

    listGroupMembers(projectId, groupId, page) {
      return guard('listGroupMembers', async () => {
        const [after, afterParams] = pageAfter(page.after, 'gm.address');
        const rows = await all(
          `SELECT p.* FROM mailroom_group_members gm
           JOIN mailroom_profiles p ON p.project_id = gm.project_id AND p.address = gm.address
           WHERE gm.group_id = ? AND gm.project_id = ?${after} ORDER BY gm.address LIMIT ?`,
          [groupId, projectId, ...afterParams, page.limit],
        );
        return rows.map(codec.profile);
      });
    },

    // Suppression

    addSuppression(suppression) {
      return guard('addSuppression', async () => {
        await write(
          upsertAll(
            'mailroom_suppressions',
            ['project_id', 'address', 'reason', 'detail', 'created_at'],
            'project_id, address',
          ),
          [
            suppression.projectId,
            foldAddress(suppression.address),
            suppression.reason,
            suppression.detail,
            suppression.createdAt.getTime(),
          ],
        );
      });
    },

    removeSuppression(projectId, address) {
      return guard('removeSuppression', async () => {
        const removed = await write(
          'DELETE FROM mailroom_suppressions WHERE project_id = ? AND address = ?',
          [projectId, foldAddress(address)],
        );
        return removed > 0;
      });
    },

    findSuppressed(projectId, addresses) {
      return guard('findSuppressed', async () => {
        const unique = [...new Set(addresses.map(foldAddress))];
        const found = [];
        for (let i = 0; i < unique.length; i += IN_LIST_SIZE) {
          const slice = unique.slice(i, i + IN_LIST_SIZE);
          const rows = await all(
            `SELECT * FROM mailroom_suppressions WHERE project_id = ? AND address IN ${runner.values(1, slice.length)}`,
            [projectId, ...slice],
          );
          found.push(...rows.map(codec.suppression));
        }
        return found;
      });
    },
  };
}
