import type { AuthContext } from '../context/auth-context.js';
import type { ReceivingDestination } from '../store/receiving-store.js';

/** An address as a parsed header names it. */
export interface InboundAddress {
  address: string;
  name: string;
}

/** One attachment's metadata; its bytes are kept with the raw message and served at `url`. */
export interface InboundAttachment {
  filename: string | null;
  content_type: string;
  size: number;
  /** The `Content-ID` (without angle brackets), for an inline part; null otherwise. */
  content_id: string | null;
  /**
   * A signed, expiring URL that downloads the attachment's bytes (no key needed; an edited or expired
   * one answers 404); null when the engine has no `receiving.baseUrl`.
   */
  url: string | null;
  /** When `url` stops working (ISO 8601); null with `url`. */
  url_expires_at: string | null;
}

/** The verdicts of the sender's authentication, by mailauth, on the connecting IP and envelope. */
export interface InboundAuthResults {
  /** SPF of the envelope sender for the connecting IP (`pass`, `fail`, `softfail`, `neutral`, `none`, ...). */
  spf: string;
  /** The best DKIM signature's result (`pass` when one aligned or not passes, `fail`, `none`, ...). */
  dkim: string;
  /** DMARC of the header From's domain (`pass`, `fail`, `none`, ...). */
  dmarc: string;
  /** ARC chain validation (`pass`, `fail`, `none`). */
  arc: string;
  /** The `Authentication-Results` header mailauth wrote, for the app to keep or forward. */
  header: string;
}

/** The delivery a received message answers (matched by its reply address, In-Reply-To or References). */
export interface InboundReplyLink {
  /** The delivery (one recipient of the mailing). */
  delivery_id: string;
  /** Its Message-ID, as sent. */
  message_id: string;
  /** The contact it was sent to. */
  address: string;
  /** The single message or broadcast. */
  mailing: { ref: string; kind: 'message' | 'broadcast' };
  /** How it was matched: the per-delivery reply address, or the In-Reply-To/References headers. */
  matched_by: 'reply_address' | 'headers';
}

/** A spam verdict, as the app's `spamVerdict` hook returns it. */
export interface SpamVerdict {
  /** Whether the app judged it spam. */
  spam: boolean;
  /** A score, on the app's scale. */
  score?: number;
  /** Why, in the app's words. */
  reason?: string;
}

/**
 * A received message as the `onInbound` handler, the `email.received` webhook and the API see it (snake
 * case, as every webhook payload).
 */
export interface InboundMail {
  /** `inm_...` */
  id: string;
  project_id: string;
  route_id: string;
  received_at: string;
  envelope: { from: string; to: string[]; remote_address: string };
  from: InboundAddress | null;
  to: InboundAddress[];
  cc: InboundAddress[];
  reply_to: InboundAddress[];
  subject: string | null;
  /** The `Date` header, ISO 8601; null when absent or unreadable. */
  date: string | null;
  message_id: string | null;
  in_reply_to: string | null;
  references: string[];
  text: string | null;
  html: string | null;
  /** The new text above the quoted part (Gmail, Outlook, Apple Mail, Thunderbird quoting). */
  stripped_text: string | null;
  /** Every header line, in order, as `[name, value]` (names lower-cased). */
  headers: Array<[string, string]>;
  attachments: InboundAttachment[];
  auth: InboundAuthResults;
  /** The app's verdict from `spamVerdict`; null without the hook. */
  spam: SpamVerdict | null;
  /** The delivery this message answers (then `email.replied` is emitted too); null otherwise. */
  replied_to: InboundReplyLink | null;
}

/** What a route takes, as given to `receiving.addRoute`. */
export interface ReceivingRouteInput {
  /** The receiving domain (its MX points at the listener). */
  domain: string;
  /** A local part (`support`), a prefix with a wildcard (`reply+*`) or `*` (catch-all). */
  pattern: string;
  destination: ReceivingDestination;
}

/** A route as shown. */
export interface ReceivingRouteView {
  id: string;
  domain: string;
  pattern: string;
  destination: ReceivingDestination;
  created_at: string;
}

