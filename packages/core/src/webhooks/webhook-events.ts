/** The events the webhook sender emits (part of `MailroomEvents`). */
export interface WebhookEvents {
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
}
