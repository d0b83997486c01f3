import type { BatchWrite, ProfileUpsert, ProfileUpsertOptions } from '@mailroom/core';
import { newProfile } from '@mailroom/core';
import type { Codec } from '../../rows/codec.js';
import {
  DELIVERY_COLUMNS,
  DELIVERY_PG_TYPES,
  MAILING_COLUMNS,
  SOURCE_JOB_COLUMNS,
} from '../../rows/codec.js';
import { FAST_MERGE_MAX_CHARS } from '../../writes/fast-merge.js';
import type { Statement } from '../sql-dialect.js';
import { pgInsert } from './postgres-insert.js';

const SOURCE_JOB_PG_TYPES = [
  'text',
  'text',
  'text',
  'text',
  'text',
  'jsonb',
  'text',
  'jsonb',
  'bigint',
  'bigint',
  'jsonb',
  'text',
  'bigint',
  'bigint',
  'bigint',
  'bigint',
] as const;

/**
 * Where a statement embedded in {@link pgCommitBatch} gets its project: from the mailing CTE `m`, which
 * also gates it (no mailing row, nothing written).
 */
const FROM_MAILING = { project: 'm.project_id', from: 'm, ' };

/**
 * PostgreSQL: upsert profiles by the core's profile-merge rule in one statement: an absent profile is
 * inserted with the fields `newProfile` gives, an existing one merged in SQL as `mergeProfile` does (the
 * conformance kit checks this statement against it). `INSERT ... ON CONFLICT DO UPDATE` takes each
 * existing row's lock and merges onto its latest version, and its `WHERE` leaves unchanged rows (and
 * their `updated_at`) alone. Traits merge on top-level keys with jsonb `||` (the right side wins a shared
 * key; a jsonb key is a key, whatever its name), labels append the incoming ones not yet present, in
 * order. Undefined when an address repeats in `rows` (one statement cannot change a row twice); the
 * caller then takes the statement-per-step path. `rows` must be sorted by address (lock order).
 *
 * The traits cap (`mergeProfile`'s `PROFILE_TRAITS_CAP`) is not computed here: traits merge only when
 * the stored and incoming traits as text are together at most `FAST_MERGE_MAX_CHARS` characters, which
 * cannot pass the cap; a bigger profile keeps its traits here (and its `updated_at` for them), and
 * {@link pgBigProfiles} finds it for the merge by the rule in JavaScript.
 *
 * @param projectId the project, or `m` inside {@link pgCommitBatch} (the project of the mailing written).
 */
