import type {
  AttachmentSpec,
  DeliveryPlan,
  ExistingAction,
  InvitationSpec,
  MailingTrackOptions,
  Variables,
} from '../store/records.js';

/**
 * The requests after validation and normalization: every shape the public clients send
 * (wire-compat.md) has become this one shape. Produced by `parseSendRequest` / `parseBroadcastRequest`.
 */

/** A sender as requested. */
export interface NormalizedSender {
  /** Normalized address (domain lower-cased). */
  address: string;
  /** The display name given, or null (the engine then defaults it). */
  name: string | null;
}

/** One recipient after normalization. Duplicates (same normalized address) are already collapsed. */
export interface NormalizedRecipient {
  /** Normalized address (domain lower-cased). */
  address: string;
  /** The name given, or the part of the address before the at-sign. */
  name: string;
  /** Whether `name` was given in the request (a defaulted name never overwrites a stored one). */
  nameGiven: boolean;
  /** The recipient's own template variables. */
  variables: Variables;
}

/** Template reference with its global variables (`template.id` of older clients becomes `ref`). */
export interface NormalizedTemplate {
  ref: string;
  variables: Variables;
}

/** An audience-group source (defaults applied: `preserve`, `preserve`, false). */
export interface AudienceSourceSpec {
  kind: 'audience';
  ref: string;
  actionOnExistingTrait: ExistingAction;
  actionOnExistingProfile: ExistingAction;
  includeUnsubscribed: boolean;
  /** Only contacts whose state for this topic allows it (issue 38); null: no topic filter. */
  topic: string | null;
}

/** A CSV file source. */
export interface CsvSourceSpec {
  kind: 'csv';
  label: string;
  url: string | null;
  /** CSV heading to trait name; `address` and `name` are the recipient fields. */
  columnMappings: Record<string, string>;
  /** Only rows whose contact's state for this topic allows it; null: no topic filter. */
  topic: string | null;
}

/** A broadcast source. */
export type SourceSpec = AudienceSourceSpec | CsvSourceSpec;

/** Content fields shared by a single send and an initial broadcast batch. */
export interface NormalizedContentRequest {
  /** The subject; `null` only with a template, whose default subject then applies. */
  subject: string | null;
  preheader: string | null;
  sender: NormalizedSender;
  /** Body (plaintext or HTML); exactly one of `message` and `template` is non-null. */
  message: string | null;
  template: NormalizedTemplate | null;
  replyAddress: string | null;
  /** Attachments with content decoded to base64 (data URIs unwrapped) or a URL to fetch. */
  attachments: AttachmentSpec[];
  invitation: InvitationSpec | null;
  /** `options.track` (our extension), when the request gives one. */
  track?: MailingTrackOptions;
}

/** `POST /send/mail` after normalization. */
export interface SendRequest extends NormalizedContentRequest {
  /** 1 to 10 recipients. */
  recipients: NormalizedRecipient[];
  options: { acquiringAudience: string | null; topic: string | null };
}

/** `POST /send/mail/broadcast` without `broadcastRef`: the initial batch. */
export interface BroadcastRequest extends NormalizedContentRequest {
  /** At most 250 recipients; may be empty when `sources` is not. */
  recipients: NormalizedRecipient[];
  sources: SourceSpec[];
  options: {
    acquiringAudience: string | null;
    scheduleFor: Date | null;
    storeContent: boolean | null;
    topic: string | null;
    /** `options.localTime` and `options.window`, or null. */
    plan: DeliveryPlan | null;
  };
}

/** `POST /send/mail/broadcast` with `broadcastRef`: a later batch. */
export interface BatchRequest {
  broadcastRef: string;
  /** At most 250 recipients; may be empty when `sources` is not. */
  recipients: NormalizedRecipient[];
  sources: SourceSpec[];
}

/** A parsed broadcast call: the initial batch or a later one. */
export type ParsedBroadcast =
  | { kind: 'initial'; request: BroadcastRequest }
  | { kind: 'batch'; request: BatchRequest };
