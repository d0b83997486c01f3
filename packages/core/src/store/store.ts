import type { AccountStore } from './account-store.js';
import type { ActivityStore } from './activity-store.js';
import type { AppTransactionStore } from './app-transaction-store.js';
import type { AudienceAdminStore } from './audience-admin-store.js';
import type { AudienceStore } from './audience-store.js';
import type { AutomationStore } from './automation-store.js';
import type { ConsentStore } from './consent-store.js';
import type { DeliveryQueue } from './delivery-queue.js';
import type { DestinationLimitStore } from './destination-limit-store.js';
import type { DomainStore } from './domain-store.js';
import type { EventStore } from './event-store.js';
import type { IdempotencyStore } from './idempotency-store.js';
import type { InboundSignalStore } from './inbound-signal-store.js';
import type { KeyStore } from './key-store.js';
import type { MailingStore } from './mailing-store.js';
import type { PauseStore } from './pause-store.js';
import type { ReceivingStore } from './receiving-store.js';
import type { ResourceStore } from './resource-store.js';
import type { RetentionStore } from './retention-store.js';
import type { SignupStore } from './signup-store.js';
import type { SourceJobStore } from './source-job-store.js';
import type { StoreLifecycle } from './store-lifecycle.js';
import type { TrackingStore } from './tracking-store.js';

export type { AccountStore } from './account-store.js';
export type { ActivityStore, EventRangeQuery, EventSeriesQuery, EventSeriesRow } from './activity-store.js';
export type { AppTransaction, AppTransactionStore, TransactionStore } from './app-transaction-store.js';
export type {
  AudienceAdminStore,
  ErasureCounts,
  ProfileChange,
  ProfileFilter,
} from './audience-admin-store.js';
export type { AudienceStore } from './audience-store.js';
export type {
  AutomationEventRecord,
  ClaimedRun,
  RunAdvance,
  RunCounts,
  RunRecord,
  RunStatus,
  StepCounts,
  StepMove,
  StepMoveKind,
  WorkflowRecord,
  WorkflowStatus,
  WorkflowVersionRecord,
} from './automation-records.js';
export type { AutomationStore, RunClaimOptions, TrackWrite } from './automation-store.js';
export type {
  ConsentChange,
  ConsentRecord,
  ConsentSource,
  ConsentWrite,
  ErasedAddressRecord,
  ProjectBrandRecord,
  TopicDefault,
  TopicRecord,
  TopicState,
  TopicStateChange,
  TopicStateRecord,
  TopicVisibility,
} from './consent-records.js';
export type { ConsentPageOptions, ConsentStore, TopicChange } from './consent-store.js';
export type { ClaimOptions, DeliveryOutcome, DeliveryQueue } from './delivery-queue.js';
export type {
  DestinationLimitStore,
  TokenBucket,
  TokenDecision,
  TokenGrant,
  TokenRequest,
  TokenWindow,
  TokenWindowSpan,
} from './destination-limit-store.js';
export type {
  DkimKeyRecord,
  DkimKeyState,
  DkimKeyTransition,
  DomainCheckWrite,
  DomainRecord,
  DomainState,
  DomainStore,
} from './domain-store.js';
export type { EventStore } from './event-store.js';
export type { IdempotencyStore } from './idempotency-store.js';
export type {
  InboundSignalResult,
  InboundSignalStore,
  InboundSignalWrite,
  SignalCount,
  SignalCountQuery,
} from './inbound-signal-store.js';
export type { KeyStore } from './key-store.js';
export type {
  BatchCommitResult,
  BatchTarget,
  BatchWrite,
  DeliveryCounts,
  MailingStore,
} from './mailing-store.js';
export type { PageOptions } from './paging.js';
export type { PauseRecord, PauseRule, PauseScope, PauseStore } from './pause-store.js';
export type {
  ReceivedMessageRecord,
  ReceivedPageOptions,
  ReceivingDestination,
  ReceivingRouteRecord,
  ReceivingSettingsRecord,
  ReceivingStore,
} from './receiving-store.js';
export type { ResourceStore, SuppressionPageOptions } from './resource-store.js';
export type { RetentionStore } from './retention-store.js';
export type { ConsentTextVersion, FormRecord, SignupRecord } from './signup-records.js';
export type { SignupStore } from './signup-store.js';
export type { SourceJobStore } from './source-job-store.js';
export type { StoreCapabilities, StoreLifecycle } from './store-lifecycle.js';
export type {
  DeliveryTracking,
  TrackingHit,
  TrackingStore,
  TrackingSummary,
} from './tracking-store.js';