/** A project's receiving settings as shown; null: the engine's default (`defaults`). */
export interface ReceivingSettingsView {
  /** Days received mail is kept. */
  retention_days: number | null;
  /** Largest message the project's routes take (552 past it). */
  max_message_bytes: number | null;
  /** Per-delivery reply addresses `reply+<delivery id>@<reply_domain>`; null: off. */
  reply_domain: string | null;
  /** What applies where a field is null (`retention_days` null: kept). */
  defaults: { retention_days: number | null; max_message_bytes: number };
  updated_at: string | null;
}

/** A change of a project's receiving settings: absent fields are kept, null ones go back to the default. */
export interface ReceivingSettingsInput {
  retention_days?: number | null;
  max_message_bytes?: number | null;
  reply_domain?: string | null;
}

/** An attachment's bytes, as its URL serves them. */
export interface InboundAttachmentContent {
  filename: string | null;
  content_type: string;
  content: Uint8Array;
}

/** The envelope of a received message, as the listener knows it. */
export interface ReceivingEnvelope {
  envelopeFrom: string;
  envelopeTo: readonly string[];
  remoteAddress: string;
  /** The client's EHLO name, for SPF's HELO check. */
  helo?: string;
}

/** What became of a received message: one entry per route that took it. */
export interface ReceivingReceipt {
  /** The stored messages' ids, one per (project, route). */
  messageIds: string[];
}

/** `mailroom.receiving`: routes per project, the listener's questions, and the messages taken. */
export interface MailroomReceiving {
  /** Add a route for the caller's project (`CONFLICT` when the address pattern is taken). */
  addRoute(auth: string | AuthContext, input: ReceivingRouteInput): Promise<ReceivingRouteView>;
  /** The project's routes. */
  listRoutes(auth: string | AuthContext): Promise<ReceivingRouteView[]>;
  /** Remove a route (`NOT_FOUND` when the project has none by that id). */
  removeRoute(auth: string | AuthContext, id: string): Promise<void>;
  /** The project's received messages, newest first. */
  listMessages(
    auth: string | AuthContext,
    page?: { before?: string; limit?: number },
  ): Promise<{ items: InboundMail[]; next: string | null }>;
  /** One received message (`NOT_FOUND` otherwise). */
  getMessage(auth: string | AuthContext, id: string): Promise<InboundMail>;
  /** The project's receiving settings (retention, size cap, reply addresses). */
  getSettings(auth: string | AuthContext): Promise<ReceivingSettingsView>;
  /** Change the project's receiving settings; a reply domain needs a route taking `reply+*@` it. */
  updateSettings(auth: string | AuthContext, input: ReceivingSettingsInput): Promise<ReceivingSettingsView>;
  /**
   * The bytes of the attachment an attachment URL's token names (no key: the token is signed).
   * `NOT_FOUND` when the token is edited or expired, or the message is gone (retention, erasure).
   */
  attachment(token: string): Promise<InboundAttachmentContent>;
  /** The largest message the engine takes (the listener's default `maxBytes`). */
  readonly maxMessageBytes: number;
  /** The listener's RCPT question: whether a route takes this address. */
  routes(address: string): Promise<boolean>;
  /**
   * Starts the threads that read received messages (`receiving.parseThreads`) now: the listener calls it
   * when it starts. Until one has loaded, messages are read on the main thread. Resolves once they have
   * loaded; rejects when one cannot start (after three such starts, every message is read on the main thread).
   */
  warm(): Promise<void>;
  /**
   * Takes one message for its routed recipients: parsed, judged, stored and handed to each route's
   * destination (the store and the outbox in one transaction). Rejects with `PAYLOAD_TOO_LARGE` past a
   * routed project's size cap (the listener answers 552), else when it cannot be stored (the listener
   * answers 451 and the client tries again).
   */
  receive(raw: Uint8Array, envelope: ReceivingEnvelope): Promise<ReceivingReceipt>;
}

/** The facade of receiving (part of `Mailroom`). */
export interface ReceivingFacade {
  /** Receiving mail for the app: routes and the messages they took (docs/inbound-routes.md). */
  readonly receiving: MailroomReceiving;
}
