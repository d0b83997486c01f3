/** The events of topics and consent (part of `MailroomEvents`). */
export interface ConsentEvents {
  /**
   * A contact's topic states changed (the API, a one-click from a topic broadcast, an erasure): the
   * topics whose state changed, each with its state after (`null`: back to the topic's default).
   */
  topicsChanged: (event: {
    projectId: string;
    address: string;
    topics: Array<{ key: string; state: 'subscribed' | 'unsubscribed' | 'pending' | null }>;
    source: string;
  }) => void;
}
