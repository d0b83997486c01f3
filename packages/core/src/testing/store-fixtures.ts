/**
 * Record factories for tests of stores and of the engine. Each returns a complete, valid record with
 * random ids and unique keys (so records never collide, even on a shared database), dated from
 * {@link TEST_EPOCH}; pass `overrides` to set any field.
 */
import { createHash, randomUUID } from 'node:crypto';
import type { DkimKeyRecord, DomainRecord } from '../store/domain-store.js';
import type {
  AudienceGroupRecord,
  BatchRecord,
  DeliveryRecord,
  IdempotencyRecord,
  MailingRecord,
  ProjectRecord,
  ProjectSecretRecord,
  SenderRecord,
  SourceJobRecord,
  SuppressionRecord,
  TemplateRecord,
  Variables,
} from '../store/records.js';

/** The instant test records are dated from: far from the real clock, so no test depends on it. */
export const TEST_EPOCH: Date = new Date('2030-01-01T00:00:00.000Z');

/** {@link TEST_EPOCH} plus `offsetMs` milliseconds, as a new `Date`. */
export function testTime(offsetMs = 0): Date {
  return new Date(TEST_EPOCH.getTime() + offsetMs);
}

/** A random id with a readable prefix, for example `testId('dlv')` gives `dlv_3f2a...`. */
export function testId(prefix: string): string {
  return `${prefix}_${randomUUID().replaceAll('-', '')}`;
}

/** A random SHA-256 hex digest, as stored for a project secret. */
export function testSecretHash(): string {
  return createHash('sha256').update(randomUUID()).digest('hex');
}

/**
 * Variables with nested values, nulls and non-ASCII text, to check that JSON fields round-trip.
 * A new object on every call.
 */
export function richVariables(): Variables {
  return {
    greeting: 'Grüße, 世界 👋',
    count: 3,
    ratio: 0.25,
    flag: true,
    nothing: null,
    nested: { list: [1, 'два', { deep: [null, false, 'ñ'] }], empty: {}, emptyList: [] },
    'key with spaces & ünïcode': 'value "quoted" \\ back',
  };
}

/** A project. */
export function makeProject(overrides: Partial<ProjectRecord> = {}): ProjectRecord {
  return { id: testId('prj'), name: 'Test project', createdAt: testTime(), ...overrides };
}

/** A live `full` key of `projectId` with no domain limit (only its random hash), never used. */
export function makeSecret(
  projectId: string,
  overrides: Partial<ProjectSecretRecord> = {},
): ProjectSecretRecord {
  return {
    hash: testSecretHash(),
    id: testId('key'),
    projectId,
    mode: 'live',
    scope: 'full',
    domains: [],
    prefix: 'sk_live_test',
    createdAt: testTime(),
    lastUsedAt: null,
    revokedAt: null,
    expiresAt: null,
    replacedBy: null,
    name: null,
    ...overrides,
  };
}

/** A sender identity of `projectId`. */
export function makeSender(
  projectId: string,
  address: string,
  overrides: Partial<SenderRecord> = {},
): SenderRecord {
  return {
    id: testId('snd'),
    projectId,
    address,
    name: null,
    dkim: null,
    createdAt: testTime(),
    ...overrides,
  };
}

/** An HTML template of `projectId`, version 1. */
export function makeTemplate(
  projectId: string,
  ref: string,
  overrides: Partial<TemplateRecord> = {},
): TemplateRecord {
  const source = '<p>Hello {{ profile.firstName | default: "there" }}</p>';
  return {
    id: testId('tpl'),
    projectId,
    ref,
    format: 'html',
    subject: 'Hello',
    source,
    compiled: source,
    version: 1,
    createdAt: testTime(),
    updatedAt: testTime(),
    ...overrides,
  };
}

/** An audience group of `projectId`. */
export function makeGroup(
  projectId: string,
  ref: string,
  overrides: Partial<AudienceGroupRecord> = {},
): AudienceGroupRecord {
  return { id: testId('grp'), projectId, ref, name: null, createdAt: testTime(), ...overrides };
}

/** A manual suppression of `address` in `projectId`. */
export function makeSuppression(
  projectId: string,
  address: string,
  overrides: Partial<SuppressionRecord> = {},
): SuppressionRecord {
  return { projectId, address, reason: 'manual', detail: null, createdAt: testTime(), ...overrides };
}

/**
 * A `queued` broadcast of `projectId` with `batchCount: 0` (a commit increments it). Pass
 * `{ kind: 'message' }` for a single message (its ref then starts with `msg_`).
 */
