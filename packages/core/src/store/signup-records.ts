/**
 * The records of public signups (issue 38): a project's signup forms (what a website's form subscribes
 * to, from which origins, with which consent wording) and each address's signup through a form (pending
 * until confirmed under double opt-in). Like `records.ts`, a store persists them as they are.
 */

/** One version of a form's consent text: the wording shown next to the form, kept with every record. */
export interface ConsentTextVersion {
  /** 1, 2, ...: a changed text is a new version; old ones are kept. */
  version: number;
  text: string;
  createdAt: Date;
}

/** A signup form of a project. `ref` is unique in the whole store (the public URL names only it). */
export interface FormRecord {
  /** `frm_...`, made by the core: the public `POST /subscribe/<ref>` names it. */
  ref: string;
  projectId: string;
  /** The project's name for it. */
  name: string;
  /** The audience group a signup joins (at confirmation under double opt-in), or null. */
  groupRef: string | null;
  /** The topic a signup subscribes to (`pending` first under the topic's double opt-in), or null. */
  topicKey: string | null;
  /** Origins (`https://www.example.com`) a browser may post from (CORS); empty: no cross-origin post. */
  allowedOrigins: string[];
  /** The consent texts, oldest first; the last is the one shown now. */
  consentTexts: ConsentTextVersion[];
  /** The sender address of the confirmation message (a sender of the project). */
  sender: string;
  /** The template of the confirmation message (`{{ confirm_url }}` in it), or null for the built-in one. */
  confirmTemplateRef: string | null;
  createdAt: Date;
  updatedAt: Date;
}

/** An address's signup through a form. Unique per (projectId, formRef, address). */
export interface SignupRecord {
  /** `sgn_...`: the confirmation link names it. */
  id: string;
  projectId: string;
  formRef: string;
  /** The normalized address. */
  address: string;
  /** The consent text version shown when the contact signed up. */
  consentVersion: number;
  status: 'pending' | 'confirmed';
  createdAt: Date;
  /** When the last confirmation message was sent (at most one per resend interval), or null. */
  sentAt: Date | null;
  confirmedAt: Date | null;
}
