import type { Kysely, Migration } from 'kysely';
import { sql } from 'kysely';
import type { SqlKind } from '../connection/options.js';

/**
 * A profile's address folded as `foldAddress` folds it (ASCII letters lower-cased, every other character
 * as it is), in SQL: SQLite's `lower` touches ASCII only; PostgreSQL's does under the `C` collation; MySQL's
 * lowers every letter its collation knows, so there the fold is the ASCII letters replaced one by one (a
 * stored virtual column, `address_folded`). `findUnsubscribed` reads it by the index of migration 030.
 */
export function foldedAddressSql(kind: SqlKind): string {
  if (kind === 'sqlite') return 'lower(address)';
  if (kind === 'postgres') return 'lower(address COLLATE "C")';
  return 'address_folded';
}

/** MySQL's ASCII-only fold of `address`: 26 case-sensitive replacements (`REPLACE` matches exactly). */
function mysqlAsciiFold(): string {
  let text = 'address';
  for (let c = 65; c <= 90; c++) {
    text = `REPLACE(${text}, '${String.fromCharCode(c)}', '${String.fromCharCode(c + 32)}')`;
  }
  return text;
}

/**
 * 030: an index of the unsubscribed profiles by folded address, so that a profile `Foo@x.test`
 * unsubscribed stops mail to `foo@x.test` too (issue 36), as a suppression does, for one indexed read per
 * claim. SQLite and PostgreSQL: a partial expression index over the unsubscribed profiles only (the
 * subscribed ones cost it nothing: on a big audience it is small, and writing a subscribed profile
 * touches it not at all). MySQL has no partial index: a virtual column (computed, not stored in the
 * rows, so adding it rewrites nothing) and an index on (project, folded address).
 */
export function unsubscribedFolded(kind: SqlKind): Migration {
  return {
    async up(db: Kysely<unknown>): Promise<void> {
      if (kind === 'mysql') {
        await sql
          .raw(
            `ALTER TABLE mailroom_profiles ADD COLUMN address_folded varchar(320) AS (${mysqlAsciiFold()}) VIRTUAL, ADD INDEX mailroom_profiles_folded (project_id, address_folded)`,
          )
          .execute(db);
        return;
      }
      await sql
        .raw(
          `CREATE INDEX mailroom_profiles_unsubscribed_folded ON mailroom_profiles (project_id, ${foldedAddressSql(kind)}) WHERE status = 'unsubscribed'`,
        )
        .execute(db);
    },
  };
}