export function makeMailing(projectId: string, overrides: Partial<MailingRecord> = {}): MailingRecord {
  const kind = overrides.kind ?? 'broadcast';
  return {
    id: testId('mlg'),
    projectId,
    kind,
    ref: testId(kind === 'message' ? 'msg' : 'bc'),
    status: 'queued',
    sender: { address: 'news@example.com', name: 'News' },
    replyTo: null,
    content: {
      subject: 'Hello {{ name }}',
      preheader: null,
      html: '<p>Hello {{ name }}</p>',
      text: null,
      variables: {},
      templateRef: null,
      templateVersion: null,
    },
    attachments: [],
    invitation: null,
    options: { acquiringAudience: null, scheduleFor: null, storeContent: false },
    sandbox: false,
    batchCount: 0,
    createdAt: testTime(),
    updatedAt: testTime(),
    ...overrides,
  };
}

/** Batch number `seq` (default 1) of `mailingId`. */
export function makeBatch(mailingId: string, overrides: Partial<BatchRecord> = {}): BatchRecord {
  return { id: testId('bat'), mailingId, seq: 1, recipientCount: 0, createdAt: testTime(), ...overrides };
}

/** A `queued` delivery of `address`, due at {@link TEST_EPOCH}, in `batch` of `mailing`. */
export function makeDelivery(
  mailing: Pick<MailingRecord, 'id' | 'projectId'>,
  batch: Pick<BatchRecord, 'id'>,
  address: string,
  overrides: Partial<DeliveryRecord> = {},
): DeliveryRecord {
  const id = overrides.id ?? testId('dlv');
  return {
    id,
    projectId: mailing.projectId,
    mailingId: mailing.id,
    batchId: batch.id,
    address,
    name: 'Recipient',
    variables: {},
    traits: {},
    status: 'queued',
    attempts: 0,
    nextAttemptAt: testTime(),
    leaseExpiresAt: null,
    leaseToken: 0,
    messageId: `<${id}@mailroom.test>`,
    lastResponse: null,
    lastError: null,
    sentAt: null,
    content: null,
    createdAt: testTime(),
    updatedAt: testTime(),
    ...overrides,
  };
}

/** A `pending` audience source job of `mailing`, started by `batch`. */
export function makeSourceJob(
  mailing: Pick<MailingRecord, 'id' | 'projectId'>,
  batch: Pick<BatchRecord, 'id'>,
  overrides: Partial<SourceJobRecord> = {},
): SourceJobRecord {
  return {
    id: testId('src'),
    projectId: mailing.projectId,
    mailingId: mailing.id,
    batchId: batch.id,
    kind: 'audience',
    config: { ref: 'group-ref', includeUnsubscribed: false },
    status: 'pending',
    checkpoint: null,
    rowsDone: 0,
    rowsFailed: 0,
    rowErrors: [],
    error: null,
    leaseExpiresAt: null,
    leaseToken: 0,
    createdAt: testTime(),
    updatedAt: testTime(),
    ...overrides,
  };
}

/** A `running` idempotency record of (`projectId`, `key`) that expires a day after {@link TEST_EPOCH}. */
export function makeIdempotency(
  projectId: string,
  key: string,
  overrides: Partial<IdempotencyRecord> = {},
): IdempotencyRecord {
  return {
    projectId,
    key,
    requestHash: testSecretHash(),
    state: 'running',
    response: null,
    createdAt: testTime(),
    expiresAt: testTime(86_400_000),
    ...overrides,
  };
}

/** A DKIM key, `pending`, with a stand-in public key and sealed private key (the store keeps them as given). */
export function makeDkimKey(overrides: Partial<DkimKeyRecord> = {}): DkimKeyRecord {
  return {
    selector: `mr${randomUUID().slice(0, 8)}`,
    algorithm: 'rsa',
    publicKey: 'MIIBIjANBgkqhkiG9w0BAQEFAAOCAQ8AMIIBCgKCAQEAtest',
    sealedPrivateKey: `mrk1.${randomUUID()}.iv.tag.ciphertext`,
    state: 'pending',
    createdAt: testTime(),
    activatedAt: null,
    retireAt: null,
    ...overrides,
  };
}

/** A sending domain of a project, `pending`, with one key, due a check at {@link TEST_EPOCH}. */
export function makeDomain(projectId: string, overrides: Partial<DomainRecord> = {}): DomainRecord {
  return {
    id: testId('dom'),
    projectId,
    domain: `d${randomUUID().slice(0, 12)}.example.com`,
    state: 'pending',
    returnPath: null,
    returnPathMx: null,
    dmarcReports: null,
    keys: [makeDkimKey()],
    findings: null,
    checkedAt: null,
    nextCheckAt: testTime(),
    createdAt: testTime(),
    updatedAt: testTime(),
    ...overrides,
  };
}
