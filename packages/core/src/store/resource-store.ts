import type { PageOptions } from './paging.js';
import type { SenderRecord, SuppressionRecord, TemplateRecord } from './records.js';

/** A page of a project's suppressions, optionally only the addresses containing a text. */
export interface SuppressionPageOptions extends PageOptions {
  /**
   * Only the addresses that contain this text, compared by bytes (case-sensitive, like every address
   * comparison of the store). Absent or empty: every suppression.
   */
  contains?: string;
}

/**
 * What the management API lists, versions and removes of a project's resources: sender identities,
 * templates and suppressions, in pages ordered by address or ref (byte order, like every listing of the
 * store). The records are those of `AccountStore` and `AudienceStore`; every rule of `Store` (store.ts)
 * applies.
 */
export interface ResourceStore {
  // Sender identities

  /** The project's sender identities, by address ascending, strictly after `page.after` (an address). */
  listSenders(projectId: string, page: PageOptions): Promise<SenderRecord[]>;
  /** Remove a sender identity; true if one was removed. Mailings already accepted keep their sender. */
  removeSender(projectId: string, address: string): Promise<boolean>;

  // Templates

  /** The project's templates, by ref ascending, strictly after `page.after` (a ref). */
  listTemplatePage(projectId: string, page: PageOptions): Promise<TemplateRecord[]>;
  /**
   * Write a version of a template, if the stored one is the version the caller read: with
   * `expectedVersion` null, only when no template of (projectId, ref) exists (a creation); otherwise only
   * when the stored template has exactly `expectedVersion` (an update, which replaces the row: the caller
   * sets `version` to the next one). Returns whether it was written; nothing is written otherwise.
   *
   * Race guarantee: of concurrent calls for one (projectId, ref) with the same `expectedVersion`, at most
   * one returns true (processes included, when `capabilities.multiProcess`), so two updates never make
   * the same version and a creation never overwrites a template.
   */
  writeTemplateVersion(template: TemplateRecord, expectedVersion: number | null): Promise<boolean>;
  /** Remove a template; true if one was removed. Mailings keep the content they were accepted with. */
  removeTemplate(projectId: string, ref: string): Promise<boolean>;

  // Suppressions

  /**
   * The project's suppressions, by address ascending, strictly after `page.after` (an address), only
   * those whose address contains `page.contains` when it is given.
   */
  listSuppressions(projectId: string, page: SuppressionPageOptions): Promise<SuppressionRecord[]>;
}
