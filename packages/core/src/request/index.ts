/**
 * Request validation and normalization: the zod schemas of the request bodies, the parsers that turn
 * any accepted client shape into the normalized requests of request-types.ts, and the address checks.
 */

export type { AddressCheck } from './address.js';
export {
  checkAddress,
  checkMailbox,
  MAX_ADDRESS_LENGTH,
  MAX_DISPLAY_NAME_LENGTH,
  MAX_LOCAL_PART_LENGTH,
  normalizeAddress,
  parseAddress,
} from './address.js';
export { CONTENT_TYPES, contentTypeFor, DEFAULT_CONTENT_TYPE } from './attachments.js';
export type { BatchItemProblem, BatchItemRequest, BatchMode, ParsedSendBatch } from './batch-send-parse.js';
export { parseSendBatchRequest } from './batch-send-parse.js';
export type { SendBatchItemBody, SendBatchRequestBody } from './batch-send-schema.js';
export {
  MAX_BATCH_HEADERS,
  MAX_BATCH_ITEMS,
  MAX_BATCH_TAGS,
  sendBatchItemSchema,
  sendBatchRequestSchema,
} from './batch-send-schema.js';
export type { VariablesBudget } from './copy-variables.js';
export type { FieldLimit, FieldLimitName } from './field-limits.js';
export {
  FIELD_LIMITS,
  MAX_MAILBOX_LENGTH,
  PROFILE_TRAITS_BUDGET,
  RECIPIENT_VARIABLES_BUDGET,
  REQUEST_BODY_LIMITS,
  TEMPLATE_VARIABLES_BUDGET,
} from './field-limits.js';
export { toValidationIssues, validationError } from './issues.js';
export type { BroadcastParseLimits, SendParseLimits } from './parse.js';
export { parseBroadcastRequest, parseSendRequest } from './parse.js';
export type { BatchRequestBody, BroadcastRequestBody, SendRequestBody } from './schemas.js';
export {
  attachmentSchema,
  batchRequestSchema,
  broadcastRequestSchema,
  createBatchRequestSchema,
  createBroadcastRequestSchema,
  createSendRequestSchema,
  DEFAULT_RECIPIENTS_PER_BATCH,
  DEFAULT_RECIPIENTS_PER_MESSAGE,
  invitationSchema,
  recipientSchema,
  senderSchema,
  sendRequestSchema,
  sourceSchema,
  templateSchema,
} from './schemas.js';
