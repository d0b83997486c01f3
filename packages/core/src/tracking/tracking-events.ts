/** The events of open and click tracking (part of `MailroomEvents`). */
export interface TrackingEvents {
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
}
