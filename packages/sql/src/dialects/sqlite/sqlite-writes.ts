import type { DeliveryRecord, ProfileUpsert, ProfileUpsertOptions } from '@mailroom/core';
import { mergeProfile, newProfile } from '@mailroom/core';
import type Database from 'better-sqlite3';
import type { Db } from '../../connection/connect.js';
import type { SqlRunner } from '../../connection/sql-runner.js';
import type { Row } from '../../rows/codec.js';
import { DELIVERY_COLUMNS, deliveryParams, jsonObject, ms } from '../../rows/codec.js';
import { FAST_MERGE_MAX_CHARS } from '../../writes/fast-merge.js';

/**
 * Rows per set-based statement: the JSON text of a chunk is one string in the JS heap and one parse in
 * SQLite, so a bound keeps both small whatever the caller passes (a CSV page is about 1,024 rows; a batch
 * of the API may be larger).
 */
const CHUNK_ROWS = 8_192;

/**
 * Deliveries of one chunk as ONE statement over `jsonb_each` of a JSON array: SQLite does the per-row
 * work in C, where a prepared single-row statement costs a JS-to-C call and a parameter binding per row.
 * Each element is `[id, address, name, traits, message_id]` (traits as JSON text); the other columns are
 * the same for every delivery of the chunk (checked by {@link sharedColumns}) and travel once, as
 * parameters. SQLite needs the `WHERE true` to parse `ON CONFLICT` after a `SELECT ... FROM`.
 */
const INSERT_DELIVERIES_SHARED = `INSERT INTO mailroom_deliveries (${DELIVERY_COLUMNS.join(', ')})
  SELECT value ->> 0, ?, ?, ?, value ->> 1, value ->> 2, ?, value ->> 3, ?, ?, ?, ?, ?, value ->> 4, ?, ?, ?, ?, ?, ?, ?
  FROM jsonb_each(?) WHERE true ON CONFLICT (mailing_id, address) DO NOTHING`;
/** As {@link INSERT_DELIVERIES_SHARED} for deliveries that differ in more: each element has every column. */
const INSERT_DELIVERIES_ALL = `INSERT INTO mailroom_deliveries (${DELIVERY_COLUMNS.join(', ')})
  SELECT ${DELIVERY_COLUMNS.map((_, i) => `value ->> ${i}`).join(', ')}
  FROM jsonb_each(?) WHERE true ON CONFLICT (mailing_id, address) DO NOTHING`;
const INSERT_MEMBERS = `INSERT INTO mailroom_group_members (group_id, address, project_id, created_at)
  SELECT ?, value, ?, ? FROM json_each(?) WHERE true ON CONFLICT (group_id, address) DO NOTHING`;

const INSERT_PROFILE =
  'INSERT INTO mailroom_profiles (project_id, address, name, traits, status, labels, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (project_id, address) DO NOTHING';
const SELECT_PROFILE =
  'SELECT name, traits, labels FROM mailroom_profiles WHERE project_id = ? AND address = ?';
const UPDATE_PROFILE =
  'UPDATE mailroom_profiles SET name = ?, traits = ?, labels = ?, updated_at = ? WHERE project_id = ? AND address = ?';

/** Incoming traits whose keys the stored profile lacks (`i`: the incoming entry, `s`: a stored one). */
const NEW_TRAIT_KEYS =
  'FROM json_each(excluded.traits) AS i WHERE NOT EXISTS (SELECT 1 FROM json_each(t.traits) AS s WHERE s.key = i.key)';
/**
 * The profiles of a set-based upsert whose traits it may have left unmerged (see {@link profileUpsert}):
 * the parameter is a JSON array of `[address, characters of the incoming traits' JSON]`. A profile it
 * did merge may come back too: merging it again by the rule changes nothing. `CROSS JOIN` keeps the
 * page's rows outside (one key lookup each): left to itself SQLite's planner scanned the project's
 * profiles, for each one the page (3 minutes for a page of 1,033 rows against 50,000 profiles).
 */
const BIG_PROFILES = `FROM json_each(?) AS r CROSS JOIN mailroom_profiles AS p ON p.project_id = ? AND p.address = r.value ->> 0
  WHERE length(p.traits) + (r.value ->> 1) > ${FAST_MERGE_MAX_CHARS}`;
