import type {
  AudienceGroupRecord,
  AutomationEventRecord,
  BatchRecord,
  ConsentRecord,
  DeliveryRecord,
  DomainRecord,
  ErasedAddressRecord,
  FormRecord,
  IdempotencyRecord,
  InboundSignalRecord,
  MailingRecord,
  PauseRecord,
  ProfileRecord,
  ProjectBrandRecord,
  ProjectRecord,
  ProjectSecretRecord,
  ReceivedMessageRecord,
  ReceivingRouteRecord,
  ReceivingSettingsRecord,
  RunRecord,
  SenderRecord,
  SignupRecord,
  SourceJobRecord,
  StepCounts,
  SuppressionRecord,
  TemplateRecord,
  TopicRecord,
  TopicStateRecord,
  TrackingHit,
  WorkflowRecord,
  WorkflowVersionRecord,
} from '@mailroom/core';
import { foldAddress, MailroomError } from '@mailroom/core';
import { type EventState, emptyEventState } from './roles/event-store.js';

/** The store's name, and the `source` of its errors. */
export const DRIVER_NAME = 'memory';

/** Everything the store holds; unique keys are composite strings (see {@link key}). */
export interface State {
  projects: Map<string, ProjectRecord>;
  secrets: Map<string, ProjectSecretRecord>;
  senders: Map<string, SenderRecord>;
  templates: Map<string, TemplateRecord>;
  groups: Map<string, AudienceGroupRecord>;
  groupIdByRef: Map<string, string>;
  /** groupId -> addresses of its members. */
  members: Map<string, Set<string>>;
  /** Profiles by `key(projectId, address)`, with their keys by folded address (`findUnsubscribed`). */
  profiles: ProfileMap;
  suppressions: Map<string, SuppressionRecord>;
  mailings: Map<string, MailingRecord>;
  mailingIdByRef: Map<string, string>;
  batches: Map<string, BatchRecord>;
  deliveries: Map<string, DeliveryRecord>;
  deliveryIdByAddress: Map<string, string>;
  /**
   * Deliveries that may be open (`queued` or `sending`), so that a claim does not walk the terminal
   * ones. A delivery never reopens once terminal, so terminal ones are simply dropped when met.
   */
  openDeliveries: Set<DeliveryRecord>;
  sourceJobs: Map<string, SourceJobRecord>;
  idempotency: Map<string, IdempotencyRecord>;
  /** Token buckets of the shared send limits, by key: `windowMs:start` -> tokens. */
  tokens: Map<string, Map<string, number>>;
  settings: Map<string, string>;
  /** dedupeKey -> inbound signal. */
  inboundSignals: Map<string, InboundSignalRecord>;
  /** key(projectId, address) -> soft bounces in a row. */
  softBounces: Map<string, number>;
  /** Events and the webhook queue (roles/event-store.ts). */
  outbox: EventState;
  /** Sending domains by id, with their keys. */
  domains: Map<string, DomainRecord>;
  /** key(projectId, domain) -> domain id. */
  domainIdByName: Map<string, string>;
  /** Tracking (roles/tracking-store.ts): link maps by mailing, opens by delivery and class, clicks. */
  /** Active and expired pauses, by key(key(projectId, scope), target) (roles/pause-store.ts). */
  pauses: Map<string, PauseRecord>;
  /**
   * Receiving (roles/receiving-store.ts): routes by id, received messages by id, their raw bytes by
   * message id, settings by project.
   */
  receiving: {
    routes: Map<string, ReceivingRouteRecord>;
    messages: Map<string, ReceivedMessageRecord>;
    raw: Map<string, Uint8Array>;
    settings: Map<string, ReceivingSettingsRecord>;
  };
  /**
   * Topics and consent (roles/consent-store.ts): topics by key(projectId, key), topic states by
   * key(projectId, address) then topic key, the history in append order.
   */
  consent: {
    topics: Map<string, TopicRecord>;
    states: Map<string, Map<string, TopicStateRecord>>;
    records: ConsentRecord[];
    /** Erased addresses' hashes by key(projectId, hashed). */
    erased: Map<string, ErasedAddressRecord>;
    /** Project brands by project id. */
    brands: Map<string, ProjectBrandRecord>;
  };
  /**
   * Automations (roles/automation-store.ts): workflows by key(projectId, id), versions by
   * key(workflowId, version), events by key(projectId, id), runs by id with their lease, and the taken
   * entry keys (key(key(workflowId, contact), entryKey)).
   */
  automations: {
    workflows: Map<string, WorkflowRecord>;
    versions: Map<string, WorkflowVersionRecord>;
    events: Map<string, AutomationEventRecord>;
    runs: Map<string, MemoryRun>;
    entries: Set<string>;
    /** Per workflow id, its step counters (`countSteps`). */
    steps: Map<string, Map<string, StepCounts>>;
  };
  /** Signup forms by ref and signups by id, with the id of each key(key(projectId, formRef), address). */
  signup: {
    forms: Map<string, FormRecord>;
    signups: Map<string, SignupRecord>;
    idByKey: Map<string, string>;
  };
  tracking: {
    linkMaps: Map<string, string[]>;
    opens: Map<string, { mailingId: string; machine: boolean; firstAt: Date; lastAt: Date; count: number }>;
    clicks: TrackingHit[];
  };
}

