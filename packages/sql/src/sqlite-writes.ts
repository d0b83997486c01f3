import type { DeliveryRecord, ProfileUpsert, ProfileUpsertOptions } from '@mailroom/core';
import type Database from 'better-sqlite3';
import type { Row } from './codec.js';
import { DELIVERY_COLUMNS } from './codec.js';
import type { Db } from './connect.js';
import { mergeProfile } from './profile-merge.js';
import type { SqlRunner } from './sql-runner.js';

const INSERT_DELIVERY = `INSERT INTO mailroom_deliveries (${DELIVERY_COLUMNS.join(', ')}) VALUES (${DELIVERY_COLUMNS.map(() => '?').join(', ')}) ON CONFLICT (mailing_id, address) DO NOTHING`;
const INSERT_PROFILE =
  'INSERT INTO mailroom_profiles (project_id, address, name, traits, status, labels, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (project_id, address) DO NOTHING';
const SELECT_PROFILE =
  'SELECT name, traits, labels FROM mailroom_profiles WHERE project_id = ? AND address = ?';
const UPDATE_PROFILE =
  'UPDATE mailroom_profiles SET name = ?, traits = ?, labels = ?, updated_at = ? WHERE project_id = ? AND address = ?';
const INSERT_MEMBER =
  'INSERT INTO mailroom_group_members (group_id, address, project_id, created_at) VALUES (?, ?, ?, ?) ON CONFLICT (group_id, address) DO NOTHING';

/**
 * JSON texts of the objects of one write, so that an object written twice (a CSV row's traits, on its
 * delivery and on its profile) is stringified once. Empty objects and arrays cost nothing. Meant for the
 * span of one store call: a caller's object must not change during the call that writes it.
 */
export class JsonMemo {
  readonly #texts = new Map<object, string>();

  /** The JSON of a JSON object or array; `empty` for null, undefined, `{}` and `[]`. */
  text(value: object | null | undefined, empty: '{}' | '[]'): string {
    if (value === null || value === undefined || isEmptyJson(value)) return empty;
    let text = this.#texts.get(value);
    if (text === undefined) {
      text = JSON.stringify(value);
      this.#texts.set(value, text);
    }
    return text;
  }
}

/** Bulk writes run directly on a SQLite connection held in a transaction (see `SqlRunner.statement`). */
export interface SqliteWriter {
  /** As `BulkWrites.insertDeliveries`. */
  insertDeliveries(deliveries: readonly DeliveryRecord[], memo: JsonMemo): number;
  /** As `BulkWrites.upsertProfiles`. */
  upsertProfiles(
    projectId: string,
    rows: readonly ProfileUpsert[],
    options: ProfileUpsertOptions,
    at: number,
    memo: JsonMemo,
  ): void;
}

/**
 * The direct writer for `tx`, or undefined when `tx` is not a SQLite connection the store reaches
 * directly. Every row is one run of a prepared single-row statement, synchronously: measured faster than
 * multi-row `VALUES` lists, which bind thousands of parameters through the same path, and far faster than
 * a round through Kysely per statement. One parameter array is reused for every row.
 */
export function sqliteWriter(runner: SqlRunner, tx: Db): SqliteWriter | undefined {
  const insertDelivery = runner.statement(tx, INSERT_DELIVERY);
  if (!insertDelivery) return undefined;
  const statement = (text: string) => runner.statement(tx, text) as Database.Statement;

  return {
    insertDeliveries(deliveries, memo) {
      let inserted = 0;
      const p: unknown[] = new Array(DELIVERY_COLUMNS.length);
      for (const d of deliveries) {
        p[0] = d.id;
        p[1] = d.projectId;
        p[2] = d.mailingId;
        p[3] = d.batchId;
        p[4] = d.address;
        p[5] = d.name;
        // Variables are the delivery's own (never shared with a profile): no point remembering them.
        p[6] = isEmptyJson(d.variables) ? '{}' : JSON.stringify(d.variables);
        p[7] = memo.text(d.traits, '{}');
        p[8] = d.status;
        p[9] = d.attempts;
        p[10] = d.nextAttemptAt.getTime();
        p[11] = d.leaseExpiresAt ? d.leaseExpiresAt.getTime() : null;
        p[12] = d.leaseToken;
        p[13] = d.messageId;
        p[14] = d.lastResponse ?? null;
        p[15] = d.lastError ?? null;
        p[16] = d.sentAt ? d.sentAt.getTime() : null;
        p[17] = d.content === null || d.content === undefined ? null : JSON.stringify(d.content);
        p[18] = d.createdAt.getTime();
        p[19] = d.updatedAt.getTime();
        // `changes` is 0 for a delivery whose (mailing, address) exists: it counts the inserts.
        inserted += insertDelivery.run(p).changes;
      }
      return inserted;
    },

    // Row by row, in order: insert the absent profile; if it existed (or came earlier in `rows`), read
    // it, merge by the contract's rules and write it back when something changed. The transaction sees
    // its own writes, so a repeated address merges onto the row as its earlier occurrence left it.
    upsertProfiles(projectId, rows, options, at, memo) {
      const insert = statement(INSERT_PROFILE);
      const p: unknown[] = [projectId, '', null, '{}', 'subscribed', '[]', at, at];
      for (const row of rows) {
        p[1] = row.address;
        p[2] = row.name ?? null;
        p[3] = memo.text(row.traits, '{}');
        // Labels as given (an absent profile takes `labels ?? []`); the merge makes the union.
        p[5] = memo.text(row.labels, '[]');
        if (insert.run(p).changes > 0) continue;
        const found = statement(SELECT_PROFILE).get(projectId, row.address) as Row | undefined;
        if (!found) continue;
        const next = mergeProfile(
          {
            name: typeof found.name === 'string' ? found.name : null,
            traits: JSON.parse(String(found.traits)),
            labels: JSON.parse(String(found.labels)),
          },
          row,
          options,
        );
        if (next.changed) {
          statement(UPDATE_PROFILE).run(
            next.name,
            JSON.stringify(next.traits),
            JSON.stringify(next.labels),
            at,
            projectId,
            row.address,
          );
        }
      }
      if (options.groupId) {
        const member = statement(INSERT_MEMBER);
        for (const row of rows) member.run(options.groupId, row.address, projectId, at);
      }
    },
  };
}

/** True for null, undefined, `{}` and `[]`. */
function isEmptyJson(value: object | null | undefined): boolean {
  if (value === null || value === undefined) return true;
  if (Array.isArray(value)) return value.length === 0;
  for (const _ in value) return false;
  return true;
}
