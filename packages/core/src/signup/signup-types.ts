import type { AuthContext } from '../context/auth-context.js';

/** Options of public signups and double opt-in (`createMailroom({ signup })`). */
export interface SignupOptions {
  /**
   * Where the HTTP adapter is reachable from the contacts' browsers, mount point included: confirmation
   * links are `<baseUrl>/confirm/<token>`. A function is read each time a link is made.
   * @default the `unsubscribe` option's baseUrl
   */
  baseUrl?: string | (() => string);
  /**
   * The HMAC key of the confirmation links (at least 16 characters).
   * @default a random secret generated once and kept in the store, shared by every process on it
   */
  secret?: string;
  /** How long a confirmation link works. @default 7 days */
  confirmTtlMs?: number;
  /** A second signup of a pending address re-sends the confirmation at most this often. @default 10 minutes */
  resendIntervalMs?: number;
}

/** What signups add to `MailroomOptions`. */
export interface SignupEngineOptions {
  /** Public signup forms and double opt-in (docs/signup-forms.md). */
  signup?: SignupOptions;
}

/** A signup form as the API shows it. */
export interface FormView {
  /** `frm_...`: the public endpoint is `POST /subscribe/<ref>`. */
  ref: string;
  name: string;
  /** The audience group a signup joins (when confirmed, under double opt-in). */
  group: string | null;
  /** The topic a signup subscribes to (`pending` until confirmed when the topic has `doubleOptIn`). */
  topic: string | null;
  /** Origins a browser may post from (CORS). */
  allowedOrigins: string[];
  /** The consent text shown now, and its version. */
  consentText: string;
  consentVersion: number;
  /** Every version of the consent text, oldest first. */
  consentTexts: Array<{ version: number; text: string; createdAt: Date }>;
  /** The confirmation message's sender. */
  sender: string;
  /** The confirmation message's template (`{{ confirm_url }}` in it), or null for the built-in one. */
  confirmTemplate: string | null;
  createdAt: Date;
  updatedAt: Date;
}

/** A new form: at least one of `group` and `topic`. */
export interface FormInput {
  name: string;
  group?: string | null;
  topic?: string | null;
  allowedOrigins?: string[];
  /** The wording shown next to the form (version 1). */
  consentText: string;
  /** A sender of the project. */
  sender: string;
  confirmTemplate?: string | null;
}

/** The fields of a form to change; a changed `consentText` becomes its next version. */
export type FormPatch = Partial<FormInput>;

/** Who made a signup or a confirmation over HTTP, kept in the consent record. */
export interface SignupMeta {
  ip?: string | null;
  userAgent?: string | null;
}

/** `mailroom.forms`: a project's signup forms. Every call is scoped to the caller's project. */
export interface MailroomForms {
  list(auth: string | AuthContext): Promise<FormView[]>;
  /** `NOT_FOUND` for an unknown group, topic, sender or template; `VALIDATION_FAILED` for a bad field. */
  create(auth: string | AuthContext, input: FormInput): Promise<FormView>;
  /** `NOT_FOUND` for an unknown ref (another project's included). */
  get(auth: string | AuthContext, ref: string): Promise<FormView>;
  update(auth: string | AuthContext, ref: string, patch: FormPatch): Promise<FormView>;
  /** Removes the form (its signups and the consent history stay). */
  remove(auth: string | AuthContext, ref: string): Promise<void>;
}

/** What a confirmation link stands for, as its page shows it. Names are the project's text: escape them. */
export interface ConfirmationTarget {
  projectName: string;
  /** The normalized address (the page shows it masked). */
  address: string;
  /** The topic's and the group's names (the group's ref when it has no name). */
  topicName: string | null;
  groupName: string | null;
  /** `pending`: the button confirms; `confirmed`: done already; `expired`: a new link may be sent. */
  state: 'pending' | 'confirmed' | 'expired';
  /** The project's accent colour (`#rrggbb`), or null: the pages look like its preference centre. */
  color: string | null;
  /** The project's logo (a `data:image/...` URI), or null. */
  logo: string | null;
  /** The contact's `locale` trait (`de`, `fr-CH`), or null: picks the page's language, as on the preference page. */
  locale: string | null;
}

/** How a form's project looks on the signup pages: its name, colour and logo (as the preference centre). */
export interface SignupBrand {
  /** The project's name: its text, escape it. */
  projectName: string;
  /** `#rrggbb`, or null for the pages' default. */
  color: string | null;
  /** A `data:image/...` URI, or null. */
  logo: string | null;
}

/**
 * `mailroom.signups`: the public side of signup forms. No project secret: the form's ref is the only name,
 * and the answers never tell whether an address was known (no enumeration).
 */
export interface MailroomSignups {
  /** The origins a form accepts browser posts from (CORS); `NOT_FOUND` for an unknown form. */
  allowedOrigins(formRef: string): Promise<string[]>;
  /** The brand of the form's project, for the thanks page (the same for every address); `NOT_FOUND` for an unknown form. */
  brand(formRef: string): Promise<SignupBrand>;
  /**
   * A signup through a form: `{ email, name?, consent_version?, website? }` (`website` is the honeypot: a
   * person leaves it empty; a filled one is dropped silently). Resolves the same way for every address,
   * known or not. Under the topic's double opt-in the contact is `pending` and mailed a confirmation
   * link (again at most once per `resendIntervalMs`); else subscribed at once. `NOT_FOUND` for an unknown
   * form, `VALIDATION_FAILED` for a bad address. Resolves once the signup is checked: the writes and the
   * confirmation message follow (`settled`), so the time of the answer does not tell a known address from
   * a new one either; a failure then is logged.
   */
  submit(formRef: string, body: unknown, meta?: SignupMeta): Promise<void>;
  /** Resolves when every signup answered so far is written (and its confirmation accepted). */
  settled(): Promise<void>;
  /** What a confirmation link stands for, changing nothing (a GET). `NOT_FOUND` for a forged or foreign token. */
  resolve(token: string): Promise<ConfirmationTarget>;
  /** Confirms (the page's POST); idempotent. An expired link confirms nothing (state `expired`). */
  confirm(token: string, meta?: SignupMeta): Promise<ConfirmationTarget>;
  /** Sends a new link for an expired or pending one (at most once per `resendIntervalMs`). */
  resend(token: string): Promise<ConfirmationTarget>;
}

/** What signups add to the engine (`Mailroom` extends it). */
export interface SignupFacade {
  /** A project's signup forms (management). */
  forms: MailroomForms;
  /** Public signups and their confirmation links. */
  signups: MailroomSignups;
}
