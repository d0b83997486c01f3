import type {
  AudienceGroupRecord,
  DeliveryRecord,
  DeliveryStatus,
  IdempotencyRecord,
  Json,
  MailingRecord,
  ProfileRecord,
  ProjectRecord,
  ProjectSecretRecord,
  SenderRecord,
  SourceJobRecord,
  SuppressionRecord,
  TemplateRecord,
} from '@mailroom/core';

/** A row as a driver returns it: column name to value. */
export type Row = Record<string, unknown>;

/**
 * Converts records to statement parameters and rows back to records. Dates are epoch milliseconds in
 * a bigint column (exact and comparable on every database; PostgreSQL returns them as strings). JSON is
 * `jsonb` on PostgreSQL, which the driver parses, and text elsewhere.
 */
export interface Codec {
  /** A JSON column's parameter: the JSON text, or SQL NULL for null/undefined. */
  json(value: Json | object | null | undefined): string | null;
  /** A JSON column's value as read (parsed on SQLite and MySQL; the driver parses `jsonb`). */
  fromJson<T>(value: unknown): T;
  /** A project from a `SELECT *` row of its table. */
  project(row: Row): ProjectRecord;
  /** A project secret from a `SELECT *` row of its table. */
  secret(row: Row): ProjectSecretRecord;
  /** A sender identity from a `SELECT *` row of its table. */
  sender(row: Row): SenderRecord;
  /** A template from a `SELECT *` row of its table. */
  template(row: Row): TemplateRecord;
  /** An audience group from a `SELECT *` row of its table. */
  group(row: Row): AudienceGroupRecord;
  /** A profile from a `SELECT *` row of its table. */
  profile(row: Row): ProfileRecord;
  /** A suppression from a `SELECT *` row of its table. */
  suppression(row: Row): SuppressionRecord;
  /** A mailing from a `SELECT *` row of its table. */
  mailing(row: Row): MailingRecord;
  /** A delivery from a `SELECT *` row of its table. */
  delivery(row: Row): DeliveryRecord;
  /**
   * A delivery from its values in {@link DELIVERY_COLUMNS} order, with the {@link DELIVERY_JSON_COLUMNS}
   * already parsed (a SQLite read that returned each row as one JSON array).
   */
  deliveryValues(values: readonly unknown[]): DeliveryRecord;
  /** A source job from a `SELECT *` row of its table. */
  sourceJob(row: Row): SourceJobRecord;
  /** An idempotency record from a `SELECT *` row of its table. */
  idempotency(row: Row): IdempotencyRecord;
  /** Parameters of one delivery row, in {@link DELIVERY_COLUMNS} order. */
  deliveryParams(delivery: DeliveryRecord): unknown[];
  /** Parameters of one mailing row, in {@link MAILING_COLUMNS} order. */
  mailingParams(mailing: MailingRecord): unknown[];
  /** Parameters of one source job row, in {@link SOURCE_JOB_COLUMNS} order. */
  sourceJobParams(job: SourceJobRecord): unknown[];
}

/** Columns of `mailroom_deliveries`, in parameter order. */
export const DELIVERY_COLUMNS = [
  'id',
  'project_id',
  'mailing_id',
  'batch_id',
  'address',
  'name',
  'variables',
  'traits',
  'status',
  'attempts',
  'next_attempt_at',
  'lease_expires_at',
  'lease_token',
  'message_id',
  'last_response',
  'last_error',
  'sent_at',
  'content',
  'created_at',
  'updated_at',
  'priority',
] as const;

/** The columns of {@link DELIVERY_COLUMNS} holding JSON. */
export const DELIVERY_JSON_COLUMNS = ['variables', 'traits', 'content'] as const;

/** PostgreSQL types of {@link DELIVERY_COLUMNS}, in the same order. */
export const DELIVERY_PG_TYPES = [
  'text',
  'text',
  'text',
  'text',
  'text',
  'text',
  'jsonb',
  'jsonb',
  'text',
  'integer',
  'bigint',
  'bigint',
  'bigint',
  'text',
  'text',
  'text',
  'bigint',
  'jsonb',
  'bigint',
  'bigint',
  'integer',
] as const;

/** Columns of `mailroom_mailings`, in parameter order. */
export const MAILING_COLUMNS = [
  'id',
  'project_id',
  'kind',
  'ref',
  'status',
  'sender',
  'reply_to',
  'content',
  'attachments',
  'invitation',
  'acquiring_audience',
  'schedule_for',
  'store_content',
  'sandbox',
  'batch_count',
  'created_at',
  'updated_at',
  'topic',
] as const;

/** Columns of `mailroom_source_jobs`, in parameter order. */
export const SOURCE_JOB_COLUMNS = [
  'id',
  'project_id',
  'mailing_id',
  'batch_id',
  'kind',
  'config',
  'status',
  'checkpoint',
  'rows_done',
  'rows_failed',
  'row_errors',
  'error',
  'lease_expires_at',
  'lease_token',
  'created_at',
  'updated_at',
] as const;

