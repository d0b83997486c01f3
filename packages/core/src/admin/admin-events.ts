import type { MailingProgress } from './engine-views.js';

/** The events of the read side (part of `MailroomEvents`). */
export interface ProgressEvents {
  /**
   * A mailing's counts, at most once per `progressIntervalMs` per mailing while this process's worker
   * records its outcomes, and once more after it completes (so the last event has the final counts).
   */
  'broadcast:progress': (event: MailingProgress) => void;
}