/** A run with its lease: `leaseUntil` (ms, 0 when free), the token of its last claim, its wake count. */
export interface MemoryRun extends RunRecord {
  leaseUntil: number;
  leaseToken: number;
  wakeSeq: number;
}

/** A store with nothing in it. */
export function emptyState(): State {
  return {
    projects: new Map(),
    secrets: new Map(),
    senders: new Map(),
    templates: new Map(),
    groups: new Map(),
    groupIdByRef: new Map(),
    members: new Map(),
    profiles: new ProfileMap(),
    suppressions: new Map(),
    mailings: new Map(),
    mailingIdByRef: new Map(),
    batches: new Map(),
    deliveries: new Map(),
    deliveryIdByAddress: new Map(),
    openDeliveries: new Set(),
    sourceJobs: new Map(),
    idempotency: new Map(),
    tokens: new Map(),
    settings: new Map(),
    inboundSignals: new Map(),
    softBounces: new Map(),
    outbox: emptyEventState(),
    domains: new Map(),
    domainIdByName: new Map(),
    pauses: new Map(),
    consent: { topics: new Map(), states: new Map(), records: [], erased: new Map(), brands: new Map() },
    signup: { forms: new Map(), signups: new Map(), idByKey: new Map() },
    receiving: { routes: new Map(), messages: new Map(), raw: new Map(), settings: new Map() },
    tracking: { linkMaps: new Map(), opens: new Map(), clicks: [] },
    automations: {
      workflows: new Map(),
      versions: new Map(),
      events: new Map(),
      runs: new Map(),
      entries: new Set(),
      steps: new Map(),
    },
  };
}

/**
 * The profiles' map, keeping the keys of each folded address (`key(projectId, foldAddress(address))`):
 * `findUnsubscribed` reads a few entries, never every profile. A status changed in place needs no upkeep:
 * the index holds addresses, and the reader looks at their status.
 */
export class ProfileMap extends Map<string, ProfileRecord> {
  /** `key(projectId, folded address)` to the profiles' keys. */
  readonly byFolded = new Map<string, Set<string>>();

  override set(k: string, profile: ProfileRecord): this {
    // The base constructor calls set before the index exists (it is never given entries here).
    if (this.byFolded !== undefined && !super.has(k)) {
      const folded = key(profile.projectId, foldAddress(profile.address));
      let keys = this.byFolded.get(folded);
      if (!keys) {
        keys = new Set();
        this.byFolded.set(folded, keys);
      }
      keys.add(k);
    }
    return super.set(k, profile);
  }

  override delete(k: string): boolean {
    const profile = super.get(k);
    if (!profile) return false;
    const folded = key(profile.projectId, foldAddress(profile.address));
    const keys = this.byFolded.get(folded);
    keys?.delete(k);
    if (keys?.size === 0) this.byFolded.delete(folded);
    return super.delete(k);
  }

  override clear(): void {
    this.byFolded.clear();
    super.clear();
  }
}

/** A composite key; NUL cannot occur in ids, refs or addresses. */
export function key(a: string, b: string): string {
  return `${a}\u0000${b}`;
}

/** Code-unit order, the order of `ordered by address` in the Store contract. */
export function compare(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/** Oldest first, then by id: the order of listings "oldest first". */
export function byCreatedAt<T extends { createdAt: Date; id: string }>(a: T, b: T): number {
  return a.createdAt.getTime() - b.createdAt.getTime() || compare(a.id, b.id);
}

/** A unique key exists: `CONFLICT`. */
export function conflict(message: string): MailroomError {
  return new MailroomError('CONFLICT', message, { source: DRIVER_NAME });
}

/**
 * A record the caller named exists: `CONFLICT` in the words of the admin API, without the driver's
 * prefix (the same message as the SQL store's).
 */
export function exists(what: string, projectId: string): MailroomError {
  return new MailroomError('CONFLICT', `${what} already exists in project ${projectId}`);
}

/** A failure of the store itself (`STORE_FAILED`), or a caller's bug (`INTERNAL`). */
export function fail(message: string, code: 'STORE_FAILED' | 'INTERNAL' = 'STORE_FAILED'): MailroomError {
  return new MailroomError(code, message, { source: DRIVER_NAME });
}
