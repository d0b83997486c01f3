import type {
  DeliveryStatus,
  InboundSignalKind,
  MailingRecord,
  SourceJobStatus,
  SourceKind,
} from '../store/records.js';

/** The payload of the `source:page` event: one page of a source was expanded and committed. */
export interface SourcePageEvent {
  projectId: string;
  /** The mailing's ref; an audience import's id (`imp_...`) for an import, which has no mailing. */
  mailingRef: string;
  kind: SourceKind;
  /** Rows read in this page (delivered to deliveries or refused). */
  rows: number;
  /** Rows of this page refused (bad address, ...). */
  failedRows: number;
  /** The job's status after the page. */
  status: SourceJobStatus;
}

/** The events the delivery loop emits (part of `MailroomEvents`). */
export interface DeliveryEvents {
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
    /**
     * A relay's permanent refusal read as a signal (`sender-side` for a policy block, DMARC, a blocklist;
     * `hard-bounce` for an unknown user...): the kind recorded with the outcome; null otherwise. The
     * reputation guard counts it as the outcome comes.
     */
    refusal?: InboundSignalKind | null;
  }) => void;
  /**
   * This process's worker claimed deliveries of a broadcast (before sending them): what yields to
   * broadcasts (the automations' run worker) knows of one before its first outcome.
   */
  'broadcast:claimed': (event: { count: number }) => void;
  /** This process's worker expanded and committed one page of a source (audience group, CSV file). */
  'source:page': (event: SourcePageEvent) => void;
  /** A mailing became completed. */
  'broadcast:completed': (event: { projectId: string; ref: string; kind: MailingRecord['kind'] }) => void;
}