/** Epoch milliseconds of a date, or null. */
export function ms(date: Date | null | undefined): number | null {
  return date ? date.getTime() : null;
}

function num(value: unknown): number {
  return typeof value === 'number' ? value : Number(value);
}

function date(value: unknown): Date {
  return new Date(num(value));
}

function dateOrNull(value: unknown): Date | null {
  return value === null || value === undefined ? null : date(value);
}

function str(value: unknown): string {
  return typeof value === 'string' ? value : String(value);
}

function strOrNull(value: unknown): string | null {
  return value === null || value === undefined ? null : str(value);
}

/** A JSON object column's parameter, `{}` for none; the empty object (most rows) without stringifying. */
export function jsonObject(value: object | null | undefined): string {
  if (value === null || value === undefined) return '{}';
  for (const _ in value) return JSON.stringify(value);
  return '{}';
}

/** A JSON column's value that arrived parsed: SQL NULL as null. */
function parsedJson<T>(value: unknown): T {
  return (value === undefined ? null : value) as T;
}

/** A delivery from its values in {@link DELIVERY_COLUMNS} order; `json` reads a JSON column's value. */
function decodeDelivery(v: readonly unknown[], json: <T>(value: unknown) => T): DeliveryRecord {
  return {
    id: str(v[0]),
    projectId: str(v[1]),
    mailingId: str(v[2]),
    batchId: str(v[3]),
    address: str(v[4]),
    name: str(v[5]),
    variables: json(v[6]) ?? {},
    traits: json(v[7]) ?? {},
    status: str(v[8]) as DeliveryStatus,
    attempts: num(v[9]),
    nextAttemptAt: date(v[10]),
    leaseExpiresAt: dateOrNull(v[11]),
    leaseToken: num(v[12]),
    messageId: str(v[13]),
    lastResponse: strOrNull(v[14]),
    lastError: strOrNull(v[15]),
    sentAt: dateOrNull(v[16]),
    content: json(v[17]),
    createdAt: date(v[18]),
    updatedAt: date(v[19]),
    // Absent means 1 (`DeliveryRecord.priority`): only a single message's 0 is spelled out.
    ...(num(v[20]) === 0 ? { priority: 0 as const } : {}),
  };
}

/**
 * Parameters of one delivery row, in {@link DELIVERY_COLUMNS} order (the same on every database).
 * `traits` is the traits' JSON when the caller has it already (a CSV row's, shared with its profile).
 */
export function deliveryParams(d: DeliveryRecord, traits: string = jsonObject(d.traits)): unknown[] {
  return [
    d.id,
    d.projectId,
    d.mailingId,
    d.batchId,
    d.address,
    d.name,
    jsonObject(d.variables),
    traits,
    d.status,
    d.attempts,
    ms(d.nextAttemptAt),
    ms(d.leaseExpiresAt),
    d.leaseToken,
    d.messageId,
    d.lastResponse ?? null,
    d.lastError ?? null,
    ms(d.sentAt),
    d.content === null || d.content === undefined ? null : JSON.stringify(d.content),
    ms(d.createdAt),
    ms(d.updatedAt),
    d.priority ?? 1,
  ];
}

