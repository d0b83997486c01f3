import type { Expression } from 'kysely';

type DataType = Expression<unknown>;

/**
 * The column types of the schema, one set per dialect (`SqlDialect.columnTypes`): keys sort bytewise
 * everywhere, as the in-memory store sorts.
 */
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
  /** Bytes (pieces of received messages, at most a MiB each). */
  bytes: DataType;
}
