/** The events of one-click unsubscribe (part of `MailroomEvents`). */
export interface UnsubscribeEvents {
  /** An address unsubscribed through a one-click link (not on repeats of the same click). */
  unsubscribe: (event: {
    projectId: string;
    address: string;
    broadcastRef: string;
    /** The topic left, when the link unsubscribed from a topic only; absent for everything. */
    topic?: string;
  }) => void;
}
