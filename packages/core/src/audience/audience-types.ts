import type { AudienceGroupView, SourceJobView } from '../admin/engine-views.js';
import type { ConsentRecordView, ContactTopicView } from '../consent/consent-types.js';
import type { AuthContext } from '../context/auth-context.js';
import type { ErasureCounts } from '../store/audience-admin-store.js';
import type { Page } from '../store/paging.js';
import type { Json, ProfileRecord, SuppressionReason } from '../store/records.js';

/** A profile of the project's audience, as the API shows it. */
export type ProfileView = Omit<ProfileRecord, 'projectId'>;

/** One profile with what else the project keeps about its address. */
export interface ProfileDetailView extends ProfileView {
  /** The address's suppression, if it is suppressed (it then gets no broadcast mail). */
  suppression: { reason: SuppressionReason; detail: string | null; createdAt: Date } | null;
  /** Every topic of the project with the contact's state (its choice or the topic's default). */
  topics: ContactTopicView[];
  /**
   * The contact's consent history, oldest first: the first 500 records (the rest through
   * `mailroom.topics.history`, `GET /audience/profiles/:address/consent`).
   */
  consent: ConsentRecordView[];
}

/** A search of the project's profiles. */
export interface ProfileSearch {
  /** Only addresses starting with this text (the domain part compared lower-cased). */
  q?: string;
  /** Only profiles tagged with this label (CSV sources and imports tag theirs). */
  label?: string;
  /** The `next` cursor of the previous page (an address). */
  after?: string;
  /** Page size, at most 500. @default 50 */
  limit?: number;
}

/**
 * A change of one profile (`PATCH /audience/profiles/:email`). Every field is optional; absent ones are
 * kept. Unknown fields are refused.
 */
export interface ProfilePatch {
  /** A new address: the profile and its group memberships move to it; an address in use is `CONFLICT`. */
  address?: string;
  /** The display name; null clears it. */
  name?: string | null;
  /** Merged onto the stored traits at the top level (RFC 7396): a key set to null is removed. */
  traits?: Record<string, Json>;
  /** The whole new label list. */
  labels?: string[];
}

/** A CSV import into an audience group (`POST /audience/imports`). */
export interface ImportRequest {
  /** The CSV file, downloaded in byte ranges like a broadcast's CSV source (the host must serve ranges). */
  url: string;
  /** The ref of the audience group the rows join (it must exist). */
  group: string;
  /** The label each imported profile is tagged with. @default the group's ref */
  label?: string;
  /** CSV column -> profile field (`email`, `name`, or a trait), as a broadcast's CSV source takes them. */
  columnMappings?: Record<string, string>;
}

/** An audience import and its progress. */
export interface ImportView extends Omit<SourceJobView, 'kind' | 'name'> {
  /** The import's id (`imp_...`), for `GET /audience/imports/:id`. */
  id: string;
  /** The group's ref. */
  group: string;
  label: string;
}

/** What erasing an address did (`DELETE /audience/profiles/:email`): rows removed or rewritten per kind. */
export type ErasureView = ErasureCounts & { address: string };

/**
 * The project's audience over the API (`mailroom.audience`): groups, profiles, erasure and CSV imports.
 * Every method takes a project secret or an `AuthContext`, and sees only that project's rows.
 */
export interface MailroomAudience {
  /** The project's groups, by ref, with member counts. */
  listGroups(auth: string | AuthContext): Promise<AudienceGroupView[]>;
  /** Create a group; a ref in use is `CONFLICT`, a malformed one `VALIDATION_FAILED`. */
  createGroup(
    auth: string | AuthContext,
    input: { ref: string; name?: string | null; doubleOptIn?: boolean },
  ): Promise<AudienceGroupView>;
  /** Remove a group and its memberships (the profiles stay); `NOT_FOUND` when absent. */
  deleteGroup(auth: string | AuthContext, ref: string): Promise<void>;
  /** A group's members by address, in pages; `NOT_FOUND` for an unknown group. */
  listMembers(
    auth: string | AuthContext,
    ref: string,
    page?: { after?: string; limit?: number },
  ): Promise<Page<ProfileView>>;
  /** The project's profiles by address, optionally by address prefix or label, in pages. */
  listProfiles(auth: string | AuthContext, search?: ProfileSearch): Promise<Page<ProfileView>>;
  /** One profile with its suppression; `NOT_FOUND` when absent. */
  getProfile(auth: string | AuthContext, address: string): Promise<ProfileDetailView>;
  /**
   * Change a profile (see {@link ProfilePatch}); `VALIDATION_FAILED` naming the field for bad input,
   * `CONFLICT` naming `address` when the new address has a profile already (nothing is written).
   */
  updateProfile(auth: string | AuthContext, address: string, patch: unknown): Promise<ProfileView>;
  /**
   * Erase an address from the project (a data-subject erasure request): the profile, its memberships,
   * its suppression, and its personal data wherever the project keeps it (deliveries, events, webhook
   * payloads, bounce reports); delivery rows stay, under a placeholder address, so counts stay right.
   * See docs/erasure.md. `NOT_FOUND` when the project knows nothing of the address.
   */
  eraseProfile(auth: string | AuthContext, address: string): Promise<ErasureView>;
  /**
   * Start a CSV import into a group: the file is probed now (byte ranges), then expanded by the worker as
   * a source job, a page at a time, like a broadcast's CSV source, adding profiles (no mail is sent).
   */
  startImport(auth: string | AuthContext, request: unknown): Promise<ImportView>;
  /** An import and its progress; `NOT_FOUND` for an unknown id. */
  getImport(auth: string | AuthContext, id: string): Promise<ImportView>;
}
