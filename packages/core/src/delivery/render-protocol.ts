import type { ErrorCode } from '../base/errors.js';
import type { MailingRecord, RenderedContent, Variables } from '../store/records.js';
import type { TrackingSetup } from '../tracking/tracking-links.js';
import type { TransportComposer } from '../transport/transport.js';
import type { MailingParts } from './compose-message.js';

/** The recipient fields a render thread needs (not the whole delivery record). */
export interface RenderJobRecipient {
  messageId: string;
  address: string;
  name: string;
  variables: Variables;
  traits: Variables;
}

/** What the worker's main thread tells a render thread. */
export type RenderRequest =
  | {
      type: 'init';
      composer: TransportComposer;
      strictVariables: boolean;
      /** The jobs taken off the thread before it started them: slot `job % length` holds `job`. */
      cancelled: Int32Array;
      /** Where the thread tells which job it is rendering, and since when (`render-running.ts`). */
      running: SharedArrayBuffer;
    }
  /** Sent once per mailing and thread, before its first job. */
  | { type: 'mailing'; mailing: MailingRecord; parts: MailingParts; tracking: TrackingSetup | null }
  | { type: 'forget'; mailingId: string }
  | {
      type: 'build';
      job: number;
      mailingId: string;
      recipient: RenderJobRecipient;
      /** The delivery's id, named by its tracking links. */
      deliveryId: string;
      headers: Record<string, string>;
      /** Epoch milliseconds: the `now` of the message (calendar stamps). */
      now: number;
      /** Return the rendered content too (the mailing keeps it: `storeContent`). */
      keepContent: boolean;
    };

/** A failure inside a render thread, as data (an Error does not cross threads with its fields). */
export interface RenderFailure {
  code: ErrorCode;
  message: string;
  retryable: boolean;
}

/**
 * A render thread's answer to one `build`. `renderMs`: how long the Liquid render took on the thread (0 when
 * it did not run), charged to the project's render budget when it is long (`render-guard.ts`).
 */
export type RenderReply =
  | { job: number; raw: Uint8Array; content: RenderedContent | null; renderMs: number }
  | { job: number; error: RenderFailure; stage: 'render' | 'compose'; renderMs: number };
