import type { CreateTableBuilder, Expression } from 'kysely';
import { sql } from 'kysely';
import type { SqlKind } from '../connection/options.js';

type DataType = Expression<unknown>;

/** Column types per database: keys sort bytewise everywhere, as the in-memory store sorts. */
export interface ColumnTypes {
  /** Ids: indexed, short. */
  id: DataType;
  /** Refs and idempotency keys: indexed, up to 255 characters. */
  ref: DataType;
  /** Email addresses: indexed, up to 320 characters (RFC 5321 limits). */
  address: DataType;
  /** Short enumerations (status, kind, mode). */
  short: DataType;
  /** Unbounded text. */
  text: DataType;
  /** JSON documents. */
  json: DataType;
  /** Epoch milliseconds and large counters. */
  big: DataType;
  /** Small integers and 0/1 flags. */
  int: DataType;
}

export function columnTypes(kind: SqlKind): ColumnTypes {
  if (kind === 'postgres') {
    // COLLATE "C": byte order, so ORDER BY address and keyset paging agree across databases.
    const key = sql`text collate "C"`;
    return {
      id: key,
      ref: key,
      address: key,
      short: sql`text`,
      text: sql`text`,
      json: sql`jsonb`,
      big: sql`bigint`,
      int: sql`integer`,
    };
  }
  if (kind === 'mysql') {
    return {
      id: sql`varchar(128)`,
      ref: sql`varchar(255)`,
      address: sql`varchar(320)`,
      short: sql`varchar(32)`,
      text: sql`longtext`,
      json: sql`longtext`,
      big: sql`bigint`,
      int: sql`integer`,
    };
  }
  return {
    id: sql`text`,
    ref: sql`text`,
    address: sql`text`,
    short: sql`text`,
    text: sql`text`,
    json: sql`text`,
    big: sql`integer`,
    int: sql`integer`,
  };
}

/**
 * Table options: on MySQL, utf8mb4 with a binary collation, so that addresses compare exactly (the
 * local part of an address is case-sensitive) and sort bytewise; InnoDB for row locks.
 */
export function tableOptions<TB extends string, C extends string>(
  kind: SqlKind,
  table: CreateTableBuilder<TB, C>,
) {
  return kind === 'mysql'
    ? table.modifyEnd(sql`engine = InnoDB default charset = utf8mb4 collate = utf8mb4_bin`)
    : table;
}
