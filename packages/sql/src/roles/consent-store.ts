import type { ConsentRecord, ConsentStore, TopicRecord, TopicStateRecord } from '@mailroom/core';
import type { Db } from '../connection/connect.js';
import type { Row } from '../rows/codec.js';
import { IN_LIST_SIZE, type SqlContext } from '../sql-context.js';
import { writeOutbox } from './event-store.js';

const TOPIC_COLUMNS = [
  'project_id',
  'topic_key',
  'name',
  'description',
  'default_state',
  'visibility',
  'double_opt_in',
  'created_at',
  'updated_at',
] as const;

const RECORD_COLUMNS = [
  'id',
  'project_id',
  'address',
  'at',
  'change_kind',
  'topic_key',
  'state',
  'source',
  'ip',
  'user_agent',
  'mailing_ref',
  'wording',
] as const;

/**
 * `ConsentStore` on SQL (tables of migration `020_topics_consent`). A consent change is one transaction:
 * the bare profile (insert-or-ignore, or an upsert of its status), the topic states (upserts and deletes),
 * the history rows and the outbox.
 */
export function sqlConsentStore(ctx: SqlContext): ConsentStore {
  const { db, runner, codec, guard, all, first, write, dialect, upsertAll, pageAfter } = ctx;

  const insertRecords = async (records: readonly ConsentRecord[], on: Db) => {
    const text = `INSERT INTO mailroom_consent_records (${RECORD_COLUMNS.join(', ')}) VALUES ${runner.values(1, RECORD_COLUMNS.length)}`;
    for (const r of records) await write(text, recordParams(r), on);
  };

  return {
    createTopic(topic) {
      return guard(
        'createTopic',
        async () => {
          await write(
            `INSERT INTO mailroom_topics (${TOPIC_COLUMNS.join(', ')}) VALUES ${runner.values(1, TOPIC_COLUMNS.length)}`,
            topicParams(topic),
          );
        },
        { exists: { what: `topic ${topic.key}`, projectId: topic.projectId } },
      );
    },

    getTopic(projectId, key) {
      return guard('getTopic', async () => {
        const row = await first('SELECT * FROM mailroom_topics WHERE project_id = ? AND topic_key = ?', [
          projectId,
          key,
        ]);
        return row ? decodeTopic(row) : undefined;
      });
    },

    listTopics(projectId) {
      return guard('listTopics', async () =>
        (await all('SELECT * FROM mailroom_topics WHERE project_id = ? ORDER BY topic_key', [projectId])).map(
          decodeTopic,
        ),
      );
    },

    updateTopic(projectId, key, change, now) {
      return guard('updateTopic', () =>
        runner.transaction(db, async (tx) => {
          const where = 'project_id = ? AND topic_key = ?';
          const row = await first(
            `SELECT * FROM mailroom_topics WHERE ${where}${runner.forUpdate}`,
            [projectId, key],
            tx,
          );
          if (!row) return undefined;
          const defined = Object.fromEntries(Object.entries(change).filter(([, v]) => v !== undefined));
          const topic: TopicRecord = { ...decodeTopic(row), ...defined, updatedAt: now };
          await write(
            `UPDATE mailroom_topics SET name = ?, description = ?, default_state = ?, visibility = ?, double_opt_in = ?, updated_at = ? WHERE ${where}`,
            [
              topic.name,
              topic.description,
              topic.defaultState,
              topic.visibility,
              topic.doubleOptIn ? 1 : 0,
              now.getTime(),
              projectId,
              key,
            ],
            tx,
          );
          return topic;
        }),
      );
    },

    deleteTopic(projectId, key) {
      return guard('deleteTopic', () =>
        runner.transaction(db, async (tx) => {
          const where = 'project_id = ? AND topic_key = ?';
          const removed = await write(`DELETE FROM mailroom_topics WHERE ${where}`, [projectId, key], tx);
          if (removed === 0) return false;
          await write(`DELETE FROM mailroom_topic_states WHERE ${where}`, [projectId, key], tx);
          return true;
        }),
      );
    },

    listTopicMembers(projectId, groupId, topic, page) {
      return guard('listTopicMembers', async () => {
        const [after, afterParams] = pageAfter(page.after, 'gm.address');
        // The topic's rule in SQL (consent/topic-rule.ts): an explicit state, else the default.
        const allowed =
          topic.defaultState === 'opt-in'
            ? "ts.state = 'subscribed'"
            : "(ts.state IS NULL OR ts.state = 'subscribed')"; // `pending` (double opt-in) is a no too
        const rows = await all(
          `SELECT p.* FROM mailroom_group_members gm
           JOIN mailroom_profiles p ON p.project_id = gm.project_id AND p.address = gm.address
           LEFT JOIN mailroom_topic_states ts
             ON ts.project_id = gm.project_id AND ts.address = gm.address AND ts.topic_key = ?
           WHERE gm.group_id = ? AND gm.project_id = ?${after} AND ${allowed}
           ORDER BY gm.address LIMIT ?`,
          [topic.key, groupId, projectId, ...afterParams, page.limit],
        );
        return rows.map(codec.profile);
      });
    },

    topicStates(projectId, address) {
      return guard('topicStates', async () =>
        (
          await all(
            'SELECT * FROM mailroom_topic_states WHERE project_id = ? AND address = ? ORDER BY topic_key',
            [projectId, address],
          )
        ).map(decodeState),
      );
    },

    findTopicStates(projectId, topicKey, addresses) {
      return guard('findTopicStates', async () => {
        const unique = [...new Set(addresses)];
        const found: TopicStateRecord[] = [];
        for (let i = 0; i < unique.length; i += IN_LIST_SIZE) {
          const slice = unique.slice(i, i + IN_LIST_SIZE);
          const rows = await all(
            `SELECT * FROM mailroom_topic_states WHERE project_id = ? AND topic_key = ? AND address IN ${runner.values(1, slice.length)}`,
            [projectId, topicKey, ...slice],
          );
          found.push(...rows.map(decodeState));
        }
        return found;
      });
    },

    writeConsent(change, outbox) {
      return guard('writeConsent', () =>
        runner.transaction(db, async (tx) => {
          const { projectId, address, now } = change;
          const t = now.getTime();
          const columns = 'project_id, address, name, traits, status, labels, created_at, updated_at';
          const values = runner.values(1, 8);
          const params = [projectId, address, null, '{}', change.status ?? 'subscribed', '[]', t, t];
          const text = change.status
            ? `INSERT INTO mailroom_profiles (${columns}) VALUES ${values}${dialect.onConflictUpdate('mailroom_profiles', 'project_id, address', ({ incoming }) => [`status = ${incoming('status')}`, `updated_at = ${incoming('updated_at')}`])}`
            : dialect.insertIgnore('mailroom_profiles', columns, values, 'project_id, address');
          await write(text, params, tx);
          const upsert = upsertAll(
            'mailroom_topic_states',
            ['project_id', 'address', 'topic_key', 'state', 'updated_at'],
            'project_id, address, topic_key',
          );
          for (const topic of change.topics ?? []) {
            if (topic.state === null) {
              await write(
                'DELETE FROM mailroom_topic_states WHERE project_id = ? AND address = ? AND topic_key = ?',
                [projectId, address, topic.topicKey],
                tx,
              );
            } else {
              await write(upsert, [projectId, address, topic.topicKey, topic.state, t], tx);
            }
          }
          for (const group of change.groups ?? []) {
            if (group.member) {
              await write(
                dialect.insertIgnore(
                  'mailroom_group_members',
                  'group_id, address, project_id, created_at',
                  runner.values(1, 4),
                  'group_id, address',
                ),
                [group.groupId, address, projectId, t],
                tx,
              );
            } else {
              await write(
                'DELETE FROM mailroom_group_members WHERE group_id = ? AND address = ? AND project_id = ?',
                [group.groupId, address, projectId],
                tx,
              );
            }
          }
          await insertRecords(change.records, tx);
          if (outbox) await writeOutbox(runner, codec, tx, [outbox]);
        }),
      );
    },

    listConsentRecords(projectId, address, page) {
      return guard('listConsentRecords', async () => {
        const base = 'SELECT * FROM mailroom_consent_records WHERE project_id = ? AND address = ?';
        const order = ' ORDER BY at, id LIMIT ?';
        if (!page.after) {
          return (await all(`${base}${order}`, [projectId, address, page.limit])).map(decodeRecord);
        }
        const cursor = await first('SELECT at FROM mailroom_consent_records WHERE id = ?', [page.after]);
        if (!cursor) return [];
        const at = Number(cursor.at);
        const rows = await all(`${base} AND (at > ? OR (at = ? AND id > ?))${order}`, [
          projectId,
          address,
          at,
          at,
          page.after,
          page.limit,
        ]);
        return rows.map(decodeRecord);
      });
    },

    eraseConsent(projectId, address, hashed, record) {
      return guard('eraseConsent', () =>
        runner.transaction(db, async (tx) => {
          await write(
            'DELETE FROM mailroom_topic_states WHERE project_id = ? AND address = ?',
            [projectId, address],
            tx,
          );
          // A signup names the address too: it goes with the states (the history keeps the evidence).
          await write(
            'DELETE FROM mailroom_signups WHERE project_id = ? AND address = ?',
            [projectId, address],
            tx,
          );
          await write(
            'UPDATE mailroom_consent_records SET address = ?, ip = NULL, user_agent = NULL WHERE project_id = ? AND address = ?',
            [hashed, projectId, address],
            tx,
          );
          await insertRecords([record], tx);
          await write(
            dialect.insertIgnore(
              'mailroom_erased_addresses',
              'project_id, hashed, erased_at',
              runner.values(1, 3),
              'project_id, hashed',
            ),
            [projectId, hashed, record.at.getTime()],
            tx,
          );
        }),
      );
    },

    appendConsentRecords(records) {
      return guard('appendConsentRecords', async () => {
        if (records.length === 0) return;
        await runner.transaction(db, (tx) => insertRecords(records, tx));
      });
    },

    findErasedAddresses(projectId, hashed) {
      return guard('findErasedAddresses', async () => {
        const unique = [...new Set(hashed)];
        const found: string[] = [];
        for (let i = 0; i < unique.length; i += IN_LIST_SIZE) {
          const slice = unique.slice(i, i + IN_LIST_SIZE);
          const rows = await all(
            `SELECT hashed FROM mailroom_erased_addresses WHERE project_id = ? AND hashed IN ${runner.values(1, slice.length)}`,
            [projectId, ...slice],
          );
          found.push(...rows.map((r) => String(r.hashed)));
        }
        return found;
      });
    },

    forgetErasedAddress(projectId, hashed) {
      return guard(
        'forgetErasedAddress',
        async () =>
          (await write('DELETE FROM mailroom_erased_addresses WHERE project_id = ? AND hashed = ?', [
            projectId,
            hashed,
          ])) > 0,
      );
    },

    getProjectBrand(projectId) {
      return guard('getProjectBrand', async () => {
        const row = await first('SELECT * FROM mailroom_project_brands WHERE project_id = ?', [projectId]);
        if (!row) return undefined;
        return {
          projectId: String(row.project_id),
          color: text(row.color),
          logo: text(row.logo),
          updatedAt: new Date(Number(row.updated_at)),
        };
      });
    },

    putProjectBrand(brand) {
      return guard('putProjectBrand', async () => {
        await write(
          upsertAll('mailroom_project_brands', ['project_id', 'color', 'logo', 'updated_at'], 'project_id'),
          [brand.projectId, brand.color, brand.logo, brand.updatedAt.getTime()],
        );
      });
    },
  };
}