const SELECT_BIG_PROFILES = `SELECT p.address ${BIG_PROFILES}`;

/** Incoming labels the stored profile lacks, each once (its first occurrence). */
const NEW_LABELS = `FROM json_each(excluded.labels) AS i
  WHERE NOT EXISTS (SELECT 1 FROM json_each(t.labels) AS s WHERE s.value = i.value)
    AND NOT EXISTS (SELECT 1 FROM json_each(excluded.labels) AS j WHERE j.key < i.key AND j.value = i.value)`;

/**
 * The set-based profile upsert for one pair of merge options: each element of the JSON array is
 * `[address, name, traits, labels]` (traits and labels as JSON text), the fields of the profile the row
 * would create (`newProfile`). An absent profile is inserted with them; an existing one is merged in
 * SQL by the core's rule (`mergeProfile`, which the conformance kit checks this statement against) and
 * written (with `updated_at`) only when something changed. Exact for incoming traits whose values are
 * all strings (see {@link setBased}): then merging a trait is adding or replacing a string under a key,
 * which `json_patch` does exactly (it keeps the stored keys, nulls and nested objects as they are).
 *
 * The traits cap (`mergeProfile`'s `PROFILE_TRAITS_CAP`) is not computed here: traits merge in SQL only
 * when the stored and incoming JSON texts together are at most {@link FAST_MERGE_MAX_CHARS} characters,
 * which cannot pass the cap; a profile past that keeps its traits (nor does its `updated_at` move for
 * them), and {@link BIG_PROFILES} finds it for the row-by-row merge, which applies the cap exactly.
 */
function profileUpsert(options: Pick<ProfileUpsertOptions, 'onExistingProfile' | 'onExistingTrait'>): string {
  const key = `${options.onExistingProfile}/${options.onExistingTrait}`;
  let text = PROFILE_UPSERTS.get(key);
  if (text === undefined) {
    text = profileUpsertText(options);
    PROFILE_UPSERTS.set(key, text);
  }
  return text;
}

/** The texts of {@link profileUpsert}, one per pair of options. */
const PROFILE_UPSERTS = new Map<string, string>();

function profileUpsertText(
  options: Pick<ProfileUpsertOptions, 'onExistingProfile' | 'onExistingTrait'>,
): string {
  const overrideName = options.onExistingProfile === 'override';
  const overrideTraits = options.onExistingTrait === 'override';
  const name = overrideName
    ? 'coalesce(excluded.name, t.name)'
    : 'CASE WHEN t.name IS NULL THEN excluded.name ELSE t.name END';
  // Under override a trait changes when the stored one is absent or another value (a string equal to
  // the incoming one is unchanged); under preserve only when absent.
  const traitsChanged = overrideTraits
    ? `length(t.traits) + length(excluded.traits) <= ${FAST_MERGE_MAX_CHARS} AND EXISTS (SELECT 1 FROM json_each(excluded.traits) AS i WHERE NOT EXISTS (SELECT 1 FROM json_each(t.traits) AS s WHERE s.key = i.key AND s.type = 'text' AND s.value = i.value))`
    : `length(t.traits) + length(excluded.traits) <= ${FAST_MERGE_MAX_CHARS} AND EXISTS (SELECT 1 ${NEW_TRAIT_KEYS})`;
  const traits = overrideTraits
    ? 'json_patch(t.traits, excluded.traits)'
    : `json_patch(t.traits, (SELECT json_group_object(i.key, i.value) ${NEW_TRAIT_KEYS}))`;
  const labelsChanged = `EXISTS (SELECT 1 ${NEW_LABELS})`;
  const labels = `(SELECT json_group_array(v ORDER BY g, k) FROM (
      SELECT s.value AS v, 0 AS g, s.key AS k FROM json_each(t.labels) AS s
      UNION ALL SELECT i.value, 1, i.key ${NEW_LABELS}))`;
  return `INSERT INTO mailroom_profiles AS t (project_id, address, name, traits, status, labels, created_at, updated_at)
  SELECT ?, value ->> 0, value ->> 1, value ->> 2, 'subscribed', value ->> 3, ?, ? FROM jsonb_each(?) WHERE true
  ON CONFLICT (project_id, address) DO UPDATE SET
    name = ${name},
    traits = CASE WHEN ${traitsChanged} THEN ${traits} ELSE t.traits END,
    labels = CASE WHEN ${labelsChanged} THEN ${labels} ELSE t.labels END,
    updated_at = excluded.updated_at
  WHERE (${name}) IS NOT t.name OR ${traitsChanged} OR ${labelsChanged}`;
}

