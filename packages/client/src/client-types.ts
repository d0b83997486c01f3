import type { RequestBodyOption } from 'openapi-fetch';
import type { components, operations } from './openapi-types.js';

/** The schemas of the OpenAPI document (`Domain`, `WebhookEndpoint`, `SendRequest`, ...). */
export type Schemas = components['schemas'];

/** The id of an operation of the document (`sendMail`, `listWebhooks`, ...). */
export type OperationId = keyof operations;

/** The JSON body an operation takes, as openapi-fetch sends it. */
export type OperationBody<Id extends OperationId> = NonNullable<RequestBodyOption<operations[Id]>['body']>;

/** The query parameters an operation takes. */
export type OperationQuery<Id extends OperationId> = operations[Id] extends {
  parameters: { query?: infer Query };
}
  ? NonNullable<Query>
  : never;

/** The `data` of an operation's success envelope (`{ message, statusCode: 200, data }`). */
export type OperationResult<Id extends OperationId> = operations[Id] extends {
  responses: { 200: { content: { 'application/json': { data: infer Data } } } };
}
  ? Data
  : never;

/** Per-call settings. */
export interface CallOptions {
  /** `Idempotency-Key`: makes a send safe to retry (kept 24 hours per project). */
  idempotencyKey?: string;
  /** `X-Request-ID`: echoed back, and in the server's logs. */
  requestId?: string;
  /** Aborts the call. */
  signal?: AbortSignal;
}
