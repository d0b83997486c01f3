/**
 * Shared pieces of the Store conformance kit: the per-test context, seeding helpers and the error
 * assertion. Internal to the kit (adapters use `storeTestSuite` from `store-test-suite.ts`), but for
 * {@link seedProfiles}, which engine tests use too.
 */
import { expect } from 'vitest';
import type { ErrorCode } from '../base/errors.js';
import type { DeliveryOutcome } from '../store/delivery-queue.js';
import type { WebhookMessageRecord } from '../store/event-records.js';
import type {
  BatchRecord,
  ClaimedDelivery,
  DeliveryRecord,
  MailingRecord,
  ProfileUpsert,
  ProfileUpsertOptions,
  ProjectRecord,
  ProjectSecretRecord,
  SourceJobRecord,
} from '../store/records.js';
import type { BatchCommitResult, Store } from '../store/store.js';
import { makeBatch, makeDelivery, makeMailing, makeProject, makeSecret, testTime } from './store-fixtures.js';

/** What each section of the kit reads: the store of the running test and the suite's options. */
export interface StoreSuiteContext {
  /** The store of the running test: fresh, initialized, closed after the test. */
  readonly store: Store;
  /** Number of concurrent callers in race tests. */
  readonly concurrency: number;
}

/** Profile options with both actions `preserve` and no group. */
export const PRESERVE: ProfileUpsertOptions = { onExistingTrait: 'preserve', onExistingProfile: 'preserve' };

/** The `i`-th test address; they sort by `i` under any collation (same length, lower-case ASCII). */
export function addressOf(i: number): string {
  return `r${String(i).padStart(5, '0')}@example.com`;
}

/** `count` test addresses starting at `from`. */
export function addresses(count: number, from = 0): string[] {
  return Array.from({ length: count }, (_, i) => addressOf(from + i));
}

/**
 * Asserts that `promise` rejects with a `MailroomError` of `code` whose message contains each of `names`
 * (what a person reading it needs: the ref or address that already exists, never a table or constraint).
 */
export async function expectStoreError(
  promise: Promise<unknown>,
  code: ErrorCode,
  names: readonly string[] = [],
): Promise<void> {
  const outcome = await promise.then(
    (value: unknown) => ({ rejected: false as const, value }),
    (error: unknown) => ({ rejected: true as const, error }),
  );
  expect(outcome.rejected, `expected a MailroomError ${code}, but the call resolved`).toBe(true);
  if (!outcome.rejected) return;
  // Compared by name, not instanceof: a published kit and an adapter may load two copies of the class.
  const error = outcome.error as { name?: unknown; code?: unknown; message?: unknown };
  expect({ name: error.name, code: error.code }, String(error.message)).toEqual({
    name: 'MailroomError',
    code,
  });
  for (const name of names) expect(String(error.message)).toContain(name);
}

/** Creates a project with one live secret. */
export async function seedProject(
  store: Store,
  overrides: Partial<ProjectRecord> = {},
): Promise<{ project: ProjectRecord; secret: ProjectSecretRecord }> {
  const project = makeProject(overrides);
  const secret = makeSecret(project.id);
  await store.createProject(project, secret);
  return { project, secret };
}

/** What {@link seedMailing} wrote. */
export interface SeededMailing {
  /** The mailing's project. */
  project: ProjectRecord;
  /** The mailing as given to `commitBatch` (`batchCount: 0`). */
  mailing: MailingRecord;
  /** Its first batch. */
  batch: BatchRecord;
  /** The deliveries as given. */
  deliveries: DeliveryRecord[];
  /** What `commitBatch` answered (the stored mailing). */
  result: BatchCommitResult;
}

/** Options of {@link seedMailing}. */
export interface SeedMailingOptions {
  /** The project (created when absent). */
  project?: ProjectRecord;
  /** Fields of the mailing. */
  mailing?: Partial<MailingRecord>;
  /** Recipient addresses: one delivery each. @default [] */
  addresses?: string[];
  /** Fields of the `i`-th delivery. */
  delivery?: (address: string, i: number) => Partial<DeliveryRecord>;
  /** Profiles to upsert in the same commit. */
  profiles?: ProfileUpsert[];
  /** @default PRESERVE */
  profileOptions?: ProfileUpsertOptions;
  /** Source jobs of the mailing, built from its mailing and batch. */
  sourceJobs?: (mailing: MailingRecord, batch: BatchRecord) => SourceJobRecord[];
  /** The commit's `now`. @default testTime() */
  now?: Date;
}

/** Creates a mailing and its first batch through `commitBatch`. */
export async function seedMailing(store: Store, options: SeedMailingOptions = {}): Promise<SeededMailing> {
  const project = options.project ?? (await seedProject(store)).project;
  const mailing = makeMailing(project.id, options.mailing);
  const list = options.addresses ?? [];
  const batch = makeBatch(mailing.id, { recipientCount: list.length });
  const deliveries = list.map((address, i) =>
    makeDelivery(mailing, batch, address, options.delivery?.(address, i)),
  );
  const result = await store.commitBatch({
    target: { create: mailing },
    batch,
    deliveries,
    profiles: options.profiles ?? [],
    profileOptions: options.profileOptions ?? PRESERVE,
    sourceJobs: options.sourceJobs?.(mailing, batch) ?? [],
    now: options.now ?? testTime(),
  });
  return { project, mailing, batch, deliveries, result };
}

/**
 * Upserts profiles as the engine does: in the commit of an accepted request that indexes its recipients
 * (`commitBatch`, here of a new, completed mailing of the project with no deliveries). A store has no
 * method that writes profiles alone. For tests of stores and of the engine that need stored profiles.
 */
export async function seedProfiles(
  store: Store,
  projectId: string,
  rows: ProfileUpsert[],
  options: ProfileUpsertOptions = PRESERVE,
  now: Date = testTime(),
): Promise<void> {
  const mailing = makeMailing(projectId, { status: 'completed', createdAt: now, updatedAt: now });
  await store.commitBatch({
    target: { create: mailing },
    batch: makeBatch(mailing.id, { recipientCount: 0, createdAt: now }),
    deliveries: [],
    profiles: rows,
    profileOptions: options,
    sourceJobs: [],
    now,
  });
}

/** A project's webhook message by id, read as the dashboard reads them (`listWebhookMessages`). */
export async function findWebhookMessage(
  store: Store,
  projectId: string,
  id: string,
): Promise<WebhookMessageRecord | undefined> {
  return (await store.listWebhookMessages(projectId, { limit: 1_000 })).find((m) => m.id === id);
}

/** Records one outcome with `completeDeliveries`; whether it was written. */
export async function completeOne(
  store: Store,
  delivery: Pick<ClaimedDelivery, 'id' | 'leaseToken'>,
  outcome: DeliveryOutcome,
): Promise<boolean> {
  const [written] = await store.completeDeliveries([
    { id: delivery.id, leaseToken: delivery.leaseToken, outcome },
  ]);
  return written === true;
}

/** Sorts strings by code unit, as the kit expects `ordered by address` on its ASCII test addresses. */
export function sorted(values: readonly string[]): string[] {
  return [...values].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
}

/** `record` without `updatedAt`, for comparisons after a write whose JSDoc does not fix `updatedAt`. */
export function withoutUpdatedAt<T extends { updatedAt: Date }>(record: T): Omit<T, 'updatedAt'> {
  const { updatedAt: _ignored, ...rest } = record;
  return rest;
}
