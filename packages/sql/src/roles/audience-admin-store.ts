import type { AudienceAdminStore, ErasureCounts, ProfileRecord } from '@mailroom/core';
import { ERASED_ADDRESS, erasedDeliveryAddress, foldAddress, scrubAddress, scrubText } from '@mailroom/core';
import type { Row } from '../rows/codec.js';
import { SOURCE_JOB_COLUMNS } from '../rows/codec.js';
import type { SqlContext } from '../sql-context.js';
import { IN_LIST_SIZE } from '../sql-context.js';

/** Profiles read per statement while a label filter looks for a page's worth. */
const LABEL_SCAN_ROWS = 500;

/** The project's groups, as a subquery: membership rows are keyed by (group_id, address). */
const PROJECT_GROUPS = 'group_id IN (SELECT id FROM mailroom_groups WHERE project_id = ?)';

/** `AudienceAdminStore` on SQL: listing and editing profiles, removing groups, erasing an address. */
export function sqlAudienceAdminStore(ctx: SqlContext): AudienceAdminStore {
  const { db, runner, codec, guard, all, write } = ctx;

  /** One page of the project's profiles in address order after `after`, from `prefix` on. */
  const profileRange = async (
    projectId: string,
    after: string | null,
    prefix: string,
    limit: number,
  ): Promise<ProfileRecord[]> => {
    // Addresses starting with `prefix` are a run of the primary key from `prefix` on: the caller stops at
    // the first that does not start with it.
    const from = after !== null && after >= prefix ? after : prefix;
    const op = after !== null && after >= prefix ? '>' : '>=';
    const rows = await all(
      `SELECT * FROM mailroom_profiles WHERE project_id = ? AND address ${op} ? ORDER BY address LIMIT ?`,
      [projectId, from, limit],
    );
    return rows.map(codec.profile);
  };

  return {
    listProfiles(projectId, filter, page) {
      return guard('listProfiles', async () => {
        const prefix = filter.prefix ?? '';
        const found: ProfileRecord[] = [];
        let after = page.after ?? null;
        for (;;) {
          const want = filter.label === undefined ? page.limit - found.length : LABEL_SCAN_ROWS;
          const rows = await profileRange(projectId, after, prefix, want);
          for (const profile of rows) {
            if (!profile.address.startsWith(prefix)) return found;
            if (filter.label !== undefined && !profile.labels.includes(filter.label)) continue;
            found.push(profile);
            if (found.length >= page.limit) return found;
          }
          if (rows.length < want) return found;
          after = rows.at(-1)?.address ?? null;
        }
      });
    },

    updateProfile(projectId, address, change, now) {
      const target = change.address ?? address;
      return guard(
        'updateProfile',
        () =>
          runner.transaction(db, async (tx) => {
            const row = (
              await all(
                `SELECT * FROM mailroom_profiles WHERE project_id = ? AND address = ?${runner.forUpdate}`,
                [projectId, address],
                tx,
              )
            )[0];
            if (!row) return undefined;
            const profile = codec.profile(row);
            const next: ProfileRecord = {
              ...profile,
              address: target,
              ...(change.name !== undefined ? { name: change.name } : {}),
              ...(change.traits !== undefined ? { traits: change.traits } : {}),
              ...(change.labels !== undefined ? { labels: change.labels } : {}),
              ...(change.status !== undefined ? { status: change.status } : {}),
              updatedAt: now,
            };
            // A move onto an existing profile violates the primary key: `CONFLICT` naming it, rolled back.
            await write(
              `UPDATE mailroom_profiles SET address = ?, name = ?, traits = ?, labels = ?, status = ?, updated_at = ?
               WHERE project_id = ? AND address = ?`,
              [
                next.address,
                next.name,
                codec.json(next.traits),
                codec.json(next.labels),
                next.status,
                now.getTime(),
                projectId,
                address,
              ],
              tx,
            );
            if (target !== address) {
              await write(
                `UPDATE mailroom_group_members SET address = ? WHERE ${PROJECT_GROUPS} AND address = ?`,
                [target, projectId, address],
                tx,
              );
            }
            return next;
          }),
        { exists: { what: `profile ${target}`, projectId } },
      );
    },

    deleteGroup(projectId, ref) {
      return guard('deleteGroup', () =>
        runner.transaction(db, async (tx) => {
          const group = (
            await all('SELECT id FROM mailroom_groups WHERE project_id = ? AND ref = ?', [projectId, ref], tx)
          )[0];
          if (!group) return false;
          await write('DELETE FROM mailroom_group_members WHERE group_id = ?', [group.id], tx);
          await write('DELETE FROM mailroom_groups WHERE id = ?', [group.id], tx);
          return true;
        }),
      );
    },

    eraseAddress(projectId, address) {
      return guard('eraseAddress', () =>
        runner.transaction(db, async (tx) => {
          const counts: ErasureCounts = {
            profiles: await write(
              'DELETE FROM mailroom_profiles WHERE project_id = ? AND address = ?',
              [projectId, address],
              tx,
            ),
            memberships: await write(
              `DELETE FROM mailroom_group_members WHERE ${PROJECT_GROUPS} AND address = ?`,
              [projectId, address],
              tx,
            ),
            suppressions: await write(
              'DELETE FROM mailroom_suppressions WHERE project_id = ? AND address = ?',
              [projectId, foldAddress(address)],
              tx,
            ),
            deliveries: 0,
            events: 0,
            webhookMessages: 0,
            signals: 0,
            receivedMessages: 0,
          };
          await write(
            'DELETE FROM mailroom_soft_bounces WHERE project_id = ? AND address = ?',
            [projectId, address],
            tx,
          );
          // One probe of the (mailing, address) key per mailing of the project.
          const deliveryIds = (
            await all(
              `SELECT id FROM mailroom_deliveries
               WHERE mailing_id IN (SELECT id FROM mailroom_mailings WHERE project_id = ?) AND address = ?`,
              [projectId, address],
              tx,
            )
          ).map((row) => String(row.id));
          for (const id of deliveryIds) {
            counts.deliveries += await write(
              `UPDATE mailroom_deliveries SET address = ?, name = '', variables = '{}', traits = '{}', content = NULL,
               last_response = NULL, last_error = NULL WHERE id = ?`,
              [erasedDeliveryAddress(id), id],
              tx,
            );
          }
          const events: Row[] = await all(
            'SELECT id, data FROM mailroom_events WHERE project_id = ? AND address = ?',
            [projectId, address],
            tx,
          );
          for (const slice of slices(deliveryIds)) {
            events.push(
              ...(await all(
                `SELECT id, data FROM mailroom_events WHERE delivery_id IN ${runner.values(1, slice.length)}`,
                slice,
                tx,
              )),
            );
          }
          const eventIds = [...new Set(events.map((row) => String(row.id)))];
          const seen = new Set<string>();
          for (const row of events) {
            const id = String(row.id);
            if (seen.has(id)) continue;
            seen.add(id);
            const data = scrubAddress(codec.fromJson<object>(row.data), address);
            counts.events += await write(
              'UPDATE mailroom_events SET address = NULL, data = ? WHERE id = ?',
              [codec.json(data), id],
              tx,
            );
          }
          for (const slice of slices(eventIds)) {
            const messages = await all(
              `SELECT id, payload FROM mailroom_webhook_messages WHERE project_id = ? AND event_id IN ${runner.values(1, slice.length)}`,
              [projectId, ...slice],
              tx,
            );
            for (const message of messages) {
              counts.webhookMessages += await write(
                'UPDATE mailroom_webhook_messages SET payload = ? WHERE id = ?',
                [scrubText(String(message.payload), address), message.id],
                tx,
              );
            }
          }
          for (const slice of slices(deliveryIds)) {
            // A click's URL may carry the address (a link with the recipient's address in it).
            const clicks = await all(
              `SELECT id, url FROM mailroom_tracking_clicks WHERE delivery_id IN ${runner.values(1, slice.length)}`,
              slice,
              tx,
            );
            for (const click of clicks) {
              const url = String(click.url);
              const scrubbed = scrubText(url, address);
              if (scrubbed !== url)
                await write(
                  'UPDATE mailroom_tracking_clicks SET url = ? WHERE id = ?',
                  [scrubbed, click.id],
                  tx,
                );
            }
            counts.signals += await write(
              `UPDATE mailroom_inbound_signals SET address = ?, diagnostic = NULL, reported_address = NULL,
               reported_message_id = NULL WHERE delivery_id IN ${runner.values(1, slice.length)}`,
              [ERASED_ADDRESS, ...slice],
              tx,
            );
          }
          const received = (
            await all(
              'SELECT id FROM mailroom_received_messages WHERE project_id = ? AND from_address = ?',
              [projectId, foldAddress(address)],
              tx,
            )
          ).map((row) => String(row.id));
          for (const slice of slices(received)) {
            const list = runner.values(1, slice.length);
            await write(`DELETE FROM mailroom_received_raw WHERE message_id IN ${list}`, slice, tx);
            counts.receivedMessages += await write(
              `DELETE FROM mailroom_received_messages WHERE id IN ${list}`,
              slice,
              tx,
            );
          }
          return counts;
        }),
      );
    },

    insertImportJob(job) {
      return guard('insertImportJob', async () => {
        await write(
          `INSERT INTO mailroom_source_jobs (${SOURCE_JOB_COLUMNS.join(', ')}) VALUES ${runner.values(1, SOURCE_JOB_COLUMNS.length)}`,
          codec.sourceJobParams(job),
        );
      });
    },
  };
}

function slices<T>(items: readonly T[]): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < items.length; i += IN_LIST_SIZE) out.push(items.slice(i, i + IN_LIST_SIZE));
  return out;
}
