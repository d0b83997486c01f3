/** The events of receiving (part of `MailroomEvents`). */
export interface ReceivingEvents {
  /** A route took a message (stored; its webhook message, if any, written in the same transaction). */
  emailReceived: (event: {
    projectId: string;
    messageId: string;
    routeId: string;
    from: string | null;
  }) => void;
  /** A received message answers a delivery Mailroom sent (`email.replied` is written with it). */
  emailReplied: (event: {
    projectId: string;
    messageId: string;
    deliveryId: string;
    mailingRef: string;
    address: string;
  }) => void;
}