export function pgUpsertProfiles(
  codec: Codec,
  projectId: string | 'm',
  rows: readonly ProfileUpsert[],
  options: ProfileUpsertOptions,
  at: number,
): Statement | undefined {
  const addresses: string[] = new Array(rows.length);
  const names: Array<string | null> = new Array(rows.length);
  const traits: string[] = new Array(rows.length);
  const labels: string[] = new Array(rows.length);
  let anyName = false;
  let anyTraits = false;
  let anyLabels = false;
  const seen = new Set<string>();
  for (let i = 0; i < rows.length; i++) {
    const row = rows[i] as ProfileUpsert;
    if (seen.has(row.address)) return undefined;
    seen.add(row.address);
    const fields = newProfile(row);
    addresses[i] = row.address;
    names[i] = fields.name;
    anyName ||= fields.name !== null;
    traits[i] = codec.json(fields.traits) as string;
    anyTraits ||= Object.keys(fields.traits).length > 0;
    labels[i] = codec.json(fields.labels) as string;
    anyLabels ||= fields.labels.length > 0;
  }
  const override = (action: string) => action === 'override';
  // Each merged field, as an expression over the stored row `t` and the incoming one `excluded`.
  const name = anyName
    ? `CASE WHEN excluded.name IS NOT NULL${override(options.onExistingProfile) ? '' : ' AND t.name IS NULL'} THEN excluded.name ELSE t.name END`
    : null;
  const traitsMerged = anyTraits
    ? `CASE WHEN ${FITS} THEN ${override(options.onExistingTrait) ? 't.traits || excluded.traits' : 'excluded.traits || t.traits'} ELSE t.traits END`
    : null;
  const labelsMerged = anyLabels
    ? `t.labels || COALESCE((SELECT jsonb_agg(x.e ORDER BY x.i) FROM jsonb_array_elements(excluded.labels) WITH ORDINALITY AS x(e, i)
         WHERE NOT t.labels @> jsonb_build_array(x.e)
           AND NOT EXISTS (SELECT 1 FROM jsonb_array_elements(excluded.labels) WITH ORDINALITY AS y(e, i) WHERE y.i < x.i AND y.e = x.e)), '[]'::jsonb)`
    : null;
  const sets: string[] = [];
  const changed: string[] = [];
  if (name) {
    sets.push(`name = ${name}`);
    changed.push(`(${name}) IS DISTINCT FROM t.name`);
  }
  if (traitsMerged) {
    sets.push(`traits = ${traitsMerged}`);
    changed.push(`(${traitsMerged}) <> t.traits`);
  }
  if (labelsMerged) {
    sets.push(`labels = ${labelsMerged}`);
    changed.push(`(${labelsMerged}) <> t.labels`);
  }
  const onConflict =
    sets.length === 0
      ? 'DO NOTHING'
      : `DO UPDATE SET ${sets.join(', ')}, updated_at = excluded.updated_at WHERE ${changed.join(' OR ')}`;
  const embedded = projectId === 'm';
  const text = `INSERT INTO mailroom_profiles AS t (project_id, address, name, traits, status, labels, created_at, updated_at)
    SELECT ${embedded ? FROM_MAILING.project : '?'}, u.address, u.name, u.traits::jsonb, 'subscribed', u.labels::jsonb, ?::bigint, ?::bigint
    FROM ${embedded ? FROM_MAILING.from : ''}unnest(?::text[], ?::text[], ?::text[], ?::text[]) AS u(address, name, traits, labels)
    ON CONFLICT (project_id, address) ${onConflict}`;
  const values = [at, at, addresses, names, traits, labels];
  return { text, params: embedded ? values : [projectId, ...values] };
}

/** The stored and incoming traits are small enough to merge in SQL (see {@link pgUpsertProfiles}). */
const FITS = `length(t.traits::text) + length(excluded.traits::text) <= ${FAST_MERGE_MAX_CHARS}`;

/**
 * After {@link pgUpsertProfiles} of `rows` (in the same transaction): the addresses of the profiles whose
 * traits it may have left unmerged, by the negation of its condition (the rows it left are locked by its
 * `ON CONFLICT`, so they read as it saw them). A profile it did merge may come back too: merging it
 * again by the rule changes nothing. Undefined when no row has traits.
 */
export function pgBigProfiles(
  codec: Codec,
  projectId: string,
  rows: readonly ProfileUpsert[],
): Statement | undefined {
  const addresses: string[] = [];
  const traits: string[] = [];
  for (const row of rows) {
    if (!row.traits || Object.keys(row.traits).length === 0) continue;
    addresses.push(row.address);
    traits.push(codec.json(row.traits) as string);
  }
  if (addresses.length === 0) return undefined;
  return {
    text: `SELECT t.address FROM unnest(?::text[], ?::text[]) AS u(address, traits)
      JOIN mailroom_profiles AS t ON t.project_id = ? AND t.address = u.address
      WHERE length(t.traits::text) + length(u.traits::jsonb::text) > ${FAST_MERGE_MAX_CHARS}`,
    params: [addresses, traits, projectId],
  };
}

/**
 * Group membership of `addresses` (in address order), skipping members already there.
 * @param projectId the project, or `m` inside {@link pgCommitBatch}.
 */
export function pgAddMembers(
  groupId: string,
  projectId: string | 'm',
  addresses: readonly string[],
  at: number,
): Statement {
  const embedded = projectId === 'm';
  return {
    text: `INSERT INTO mailroom_group_members (group_id, address, project_id, created_at)
      SELECT ?, a.address, ${embedded ? FROM_MAILING.project : '?'}, ?::bigint
      FROM ${embedded ? FROM_MAILING.from : ''}unnest(?::text[]) AS a(address)
      ON CONFLICT (group_id, address) DO NOTHING`,
    params: embedded ? [groupId, at, addresses] : [groupId, projectId, at, addresses],
  };
}

