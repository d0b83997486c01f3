import type { FormRecord, SignupRecord } from './signup-records.js';

/**
 * Public signups (issue 38): a project's signup forms and each address's signup through one. Every rule of
 * `Store` (store.ts) applies; addresses are exact, already normalized.
 */
export interface SignupStore {
  /** Insert a form. `CONFLICT` if its ref exists (message `form <ref> already exists in project <projectId>`). */
  createForm(form: FormRecord): Promise<void>;
  /** A form by its ref, whatever its project (the public endpoint knows only the ref). */
  findForm(ref: string): Promise<FormRecord | undefined>;
  /** The project's forms, by ref. */
  listForms(projectId: string): Promise<FormRecord[]>;
  /** Replace the form of (form.projectId, form.ref) with `form`; false when the project has no such form. */
  replaceForm(form: FormRecord): Promise<boolean>;
  /** Remove a form of the project (its signups stay, as evidence); true if it existed. */
  deleteForm(projectId: string, ref: string): Promise<boolean>;
  /**
   * Insert `signup` unless (projectId, formRef, address) has one; the stored signup either way.
   * Race guarantee: concurrent calls for one key store one signup and all return it.
   */
  openSignup(signup: SignupRecord): Promise<SignupRecord>;
  /** A signup by id. */
  getSignup(id: string): Promise<SignupRecord | undefined>;
  /**
   * Note a confirmation message sent now: set `sentAt` to `now` when it is null or not after `notAfter`;
   * true when set. Race guarantee: of concurrent calls with one `notAfter`, exactly one gets true (so a
   * signup is mailed at most once per resend interval, whatever the number of processes).
   */
  claimSignupSend(id: string, now: Date, notAfter: Date): Promise<boolean>;
  /**
   * Confirm a signup, in one transaction: status `confirmed` and `confirmedAt` (when pending), and, when
   * `groupId` is given, the address made a member of that group (nothing if it is already). True when
   * this call moved the signup from pending.
   */
  confirmSignup(id: string, now: Date, groupId: string | null): Promise<boolean>;
}
