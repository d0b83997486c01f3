import type { InboundSignalSource } from '../store/records.js';
import type { InboundEffect, InboundMessageEvent } from './inbound-types.js';

/** The events of bounces, complaints and provider notifications (part of `MailroomEvents`). */
export interface InboundEvents {
  /** An inbound bounce, complaint or delivery report was applied to a delivery (not on repeats). */
  inbound: (event: InboundEffect & { source: InboundSignalSource }) => void;
  /**
   * An inbound message or provider notification was taken (applied, a repeat, ignored, or deferred), or
   * refused by the listener before it was read: what became of it and why (metrics).
   */
  'inbound:message': (event: InboundMessageEvent) => void;
}
