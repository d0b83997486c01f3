export {
  ACTIVITY_SERIES,
  type ActivityChart,
  type ActivityQuery,
  type ActivitySeriesName,
  bucketFor,
  chartOf,
  destinationDomains,
  type GuardLine,
  type PauseBand,
} from './admin/activity-series.js';
// For store adapters: the one profile-merge rule every store applies.

// For store adapters: what erasing an address does to JSON kept with events and webhook messages.
export { scrubAddress, scrubText } from './audience/erasure.js';
export type { MergedProfile, ProfileFields, ProfileMergeOptions } from './audience/profile-merge.js';
export { distinctLabels, mergeProfile, newProfile, PROFILE_TRAITS_CAP } from './audience/profile-merge.js';
export type { AutomationEvents } from './automations/automation-events.js';
export type * from './automations/automation-types.js';
export { trackRequestSchema } from './automations/track-event.js';
export { type WorkflowBuilder, workflow } from './automations/workflow-builder.js';
export {
  branches as stepBranches,
  type ConditionInput,
  durationMs,
  MAX_STEPS,
  MAX_WAIT_MS,
  parseWorkflow,
  type Step as WorkflowStep,
  type StepInput,
  type WorkflowDefinition,
  type WorkflowInput,
  workflowSchema,
} from './automations/workflow-schema.js';
export { hashedAddress } from './base/address-hash.js';
export { foldAddress } from './base/address-parts.js';
export * from './base/clock.js';
export * from './base/errors.js';
export { silentLogger } from './base/logger.js';
export { generateSecret, hashSecret } from './base/secrets.js';
export type { StoreHealth } from './context/store-health.js';
export {
  createDestinationResolver,
  DEFAULT_DESTINATION_GROUPS,
  DEFAULT_DESTINATION_MX_HOSTS,
  type DestinationLimits,
  type DestinationMxOptions,
  type DestinationOptions,
  type DestinationResolver,
} from './delivery/destinations.js';
export { resolveRenderThreads, WORKER_DEFAULTS } from './delivery/worker-options.js';
// Sender domains: the CI preflight (`checkDomain`) and the parts an application may want on its own.
export type { DkimExpectation } from './domains/check-dkim.js';
export { type DkimAlgorithm, type DkimKeyPair, generateDkimKey } from './domains/dkim-key.js';
export { createDnsResolver, type DnsResolver, type DnsResolverOptions } from './domains/dns-lookup.js';
export {
  checkDomain,
  type DomainCheck,
  type DomainCheckOptions,
  type DomainCheckState,
} from './domains/domain-check.js';
export type { DomainFinding, FindingKind, FindingState } from './domains/domain-finding.js';
export { normalizeDomain } from './domains/domain-name.js';
export {
  type DnsRecordToPublish,
  type DomainRecordKind,
  type DomainRecordsInput,
  domainRecords,
  type ReturnPathPlan,
  type SpfRelay,
} from './domains/domain-records.js';
export {
  type WarmupDay,
  type WarmupOptions,
  type WarmupSchedule,
  warmupDay,
} from './domains/warmup-schedule.js';
export { createMailroom } from './engine/create-mailroom.js';
export type * from './engine/mailroom-types.js';
export * from './fetch/index.js';
export type { BounceCountOptions, DomainBounces } from './inbound/bounce-counts.js';
export type { BounceEffect, BounceReason, ReasonGroup, ReasonInfo } from './inbound/bounce-reasons.js';
export {
  BOUNCE_REASONS,
  bounceEffect,
  isBounceReason,
  REASON_NAMES,
  reasonGroup,
} from './inbound/bounce-reasons.js';
export type { ReasonInput, ReasonVerdict } from './inbound/classify-reason.js';
export { classifyReason, classifyRecipient, classifyReport } from './inbound/classify-reason.js';
export { MAX_INBOUND_BYTES } from './inbound/inbound-receiver.js';
export type * from './inbound/inbound-report.js';
export type * from './inbound/inbound-types.js';
export type { MailboxUnavailableOptions } from './inbound/mailbox-unavailable.js';
export { RECIPIENT_SIDE_SOFT_REASONS } from './inbound/mailbox-unavailable.js';
export { parseInboundMessage } from './inbound/parse-inbound.js';
export type { NotificationOptions } from './inbound/provider-notifications.js';
export { SNS_CERTIFICATE_URL, stringToSign as snsStringToSign } from './inbound/sns-message.js';
export { VERP_PREFIX, verpTokenOf } from './inbound/verp-token.js';
export * from './keys/key-scope.js';
export * from './mime/index.js';
export type {
  BroadcastGuardRules,
  DestinationGuardRules,
  GuardOptions,
  ProjectGuardRules,
  ReputationGuardOptions,
} from './pauses/guard-options.js';
export type { PauseView } from './pauses/pause-control.js';
export { MAX_PAUSE_MINUTES, MAX_PAUSE_REASON, type PauseOptions } from './pauses/pause-options.js';
export type { ParsedReceived } from './receiving/parse-received.js';
export type { ReceivingEvents } from './receiving/receiving-events.js';
export type { ReceivingEngineOptions, ReceivingOptions } from './receiving/receiving-options.js';
export type * from './receiving/receiving-types.js';
export { matchRoute, ROUTE_PATTERN, splitAddress } from './receiving/route-match.js';
export * from './render/index.js';
export * from './request/index.js';
export type * from './request/request-types.js';
export {
  MAX_TEMPLATE_SOURCE_BYTES,
  senderAddSchema,
  suppressionAddSchema,
  templateCheckSchema,
  templateCreateSchema,
  templatePreviewSchema,
  templateUpdateSchema,
} from './resources/resource-schemas.js';
export type { AudienceSourceConfig } from './sources/audience-source.js';
export type { CsvSourceConfig } from './sources/csv-probe.js';
export type { CsvCheckpoint, CsvExpanderOptions } from './sources/csv-source.js';
export { ERASED_ADDRESS, erasedDeliveryAddress, isAudienceImport } from './store/audience-admin-store.js';
export { SENDER_BLOCK_HELD, SENDER_BLOCK_RESUMED } from './store/delivery-queue.js';
export { decideTokens, tokenRetryAt, tokenWindowSpan } from './store/destination-limit-store.js';
export * from './store/event-records.js';
export * from './store/records.js';
export type * from './store/store.js';
export * from './transport/message-transport.js';
export * from './transport/route-transport.js';
export type * from './transport/transport.js';
export { receiptResponse, sentVia } from './transport/transport.js';
