export type { AutomationMethods } from './automation-methods.js';
export {
  type CallOptions,
  createMailroomClient,
  type MailroomClient,
  type MailroomClientOptions,
  type OperationBody,
  type OperationId,
  type OperationQuery,
  type OperationResult,
  type Schemas,
} from './create-client.js';
export type { FormMethods } from './form-methods.js';
export { type ErrorBody, type ErrorCode, MailroomApiError } from './mailroom-api-error.js';
export type { components, operations, paths } from './openapi-types.js';
export type { PauseMethods } from './pause-methods.js';
export type { ReceivingMethods } from './receiving-methods.js';
export type { TopicMethods } from './topic-methods.js';
