import type { MailingProgress, SourcePageEvent } from '../admin/engine-views.js';
import type { InboundEffect, InboundMessageEvent } from '../inbound/inbound-types.js';
import type { DeliveryStatus, InboundSignalSource, MailingRecord } from '../store/records.js';

/** Events the engine emits. */
export interface MailroomEvents {
  /** A delivery reached an outcome (sent, retry scheduled, failed, suppressed, skipped). */
  delivery: (event: {
    projectId: string;
    mailingRef: string;
    kind: MailingRecord['kind'];
    address: string;
    status: DeliveryStatus;
    attempts: number;
    response: string | null;
    error: string | null;
    /**
     * How long the transport took to accept or refuse the message, in milliseconds; null when nothing
     * was handed to it (suppressed, skipped, a render failure, a send handed back at shutdown).
     */
    latencyMs: number | null;
    /**
     * The transport that sent it, when its receipt named one (`routeTransport` names the route's
     * transport or its fallback, the SES transport names itself); null otherwise.
     */
    transport: string | null;
  }) => void;
  /**
   * A mailing's counts, at most once per `progressIntervalMs` per mailing while this process's worker
   * records its outcomes, and once more after it completes (so the last event has the final counts).
   */
  'broadcast:progress': (event: MailingProgress) => void;
  /** This process's worker expanded and committed one page of a source (audience group, CSV file). */
  'source:page': (event: SourcePageEvent) => void;
  /** A mailing became completed. */
  'broadcast:completed': (event: { projectId: string; ref: string; kind: MailingRecord['kind'] }) => void;
  /** One POST of a webhook message ended (metrics). */
  'webhook:attempt': (event: {
    projectId: string;
    endpointId: string;
    type: string;
    /** `retry`: it failed and will be sent again; `failed`: it failed for the last time. */
    outcome: 'delivered' | 'retry' | 'failed';
    statusCode: number | null;
    latencyMs: number;
  }) => void;
  /**
   * A tracking hit was recorded (written behind the answer, in batches): the first open of a delivery by
   * a person or a machine (`email.opened`), or a click (`email.clicked`, with its URL).
   */
  tracking: (event: {
    type: 'email.opened' | 'email.clicked';
    projectId: string;
    mailingRef: string;
    deliveryId: string;
    url: string | null;
    /** Judged to come from a mail-privacy proxy or a link scanner. */
    machine: boolean;
    at: Date;
  }) => void;
  /** An address unsubscribed through a one-click link (not on repeats of the same click). */
  unsubscribe: (event: { projectId: string; address: string; broadcastRef: string }) => void;
  /** An inbound bounce, complaint or delivery report was applied to a delivery (not on repeats). */
  inbound: (event: InboundEffect & { source: InboundSignalSource }) => void;
  /**
   * An inbound message or provider notification was taken (applied, a repeat, ignored, or deferred), or
   * refused by the listener before it was read: what became of it and why (metrics).
   */
  'inbound:message': (event: InboundMessageEvent) => void;
}
