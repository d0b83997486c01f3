import type { PageOptions } from './paging.js';
import type { ProfileRecord, ProfileStatus, SourceJobRecord, Variables } from './records.js';

/** Which profiles {@link AudienceAdminStore.listProfiles} answers; every given filter applies. */
export interface ProfileFilter {
  /** Only addresses starting with this text (byte order: the same case as stored). */
  prefix?: string;
  /** Only profiles tagged with this label. */
  label?: string;
}

/** The fields {@link AudienceAdminStore.updateProfile} replaces; absent ones are kept. */
export interface ProfileChange {
  /** A new address (already normalized): the profile and its group memberships move to it. */
  address?: string;
  name?: string | null;
  /** The whole new traits object (the core merges a patch before calling). */
  traits?: Variables;
  /** The whole new label list. */
  labels?: string[];
  status?: ProfileStatus;
}

/** What {@link AudienceAdminStore.eraseAddress} removed or rewrote, row counts per kind. */
export interface ErasureCounts {
  /** 1 when a profile was deleted, else 0. */
  profiles: number;
  memberships: number;
  suppressions: number;
  /** Deliveries whose address, name, variables, traits, content and replies were replaced. */
  deliveries: number;
  /** Events whose address was removed from their columns and data. */
  events: number;
  /** Webhook messages whose payload had the address replaced. */
  webhookMessages: number;
  /** Inbound signals (bounces, complaints) whose address and diagnostic were removed. */
  signals: number;
  /** Received messages (inbound routes) from the address, deleted with their raw bytes. */
  receivedMessages: number;
}

/** The address written in place of an erased one in events, payloads and signals (RFC 2606 `.invalid`). */
export const ERASED_ADDRESS = 'erased@erased.invalid';

/**
 * The address an erased delivery is kept under: unique per delivery (a mailing's deliveries are unique by
 * address), naming no one.
 */
export function erasedDeliveryAddress(deliveryId: string): string {
  return `${deliveryId}@erased.invalid`;
}

/**
 * Managing a project's audience over the API: listing and editing profiles, removing groups, and erasing
 * an address (the right to erasure). Every rule of `Store` (store.ts) applies.
 */
export interface AudienceAdminStore {
  /**
   * The project's profiles matching `filter`, ordered by address ascending, strictly after `page.after`
   * (an address), at most `page.limit`. A prefix is read as a range of the primary key; a label filter
   * reads the profiles in address order until the page is full (labels are not indexed).
   */
  listProfiles(projectId: string, filter: ProfileFilter, page: PageOptions): Promise<ProfileRecord[]>;
  /**
   * Replace the fields of `change` on the profile (projectId, address) and set `updatedAt` to `now`;
   * returns the profile as written, or `undefined` (nothing written) when there is none. A new `address`
   * moves the profile and its group memberships to it; when the project has a profile at that address
   * already the call is refused with `CONFLICT` (message `profile <address> already exists in project
   * <projectId>`) and nothing is written.
   *
   * Race guarantee: atomic; of two racing moves to one new address at most one succeeds.
   */
  updateProfile(
    projectId: string,
    address: string,
    change: ProfileChange,
    now: Date,
  ): Promise<ProfileRecord | undefined>;
  /** Remove an audience group of the project and its memberships (not the profiles); true if it existed. */
  deleteGroup(projectId: string, ref: string): Promise<boolean>;
  /**
   * Erase an address from the project, in one transaction: delete its profile, its group memberships, its
   * suppression and its soft-bounce streak; on each of its deliveries (of the project's mailings) replace
   * the address with {@link erasedDeliveryAddress}, the name with `''`, variables and traits with `{}`, and
   * clear the rendered content, last response and last error (status, attempts, times and Message-ID are
   * kept, so counts stay right); in its events clear the `address` column and replace the address wherever
   * it appears in `data` with {@link ERASED_ADDRESS}, likewise in the payloads of their webhook messages;
   * on its inbound signals replace the address and clear the diagnostic and reported address and
   * Message-ID; in the URLs of its tracked clicks replace the address likewise; delete the received
   * messages (inbound routes) whose `fromAddress` is the address folded, with their raw bytes. Reads of the project then never return the address. Costs a read of the project's events
   * and webhook messages (not indexed by address): an occasional operation, never on the sending path.
   */
  eraseAddress(projectId: string, address: string, now: Date): Promise<ErasureCounts>;
  /**
   * Insert the source job of an audience import (`POST /audience/imports`): a CSV source that feeds a
   * group and no mailing, so its `mailingId` and `batchId` are its own `id` (see `isAudienceImport`). It
   * is then claimed, checkpointed and read like any source job (`SourceJobStore`; `listSourceJobs(id)`
   * answers it). `CONFLICT` if its id exists.
   */
  insertImportJob(job: SourceJobRecord): Promise<void>;
}

/** Whether a source job is an audience import (no mailing: its `mailingId` is its own id). */
export function isAudienceImport(job: Pick<SourceJobRecord, 'id' | 'mailingId'>): boolean {
  return job.mailingId === job.id;
}
