import type { OutboxWrite } from './event-records.js';
import type { PageOptions } from './paging.js';
import type { AudienceGroupRecord, ProfileRecord, ProfileStatus, SuppressionRecord } from './records.js';

/**
 * A project's audience: groups, the profiles of the people it mails (with their subscription status),
 * and its suppression list. Every rule of `Store` (store.ts) applies; addresses are exact, already normalized.
 *
 * Profiles are written with the writes that name their addresses (`MailingStore.commitBatch`,
 * `SourceJobStore.commitSourcePage`), by the core's profile-merge rule (`mergeProfile`), and by
 * {@link AudienceStore.setProfileStatus}.
 */
export interface AudienceStore {
  // Groups and profiles

  /**
   * Insert an audience group. `CONFLICT` if (projectId, ref) exists, with the message
   * `audience group <ref> already exists in project <projectId>`.
   */
  createGroup(group: AudienceGroupRecord): Promise<void>;
  /** An audience group by ref in the project. */
  getGroup(projectId: string, ref: string): Promise<AudienceGroupRecord | undefined>;
  /** The project's audience groups, by ref, each with its member count. */
  listGroups(projectId: string): Promise<Array<AudienceGroupRecord & { members: number }>>;
  /** A profile by address in the project. */
  getProfile(projectId: string, address: string): Promise<ProfileRecord | undefined>;
  /** The profiles of `addresses` that exist in the project (any order; absent ones are left out). */
  findProfiles(projectId: string, addresses: readonly string[]): Promise<ProfileRecord[]>;
  /**
   * Which of `addresses` have an `unsubscribed` profile in the project, matched on the folded form
   * (`foldAddress`: ASCII letters lower-cased, local part included), as suppressions are: a profile
   * `Foo@x.test` unsubscribed matches `foo@x.test` and `FOO@x.test`. Answers the folded forms that
   * matched, each once, in any order. One read for all of `addresses` (the worker asks once per claim);
   * a store keeps it cheap on a big audience (the SQL stores with an index of the unsubscribed profiles'
   * folded addresses, migration `030_unsubscribed_folded`).
   */
  findUnsubscribed(projectId: string, addresses: readonly string[]): Promise<string[]>;
  /**
   * Set a profile's subscription status, creating a bare profile if there is none.
   */
  setProfileStatus(
    projectId: string,
    address: string,
    status: ProfileStatus,
    now: Date,
    /** Events of the change, written in the same transaction (see `EventStore`). */
    outbox?: OutboxWrite,
  ): Promise<void>;
  /**
   * Members of a group, ordered by address ascending, strictly after `page.after` (an address).
   * Stable under concurrent inserts: a member present for the whole listing is returned exactly once.
   */
  listGroupMembers(projectId: string, groupId: string, page: PageOptions): Promise<ProfileRecord[]>;

  // Suppression

  /**
   * Insert or replace the suppression of (projectId, `foldAddress(address)`): suppressions are stored
   * with the folded address (ASCII letters lower-cased, local part included), so that case variants are one.
   */
  addSuppression(suppression: SuppressionRecord): Promise<void>;
  /** Remove the suppression of the folded `address` (any case variant); true if one was removed. */
  removeSuppression(projectId: string, address: string): Promise<boolean>;
  /**
   * Which of `addresses` are suppressed in the project, matched on their folded form (`foldAddress`):
   * `SUPPA@x.test` finds the suppression of `suppA@x.test`. Records come back with the folded address.
   */
  findSuppressed(projectId: string, addresses: readonly string[]): Promise<SuppressionRecord[]>;
}
