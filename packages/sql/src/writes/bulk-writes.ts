import type { DeliveryRecord, ProfileFields, ProfileUpsert, ProfileUpsertOptions } from '@mailroom/core';
import { mergeProfile, newProfile } from '@mailroom/core';
import type { Db } from '../connection/connect.js';
import type { SqlRunner } from '../connection/sql-runner.js';
import type { SqlDialect } from '../dialects/sql-dialect.js';
import { JsonMemo, sqliteWriter } from '../dialects/sqlite/sqlite-writes.js';
import type { Codec, Row } from '../rows/codec.js';
import { DELIVERY_COLUMNS, DELIVERY_PG_TYPES } from '../rows/codec.js';
import { insertMany } from './insert-many.js';
import type { InsertTarget } from './insert-target.js';

const DELIVERIES: InsertTarget = {
  table: 'mailroom_deliveries',
  columns: DELIVERY_COLUMNS,
  pgTypes: DELIVERY_PG_TYPES,
  key: 'mailing_id, address',
};
const PROFILES: InsertTarget = {
  table: 'mailroom_profiles',
  columns: ['project_id', 'address', 'name', 'traits', 'status', 'labels', 'created_at', 'updated_at'],
  pgTypes: ['text', 'text', 'text', 'jsonb', 'text', 'jsonb', 'bigint', 'bigint'],
  key: 'project_id, address',
};
const MEMBERS: InsertTarget = {
  table: 'mailroom_group_members',
  columns: ['group_id', 'address', 'project_id', 'created_at'],
  pgTypes: ['text', 'text', 'text', 'bigint'],
  key: 'group_id, address',
};
/** Addresses per `IN (...)` list when reading profiles back. */
const IN_LIST_SIZE = 500;

/**
 * Multi-row writes of deliveries and profiles, meant to run inside one transaction of the caller.
 * Rows are written in address order so that concurrent transactions lock shared keys in the same order
 * and do not deadlock each other.
 */
export interface BulkWrites {
  /**
   * Insert deliveries, skipping any whose (mailingId, address) exists (also within `deliveries`).
   * Returns how many were inserted. `memo`: JSON texts shared with `upsertProfiles` of the same write
   * (a CSV row's traits go to its delivery and its profile).
   */
  insertDeliveries(tx: Db, deliveries: readonly DeliveryRecord[], memo?: JsonMemo): Promise<number>;
  /**
   * Upsert profiles by the core's profile-merge rule (`newProfile`, `mergeProfile`), writing only the
   * profiles it changes, and add them to `options.groupId` when set. Resolves the traits the merge skipped
   * (the traits cap), summed.
   */
  upsertProfiles(
    tx: Db,
    projectId: string,
    rows: readonly ProfileUpsert[],
    options: ProfileUpsertOptions,
    now: Date,
    memo?: JsonMemo,
  ): Promise<number>;
}

/** The bulk writers for one dialect, runner and codec. */
export function createBulkWrites(dialect: SqlDialect, runner: SqlRunner, codec: Codec): BulkWrites {
  return {
    async insertDeliveries(tx, deliveries, memo) {
      if (deliveries.length === 0) return 0;
      const direct = sqliteWriter(runner, tx);
      if (direct) return direct.insertDeliveries(deliveries, memo ?? new JsonMemo());
      const sorted = dialect.rowLocks ? [...deliveries].sort(byMailingAndAddress) : deliveries;
      return (await insertMany(dialect, runner, tx, DELIVERIES, sorted.map(codec.deliveryParams))).affected;
    },

    async upsertProfiles(tx, projectId, rows, options, now, memo) {
      if (rows.length === 0) return 0;
      const at = now.getTime();
      const direct = sqliteWriter(runner, tx);
      if (direct) return direct.upsertProfiles(projectId, rows, options, at, memo ?? new JsonMemo());
      let sorted: readonly ProfileUpsert[] = [...rows].sort((a, b) => compare(a.address, b.address));
      // The dialect's merge in SQL, which may leave rows to the rule here (profiles near the traits cap).
      const left = await dialect.upsertProfiles?.(runner, codec, tx, projectId, sorted, options, at);
      if (left) {
        if (left.length === 0) return 0;
        sorted = left;
      }

      // 1. Insert every absent profile as the rule makes it (`newProfile`). Profiles that already existed
      //    are left alone here; once this returns, every address has a row, so step 2 can lock them all.
      const inserted = new Set<string>();
      const absent = sorted.map((row) => {
        const fields = newProfile(row);
        return [
          projectId,
          row.address,
          fields.name,
          codec.json(fields.traits),
          'subscribed',
          codec.json(fields.labels),
          at,
          at,
        ];
      });
      if (dialect.returning) {
        const result = await insertMany<{ address: string }>(dialect, runner, tx, PROFILES, absent, {
          returning: 'address',
        });
        for (const { address } of result.rows) inserted.add(address);
      } else {
        await insertMany(dialect, runner, tx, PROFILES, absent);
      }

      // 2. Read back (and lock) the profiles that existed before, and merge by the rule (`mergeProfile`). On MySQL,
      //    which cannot say which rows it inserted, the fresh rows come back too and merge to no change.
      //    A repeated address (callers deduplicate, but a repeat must not be lost) merges in order.
      const firstSeen = new Set<string>();
      const toMerge = sorted.filter((row) => {
        const first = !firstSeen.has(row.address);
        firstSeen.add(row.address);
        return !(first && inserted.has(row.address));
      });
      const current = new Map<string, ProfileFields>();
      const toRead = [...new Set(toMerge.map((row) => row.address))];
      for (let i = 0; i < toRead.length; i += IN_LIST_SIZE) {
        const slice = toRead.slice(i, i + IN_LIST_SIZE);
        const { rows: found } = await runner.run<Row>(
          tx,
          `SELECT address, name, traits, labels FROM mailroom_profiles${dialect.forceIndex('PRIMARY')} WHERE project_id = ? AND address IN ${runner.values(1, slice.length)}${runner.forUpdate}`,
          [projectId, ...slice],
        );
        for (const row of found) {
          current.set(String(row.address), {
            name: row.name === null || row.name === undefined ? null : String(row.name),
            traits: codec.fromJson(row.traits) ?? {},
            labels: codec.fromJson(row.labels) ?? [],
          });
        }
      }
      const merged = new Map<string, ProfileFields>();
      let skipped = 0;
      for (const row of toMerge) {
        const stored = current.get(row.address);
        if (!stored) continue;
        const next = mergeProfile(stored, row, options);
        skipped += next.skippedTraits;
        if (!next.changed) continue;
        current.set(row.address, next);
        merged.set(row.address, next);
      }
      const changed = [...merged].map(([address, profile]) => [
        projectId,
        address,
        profile.name,
        codec.json(profile.traits),
        'subscribed',
        codec.json(profile.labels),
        at,
        at,
      ]);

      // 3. Write the merged profiles back in one statement per chunk; status and created_at are kept.
      await insertMany(dialect, runner, tx, PROFILES, changed, {
        update: ['name', 'traits', 'labels', 'updated_at'],
      });

      // 4. Group membership.
      if (options.groupId) {
        const groupId = options.groupId;
        await insertMany(
          dialect,
          runner,
          tx,
          MEMBERS,
          sorted.map((row) => [groupId, row.address, projectId, at]),
        );
      }
      return skipped;
    },
  };
}

function compare(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

function byMailingAndAddress(a: DeliveryRecord, b: DeliveryRecord): number {
  return compare(a.mailingId, b.mailingId) || compare(a.address, b.address);
}