/**
 * PostgreSQL: all of `commitBatch` as ONE statement, so one round trip and one implicit transaction: the
 * mailing's insert (or its update, which takes the row lock and checks the status), then, only if that
 * produced the mailing, the batch, the deliveries, the profiles, the memberships and the source jobs, as
 * data-modifying CTEs. The result has one row, the mailing's columns (as written) and `mailroom_inserted`,
 * or none when the update found no mailing in an allowed status (nothing written). Columns are listed,
 * never `*`: the text is prepared once per connection, and a prepared `*` breaks when a table gains one.
 * Undefined when it cannot be one statement (a repeated profile address).
 *
 * Concurrent commits to one mailing are ordered by its row lock, taken first; the deliveries' unique key
 * makes a second delivery for an address impossible whatever the snapshot.
 */
export function pgCommitBatch(codec: Codec, write: BatchWrite): Statement | undefined {
  const { target, batch, now } = write;
  const at = now.getTime();
  const ctes: string[] = [];
  const params: unknown[] = [];
  const add = (name: string, statement: Statement) => {
    ctes.push(`${name} AS (${statement.text})`);
    params.push(...statement.params);
  };
  const gate = 'EXISTS (SELECT 1 FROM m)';

  if ('create' in target) {
    const mailing = { ...target.create, batchCount: target.create.batchCount + 1, updatedAt: now };
    add('m', {
      text: `INSERT INTO mailroom_mailings (${MAILING_COLUMNS.join(', ')}) VALUES (${MAILING_COLUMNS.map(() => '?').join(', ')}) RETURNING ${MAILING_COLUMNS.join(', ')}`,
      params: codec.mailingParams(mailing),
    });
  } else {
    add('m', {
      text: `UPDATE mailroom_mailings SET status = ?, batch_count = batch_count + 1, updated_at = ?
        WHERE id = ? AND status = ANY(?::text[]) RETURNING ${MAILING_COLUMNS.join(', ')}`,
      params: [target.setStatus, at, target.mailingId, [...target.allowStatus]],
    });
  }
  add('b', {
    text: `INSERT INTO mailroom_batches (id, mailing_id, seq, recipient_count, created_at)
      SELECT ?, ?, ?::integer, ?::integer, ?::bigint WHERE ${gate}`,
    params: [batch.id, batch.mailingId, batch.seq, batch.recipientCount, batch.createdAt.getTime()],
  });
  if (write.deliveries.length > 0) {
    const sorted = [...write.deliveries].sort(
      (a, b) => compare(a.mailingId, b.mailingId) || compare(a.address, b.address),
    );
    add(
      'd',
      pgInsert(
        {
          table: 'mailroom_deliveries',
          columns: DELIVERY_COLUMNS,
          pgTypes: DELIVERY_PG_TYPES,
          key: 'mailing_id, address',
        },
        sorted.map(codec.deliveryParams),
        { where: gate, returning: '1' },
      ),
    );
  }
  if (write.profiles.length > 0) {
    // Traits may need the merge by the rule (the traits cap), which one statement cannot follow: an
    // accepted request's profiles have none (an address and a name), so the single statement stays.
    if (write.profiles.some((row) => row.traits && Object.keys(row.traits).length > 0)) return undefined;
    const sorted = [...write.profiles].sort((a, b) => compare(a.address, b.address));
    const upsert = pgUpsertProfiles(codec, 'm', sorted, write.profileOptions, at);
    if (!upsert) return undefined;
    add('p', upsert);
    if (write.profileOptions.groupId) {
      add(
        'g',
        pgAddMembers(
          write.profileOptions.groupId,
          'm',
          sorted.map((row) => row.address),
          at,
        ),
      );
    }
  }
  if (write.sourceJobs.length > 0) {
    add(
      's',
      pgInsert(
        {
          table: 'mailroom_source_jobs',
          columns: SOURCE_JOB_COLUMNS,
          pgTypes: SOURCE_JOB_PG_TYPES,
          key: 'id',
        },
        write.sourceJobs.map(codec.sourceJobParams),
        { where: gate, onConflict: 'fail' },
      ),
    );
  }
  const inserted = write.deliveries.length > 0 ? '(SELECT count(*) FROM d)' : '0';
  return {
    text: `WITH ${ctes.join(',\n')}\nSELECT ${inserted}::integer AS mailroom_inserted, m.* FROM m`,
    params,
  };
}

function compare(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
