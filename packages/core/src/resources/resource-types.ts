import type { AuthContext } from '../context/auth-context.js';
import type { TemplateProblem } from '../render/template-check.js';
import type { Page } from '../store/paging.js';
import type { RenderedContent, SuppressionReason, TemplateFormat, Variables } from '../store/records.js';

/** A template of the project. */
export interface TemplateView {
  ref: string;
  format: TemplateFormat;
  subject: string | null;
  /** The source as written (MJML, HTML or text, with Liquid). */
  source: string;
  version: number;
  createdAt: Date;
  updatedAt: Date;
}

/** Sample data for a template preview. */
export interface TemplateSample {
  /** Global variables. @default {} */
  variables?: Variables;
  /** The recipient the preview is rendered for. @default { address: 'ada@example.com', name: 'Ada Lovelace' } */
  recipient?: { address?: string; name?: string };
}

/**
 * The management API of a project's templates, senders and suppressions (`mailroom.templates`,
 * `mailroom.senders`, `mailroom.suppressions`; HTTP `/templates`, `/senders`, `/suppressions`). Every
 * method takes the project's secret or an `AuthContext`, and sees that project only: another project's
 * ref or address answers `NOT_FOUND` like one that does not exist. Inputs are validated as the HTTP
 * bodies are (an unknown field is refused by name: `VALIDATION_FAILED`).
 */

/** A page request: `after` is the `next` cursor of the previous page. */
export interface PageRequest {
  /** The `next` of the previous page. */
  after?: string;
  /** Page size, 1 to 200. @default 50 */
  limit?: number;
}

/** A problem of a template source or subject, with where it is (checked on the preview thread). */
export type { TemplateProblem };

/** The outcome of checking a template without saving it. */
export interface TemplateValidation {
  valid: boolean;
  problems: TemplateProblem[];
}

/** A new template. */
export interface TemplateCreateInput {
  ref: string;
  format: TemplateFormat;
  /** MJML, HTML or text with Liquid, at most 1 MiB (`MAX_TEMPLATE_SOURCE_BYTES`). */
  source: string;
  /** The default subject (Liquid) of requests that give none. */
  subject?: string | null;
}

/** A template's next version: absent `format` and `subject` keep the current ones; `subject: null` removes it. */
export interface TemplateUpdateInput {
  format?: TemplateFormat;
  source: string;
  subject?: string | null;
}

/** What to check with `templates.validate`: absent fields are the stored template's. */
export interface TemplateCheckInput {
  format?: TemplateFormat;
  source?: string;
  subject?: string | null;
}

/** A project's templates. */
export interface MailroomTemplates {
  /** The templates, by ref. */
  list(auth: string | AuthContext, page?: PageRequest): Promise<Page<TemplateView>>;
  /** One template, its current version; `NOT_FOUND` otherwise. */
  get(auth: string | AuthContext, ref: string): Promise<TemplateView>;
  /**
   * Create a template (version 1). MJML is compiled now; a problem in the source or subject is refused
   * with `VALIDATION_FAILED` naming the field and the line, and nothing is written. `CONFLICT` if the ref
   * exists.
   */
  create(auth: string | AuthContext, input: TemplateCreateInput): Promise<TemplateView>;
  /**
   * Write the template's next version, checked like `create`. Mailings already accepted keep the content
   * of the version they were accepted with (their content is a snapshot); new ones use this version.
   * Concurrent updates each make their own version, in some order. `NOT_FOUND` if the ref does not exist.
   */
  update(auth: string | AuthContext, ref: string, input: TemplateUpdateInput): Promise<TemplateView>;
  /** Remove a template; mailings already accepted are unaffected. `NOT_FOUND` if it does not exist. */
  remove(auth: string | AuthContext, ref: string): Promise<void>;
  /** Check a source and subject as `create` and `update` would, without saving: every problem with its line. */
  validate(auth: string | AuthContext, ref: string, input?: TemplateCheckInput): Promise<TemplateValidation>;
  /**
   * Render the stored template for the given variables and recipient: subject, HTML and text, as a
   * recipient would get them (without tracking). `RENDER_FAILED` for a missing strict variable.
   */
  preview(auth: string | AuthContext, ref: string, sample?: TemplateSample): Promise<RenderedContent>;
}

/** A sender identity as the API shows it (never a DKIM private key). */
export interface SenderView {
  address: string;
  name: string | null;
  /** The selector of the identity's own DKIM key, if it has one (else mail is signed with its domain's). */
  dkimSelector: string | null;
  createdAt: Date;
}

/** A project's sender identities. */
export interface MailroomSenders {
  /** The identities, by address. */
  list(auth: string | AuthContext, page?: PageRequest): Promise<Page<SenderView>>;
  /** Add an identity; `CONFLICT` if the address is one already. */
  add(auth: string | AuthContext, input: { address: string; name?: string | null }): Promise<SenderView>;
  /**
   * Remove an identity: requests from it are refused from now on (`SENDER_NOT_ALLOWED`); mail already
   * accepted still goes out. `NOT_FOUND` if it is not an identity of the project.
   */
  remove(auth: string | AuthContext, address: string): Promise<void>;
}

/** A suppressed address of the project. */
export interface SuppressionView {
  address: string;
  reason: SuppressionReason;
  detail: string | null;
  /** When it was suppressed. */
  createdAt: Date;
}

/** A page request over suppressions, with a search. */
export interface SuppressionQuery extends PageRequest {
  /**
   * Only addresses containing this text. Its domain part (after an `@`) is compared lower-cased, as
   * addresses are stored; the local part exactly.
   */
  q?: string;
}

/** A project's suppression list. */
export interface MailroomSuppressions {
  /** The suppressions, by address, with reason and date; `q` searches. */
  list(auth: string | AuthContext, query?: SuppressionQuery): Promise<Page<SuppressionView>>;
  /** Suppress an address (replacing an existing suppression's reason and date). */
  add(
    auth: string | AuthContext,
    input: { address: string; reason?: SuppressionReason; detail?: string | null },
  ): Promise<SuppressionView>;
  /** Lift a suppression: the address may be mailed again. `NOT_FOUND` if it is not suppressed. */
  lift(auth: string | AuthContext, address: string): Promise<void>;
}