/**
 * Persistence for Mailroom: the composition of small role contracts, one file each under `store/`
 * (docs/adapters.md walks through them). A store holds no business logic: each method is a primitive whose
 * behaviour is fully stated in its role, and `storeTestSuite` from `@mailroom/core/testing` checks it, one
 * role at a time if wanted. Engine code asks for the narrowest role it needs.
 *
 * - {@link AccountStore}: projects, secrets, senders, templates, installation settings.
 * - {@link AudienceStore}: groups, profiles, suppressions.
 * - {@link AudienceAdminStore}: listing and editing profiles, removing groups, erasing an address.
 * - {@link MailingStore}: mailings, batches, status, rescheduling, reads of a mailing's deliveries.
 * - {@link DeliveryQueue}: claim, renew, complete, settle, next due time (the worker's hot path).
 * - {@link SourceJobStore}: the jobs that expand a broadcast's source into deliveries.
 * - {@link IdempotencyStore}: idempotency keys.
 * - {@link RetentionStore}: the sweeps of expired keys and old content.
 * - {@link InboundSignalStore}: bounces, complaints and delivery reports applied to deliveries.
 * - {@link EventStore}: the event outbox, webhook endpoints and the webhook queue.
 * - {@link TrackingStore}: link maps and open and click hits.
 * - {@link ActivityStore}: the event outbox counted over time, for charts.
 * - {@link DomainStore}: sending domains, their DKIM keys and DNS checks.
 * - {@link DestinationLimitStore}: send limits per destination, shared by every worker (token windows).
 * - {@link PauseStore}: pauses of broadcasts, projects' sending and destinations.
 * - {@link KeyStore}: a project's API keys: list, revoke, rotate, last use.
 * - {@link ResourceStore}: the management API's pages and removals of senders, templates, suppressions.
 * - {@link ConsentStore}: topics, each contact's state per topic, the consent history.
 * - {@link AutomationStore}: workflows and their versions, tracked events, runs claimed with leases.
 * - {@link SignupStore}: public signup forms and each address's signup (double opt-in).
 * - {@link ReceivingStore}: receiving routes and the messages they took.
 * - {@link AppTransactionStore} (optional): writing an accepted request in the app's own transaction.
 *
 * Rules for every method:
 * - Records go in and come out as the types in `records.ts`; dates as `Date`, JSON fields as values.
 * - A method that takes `now` sets the `updatedAt` of the rows it changes to `now`.
 * - Strings compare and sort by their bytes (binary collation): "by address" and "by ref" mean byte order,
 *   and `A@x.test` and `a@x.test` are different addresses (the core lower-cases only the domain).
 * - Lookups scoped by `projectId` never return another project's rows.
 * - A unique-key violation is reported as a `MailroomError` with code `CONFLICT`.
 * - Any other failure of the backend is a `MailroomError` with code `STORE_FAILED` and the original as `cause`.
 */
export interface Store
  extends StoreLifecycle,
    AccountStore,
    AudienceStore,
    AudienceAdminStore,
    MailingStore,
    DeliveryQueue,
    SourceJobStore,
    IdempotencyStore,
    RetentionStore,
    InboundSignalStore,
    EventStore,
    TrackingStore,
    DomainStore,
    DestinationLimitStore,
    PauseStore,
    KeyStore,
    ResourceStore,
    ActivityStore,
    ConsentStore,
    AutomationStore,
    SignupStore,
    ReceivingStore,
    AppTransactionStore {}

/** The names of the roles, as `storeTestSuite`'s `roles` option takes them. */
export type StoreRole =
  | 'AccountStore'
  | 'AudienceStore'
  | 'AudienceAdminStore'
  | 'MailingStore'
  | 'DeliveryQueue'
  | 'SourceJobStore'
  | 'IdempotencyStore'
  | 'RetentionStore'
  | 'InboundSignalStore'
  | 'EventStore'
  | 'TrackingStore'
  | 'DomainStore'
  | 'DestinationLimitStore'
  | 'PauseStore'
  | 'KeyStore'
  | 'ResourceStore'
  | 'ActivityStore'
  | 'ConsentStore'
  | 'AutomationStore'
  | 'SignupStore'
  | 'ReceivingStore';