/** The codec of a dialect; `jsonParsedByDriver`: JSON columns come back parsed (`SqlDialect`). */
export function createCodec(jsonParsedByDriver: boolean): Codec {
  const json = (value: Json | object | null | undefined): string | null =>
    value === undefined || value === null ? null : JSON.stringify(value);
  const fromJson = <T>(value: unknown): T => {
    if (value === null || value === undefined) return null as T;
    return (jsonParsedByDriver || typeof value !== 'string' ? value : JSON.parse(value)) as T;
  };
  // A JSON column that may hold the JSON value `null` itself (configs, checkpoints, responses).
  const jsonValue = (value: Json | null | undefined): string => JSON.stringify(value ?? null);

  return {
    json,
    fromJson,
    project: (row) => ({ id: str(row.id), name: str(row.name), createdAt: date(row.created_at) }),
    secret: (row) => ({
      hash: str(row.hash),
      id: str(row.id),
      projectId: str(row.project_id),
      mode: str(row.mode) as ProjectSecretRecord['mode'],
      scope: str(row.scope) as ProjectSecretRecord['scope'],
      // Keys written before 010 have no domain list: no limit.
      domains: row.domains === null || row.domains === undefined ? [] : fromJson<string[]>(row.domains),
      prefix: str(row.prefix),
      createdAt: date(row.created_at),
      lastUsedAt: dateOrNull(row.last_used_at),
      revokedAt: dateOrNull(row.revoked_at),
      expiresAt: dateOrNull(row.expires_at),
      replacedBy: row.replaced_by === null || row.replaced_by === undefined ? null : str(row.replaced_by),
      // Keys written before 018 have no name.
      name: strOrNull(row.name),
    }),
    sender: (row) => ({
      id: str(row.id),
      projectId: str(row.project_id),
      address: str(row.address),
      name: strOrNull(row.name),
      dkim: fromJson(row.dkim),
      createdAt: date(row.created_at),
    }),
    template: (row) => ({
      id: str(row.id),
      projectId: str(row.project_id),
      ref: str(row.ref),
      format: str(row.format) as TemplateRecord['format'],
      subject: strOrNull(row.subject),
      source: str(row.source),
      compiled: str(row.compiled),
      version: num(row.version),
      createdAt: date(row.created_at),
      updatedAt: date(row.updated_at),
    }),
    group: (row) => ({
      id: str(row.id),
      projectId: str(row.project_id),
      ref: str(row.ref),
      name: strOrNull(row.name),
      // Absent when off: the record of a group made before migration 023 reads the same.
      ...(Number(row.double_opt_in ?? 0) === 1 ? { doubleOptIn: true } : {}),
      createdAt: date(row.created_at),
    }),
    profile: (row) => ({
      projectId: str(row.project_id),
      address: str(row.address),
      name: strOrNull(row.name),
      traits: fromJson(row.traits) ?? {},
      status: str(row.status) as ProfileRecord['status'],
      labels: fromJson(row.labels) ?? [],
      createdAt: date(row.created_at),
      updatedAt: date(row.updated_at),
    }),
    suppression: (row) => ({
      projectId: str(row.project_id),
      address: str(row.address),
      reason: str(row.reason) as SuppressionRecord['reason'],
      detail: strOrNull(row.detail),
      createdAt: date(row.created_at),
    }),
    mailing: (row) => ({
      id: str(row.id),
      projectId: str(row.project_id),
      kind: str(row.kind) as MailingRecord['kind'],
      ref: str(row.ref),
      status: str(row.status) as MailingRecord['status'],
      sender: fromJson(row.sender),
      replyTo: strOrNull(row.reply_to),
      content: fromJson(row.content),
      attachments: fromJson(row.attachments) ?? [],
      invitation: fromJson(row.invitation),
      options: {
        acquiringAudience: strOrNull(row.acquiring_audience),
        scheduleFor: dateOrNull(row.schedule_for),
        storeContent: num(row.store_content) !== 0,
        // Only a topic mailing carries the key (migration 020 added the column).
        ...(row.topic === null || row.topic === undefined ? {} : { topic: str(row.topic) }),
      },
      sandbox: num(row.sandbox) !== 0,
      batchCount: num(row.batch_count),
      createdAt: date(row.created_at),
      updatedAt: date(row.updated_at),
    }),
    delivery: (row) =>
      decodeDelivery(
        DELIVERY_COLUMNS.map((column) => row[column]),
        fromJson,
      ),
    deliveryValues: (values) => decodeDelivery(values, parsedJson),
    sourceJob: (row) => ({
      id: str(row.id),
      projectId: str(row.project_id),
      mailingId: str(row.mailing_id),
      batchId: str(row.batch_id),
      kind: str(row.kind) as SourceJobRecord['kind'],
      config: fromJson(row.config),
      status: str(row.status) as SourceJobRecord['status'],
      checkpoint: fromJson(row.checkpoint),
      rowsDone: num(row.rows_done),
      rowsFailed: num(row.rows_failed),
      rowErrors: fromJson(row.row_errors) ?? [],
      error: strOrNull(row.error),
      leaseExpiresAt: dateOrNull(row.lease_expires_at),
      leaseToken: num(row.lease_token),
      createdAt: date(row.created_at),
      updatedAt: date(row.updated_at),
    }),
    idempotency: (row) => ({
      projectId: str(row.project_id),
      key: str(row.idem_key),
      requestHash: str(row.request_hash),
      state: str(row.state) as IdempotencyRecord['state'],
      response: fromJson(row.response),
      createdAt: date(row.created_at),
      expiresAt: date(row.expires_at),
    }),
    deliveryParams: (d) => deliveryParams(d),
    mailingParams: (m) => [
      m.id,
      m.projectId,
      m.kind,
      m.ref,
      m.status,
      json(m.sender),
      m.replyTo ?? null,
      json(m.content),
      json(m.attachments ?? []),
      json(m.invitation),
      m.options.acquiringAudience ?? null,
      ms(m.options.scheduleFor),
      m.options.storeContent ? 1 : 0,
      m.sandbox ? 1 : 0,
      m.batchCount,
      ms(m.createdAt),
      ms(m.updatedAt),
      m.options.topic ?? null,
    ],
    sourceJobParams: (j) => [
      j.id,
      j.projectId,
      j.mailingId,
      j.batchId,
      j.kind,
      jsonValue(j.config),
      j.status,
      json(j.checkpoint),
      j.rowsDone,
      j.rowsFailed,
      json(j.rowErrors ?? []),
      j.error ?? null,
      ms(j.leaseExpiresAt),
      j.leaseToken,
      ms(j.createdAt),
      ms(j.updatedAt),
    ],
  };
}