function topicParams(t: TopicRecord): unknown[] {
  return [
    t.projectId,
    t.key,
    t.name,
    t.description,
    t.defaultState,
    t.visibility,
    t.doubleOptIn ? 1 : 0,
    t.createdAt.getTime(),
    t.updatedAt.getTime(),
  ];
}

function recordParams(r: ConsentRecord): unknown[] {
  return [
    r.id,
    r.projectId,
    r.address,
    r.at.getTime(),
    r.change,
    r.topicKey,
    r.state,
    r.source,
    r.ip,
    r.userAgent,
    r.mailingRef,
    r.wording ?? null,
  ];
}

const text = (v: unknown): string | null => (v === null || v === undefined ? null : String(v));

function decodeTopic(row: Row): TopicRecord {
  return {
    projectId: String(row.project_id),
    key: String(row.topic_key),
    name: String(row.name),
    description: text(row.description),
    defaultState: String(row.default_state) as TopicRecord['defaultState'],
    visibility: String(row.visibility) as TopicRecord['visibility'],
    doubleOptIn: Number(row.double_opt_in) === 1,
    createdAt: new Date(Number(row.created_at)),
    updatedAt: new Date(Number(row.updated_at)),
  };
}

function decodeState(row: Row): TopicStateRecord {
  return {
    projectId: String(row.project_id),
    address: String(row.address),
    topicKey: String(row.topic_key),
    state: String(row.state) as TopicStateRecord['state'],
    updatedAt: new Date(Number(row.updated_at)),
  };
}

function decodeRecord(row: Row): ConsentRecord {
  return {
    id: String(row.id),
    projectId: String(row.project_id),
    address: String(row.address),
    at: new Date(Number(row.at)),
    change: String(row.change_kind) as ConsentRecord['change'],
    topicKey: text(row.topic_key),
    state: text(row.state),
    source: String(row.source),
    ip: text(row.ip),
    userAgent: text(row.user_agent),
    mailingRef: text(row.mailing_ref),
    ...(row.wording === null || row.wording === undefined ? {} : { wording: String(row.wording) }),
  };
}