/**
 * JSON texts of the objects of one write, so that an object written twice (a CSV row's traits, on its
 * delivery and on its profile) is stringified once. Empty objects and arrays cost nothing. Meant for the
 * span of one store call: a caller's object must not change during the call that writes it.
 *
 * Objects are remembered in the order they were first asked for, and a later pass is expected to ask
 * for them again in that order (a page's profiles after its deliveries, row for row): each lookup then
 * costs one comparison, where a map lookup measured costlier per row. The object asked last is
 * remembered too (labels shared by every row). Anything else is simply stringified again.
 */
export class JsonMemo {
  readonly #objects: object[] = [];
  readonly #texts: string[] = [];
  #cursor = 0;
  #last: object | undefined;
  #lastText = '';

  /** The JSON of a JSON object or array; `empty` for null, undefined, `{}` and `[]`. */
  text(value: object | null | undefined, empty: '{}' | '[]'): string {
    if (value === null || value === undefined) return empty;
    if (value === this.#last) return this.#lastText;
    let text: string;
    if (this.#objects[this.#cursor] === value) {
      text = this.#texts[this.#cursor++] as string;
    } else {
      if (isEmptyJson(value)) return empty;
      text = JSON.stringify(value);
      this.#objects.push(value);
      this.#texts.push(text);
    }
    this.#last = value;
    this.#lastText = text;
    return text;
  }
}

/** A statement and its parameters. */
export type Statement = [text: string, params: unknown[]];

/**
 * The statements that insert `deliveries` set-based: one per chunk of rows, each row of the chunk an
 * element of one JSON text parameter, which SQLite walks with `jsonb_each` (`JSON.stringify` of a chunk
 * is native, and so is SQLite's parse). Each statement's changes count the rows it inserted: a delivery
 * whose (mailing, address) exists, in the table or earlier in the chunk, is skipped by the conflict
 * clause. Measured against one run of a prepared single-row statement per row, which it replaces: less
 * CPU per delivery and profile, the B-tree and WAL work that remains being SQLite's own (BENCHMARKS.md,
 * "CSV sources" and "Store").
 */
export function deliveryStatements(deliveries: readonly DeliveryRecord[], memo: JsonMemo): Statement[] {
  const statements: Statement[] = [];
  for (let start = 0; start < deliveries.length; start += CHUNK_ROWS) {
    const chunk = deliveries.slice(start, start + CHUNK_ROWS);
    const shared = sharedColumns(chunk);
    if (shared) {
      const rows = new Array(chunk.length);
      for (let i = 0; i < chunk.length; i++) {
        const d = chunk[i] as DeliveryRecord;
        rows[i] = [d.id, d.address, d.name, memo.text(d.traits, '{}'), d.messageId];
      }
      shared.push(JSON.stringify(rows));
      statements.push([INSERT_DELIVERIES_SHARED, shared]);
    } else {
      const rows = chunk.map((d) => deliveryParams(d, memo.text(d.traits, '{}')));
      statements.push([INSERT_DELIVERIES_ALL, [JSON.stringify(rows)]]);
    }
  }
  return statements;
}

/**
 * The statements that upsert `rows` set-based (see {@link profileUpsert}) and add them to
 * `options.groupId` when set; undefined when the set-based merge would not be exact for them (see
 * {@link setBased}), and they must be merged row by row. `probe`: the parameter of {@link BIG_PROFILES}
 * for them (each row with traits, as `[address, characters of its traits' JSON]`, JavaScript's length,
 * never less than SQLite's), undefined when no row has traits.
 */
export function profileStatements(
  projectId: string,
  rows: readonly ProfileUpsert[],
  options: ProfileUpsertOptions,
  at: number,
  memo: JsonMemo,
): { statements: Statement[]; probe: string | undefined } | undefined {
  if (!setBased(rows)) return undefined;
  const statements: Statement[] = [];
  const probe: Array<[string, number]> = [];
  const upsert = profileUpsert(options);
  for (let start = 0; start < rows.length; start += CHUNK_ROWS) {
    const end = Math.min(rows.length, start + CHUNK_ROWS);
    const values = new Array(end - start);
    for (let i = start; i < end; i++) {
      const row = rows[i] as ProfileUpsert;
      const fields = newProfile(row);
      const traits = memo.text(fields.traits, '{}');
      if (traits !== '{}') probe.push([row.address, traits.length]);
      values[i - start] = [row.address, fields.name, traits, memo.text(fields.labels, '[]')];
    }
    statements.push([upsert, [projectId, at, at, JSON.stringify(values)]]);
  }
  statements.push(...memberStatements(projectId, rows, options, at));
  return { statements, probe: probe.length === 0 ? undefined : JSON.stringify(probe) };
}

function memberStatements(
  projectId: string,
  rows: readonly ProfileUpsert[],
  options: ProfileUpsertOptions,
  at: number,
): Statement[] {
  if (!options.groupId) return [];
  const statements: Statement[] = [];
  for (let start = 0; start < rows.length; start += CHUNK_ROWS) {
    const addresses = rows.slice(start, start + CHUNK_ROWS).map((row) => row.address);
    statements.push([INSERT_MEMBERS, [options.groupId, projectId, at, JSON.stringify(addresses)]]);
  }
  return statements;
}

/** Bulk writes run directly on a SQLite connection held in a transaction (see `SqlRunner.statement`). */
export interface SqliteWriter {
  /** As `BulkWrites.insertDeliveries`. */
  insertDeliveries(deliveries: readonly DeliveryRecord[], memo: JsonMemo): number;
  /** As `BulkWrites.upsertProfiles`: returns the traits the merge skipped (the traits cap). */
  upsertProfiles(
    projectId: string,
    rows: readonly ProfileUpsert[],
    options: ProfileUpsertOptions,
    at: number,
    memo: JsonMemo,
  ): number;
}

/**
 * The direct writer for `tx`, or undefined when `tx` is not a SQLite connection the store reaches
 * directly: the statements of {@link deliveryStatements} and {@link profileStatements}, run at once.
 */
export function sqliteWriter(runner: SqlRunner, tx: Db): SqliteWriter | undefined {
  const probe = runner.statement(tx, INSERT_MEMBERS);
  if (!probe) return undefined;
  const statement = (text: string) => runner.statement(tx, text) as Database.Statement;
  const runAll = (statements: Statement[]) => {
    let changes = 0;
    for (const [text, params] of statements) changes += statement(text).run(params).changes;
    return changes;
  };

  return {
    insertDeliveries: (deliveries, memo) => runAll(deliveryStatements(deliveries, memo)),

    upsertProfiles(projectId, rows, options, at, memo) {
      const set = profileStatements(projectId, rows, options, at, memo);
      if (set) {
        runAll(set.statements);
        // Profiles too big to merge in SQL: merged again by the rule (a no-op for any that SQL merged).
        const probe = set.probe;
        if (probe === undefined) return 0;
        const big = new Set(
          (statement(SELECT_BIG_PROFILES).pluck().all(probe, projectId) as unknown[]).map(String),
        );
        if (big.size === 0) return 0;
        return upsertRowByRow(
          statement,
          projectId,
          rows.filter((row) => big.has(row.address)),
          options,
          at,
          memo,
        );
      }
      const skipped = upsertRowByRow(statement, projectId, rows, options, at, memo);
      runAll(memberStatements(projectId, rows, options, at));
      return skipped;
    },
  };
}

/**
 * A guard statement for a script of set-based statements (the writer thread's), placed after them: it
 * changes a row (the source job's, unchanged) only when no profile of `probe` may have been left
 * unmerged. When it changes none the script rolls back, and the page is written on the event loop,
 * where the row-by-row merge takes those profiles.
 */
export function noBigProfilesGuard(jobId: string, projectId: string, probe: string): Statement {
  return [
    `UPDATE mailroom_source_jobs SET lease_token = lease_token WHERE id = ? AND NOT EXISTS (SELECT 1 ${BIG_PROFILES})`,
    [jobId, probe, projectId],
  ];
}

/**
 * The parameters of {@link INSERT_DELIVERIES_SHARED} for the columns every delivery of `chunk` has
 * alike (in column order, after `project_id`), or undefined when one differs. Dates are compared as
 * the milliseconds they are stored as.
 */
function sharedColumns(chunk: readonly DeliveryRecord[]): unknown[] | undefined {
  const f = chunk[0] as DeliveryRecord;
  const variables = jsonObject(f.variables);
  const content = f.content === null || f.content === undefined ? null : JSON.stringify(f.content);
  const next = f.nextAttemptAt.getTime();
  const lease = ms(f.leaseExpiresAt);
  const sent = ms(f.sentAt);
  const created = f.createdAt.getTime();
  const updated = f.updatedAt.getTime();
  const lastResponse = f.lastResponse ?? null;
  const lastError = f.lastError ?? null;
  for (let i = 1; i < chunk.length; i++) {
    const d = chunk[i] as DeliveryRecord;
    if (
      d.projectId !== f.projectId ||
      d.mailingId !== f.mailingId ||
      d.batchId !== f.batchId ||
      d.status !== f.status ||
      d.attempts !== f.attempts ||
      d.leaseToken !== f.leaseToken ||
      (d.lastResponse ?? null) !== lastResponse ||
      (d.lastError ?? null) !== lastError ||
      d.nextAttemptAt.getTime() !== next ||
      ms(d.leaseExpiresAt) !== lease ||
      ms(d.sentAt) !== sent ||
      d.createdAt.getTime() !== created ||
      d.updatedAt.getTime() !== updated ||
      (d.priority ?? 1) !== (f.priority ?? 1) ||
      // Variables and content are a delivery's own objects: alike only when empty.
      (d.variables !== f.variables && (variables !== '{}' || !isEmptyJson(d.variables))) ||
      (d.content !== f.content && (content !== null || (d.content !== null && d.content !== undefined)))
    ) {
      return undefined;
    }
  }
  return [
    f.projectId,
    f.mailingId,
    f.batchId,
    variables,
    f.status,
    f.attempts,
    next,
    lease,
    f.leaseToken,
    lastResponse,
    lastError,
    sent,
    content,
    created,
    updated,
    f.priority ?? 1,
  ];
}

/**
 * True when the set-based upsert merges `rows` exactly: every incoming trait value a string (what CSV
 * cells are), every label a string, no prototype key, no address twice (a second row for an address
 * must merge onto the first, which the follow-up merge of big profiles could not keep in order). Other values (numbers, whose text SQLite may
 * render differently, booleans, nulls and objects, which `json_patch` would merge differently than the
 * contract's top-level rule) take the row-by-row merge in TypeScript.
 */
function setBased(rows: readonly ProfileUpsert[]): boolean {
  const seen = new Set<string>();
  for (const row of rows) {
    if (seen.has(row.address)) return false;
    seen.add(row.address);
    if (row.name !== undefined && row.name !== null && typeof row.name !== 'string') return false;
    const traits = row.traits;
    if (traits !== undefined && traits !== null) {
      for (const key in traits) {
        if (typeof traits[key] !== 'string' || key === '__proto__') return false;
      }
    }
    if (row.labels) for (const label of row.labels) if (typeof label !== 'string') return false;
  }
  return true;
}

/**
 * Row by row, in order: insert the absent profile (`newProfile`); if it existed (or came earlier in
 * `rows`), read it, merge by the core's rule (`mergeProfile`) and write it back when something changed. The transaction sees its own
 * writes, so a repeated address merges onto the row as its earlier occurrence left it.
 */
function upsertRowByRow(
  statement: (text: string) => Database.Statement,
  projectId: string,
  rows: readonly ProfileUpsert[],
  options: ProfileUpsertOptions,
  at: number,
  memo: JsonMemo,
): number {
  const insert = statement(INSERT_PROFILE);
  let skipped = 0;
  const p: unknown[] = [projectId, '', null, '{}', 'subscribed', '[]', at, at];
  for (const row of rows) {
    const fields = newProfile(row);
    p[1] = row.address;
    p[2] = fields.name;
    p[3] = memo.text(fields.traits, '{}');
    p[5] = memo.text(fields.labels, '[]');
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
    skipped += next.skippedTraits;
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
  return skipped;
}

/** True for null, undefined, `{}` and `[]`. */
function isEmptyJson(value: object | null | undefined): boolean {
  if (value === null || value === undefined) return true;
  if (Array.isArray(value)) return value.length === 0;
  for (const _ in value) return false;
  return true;
}
