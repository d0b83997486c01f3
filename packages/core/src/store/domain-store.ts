/**
 * The store's role for a project's sending domains: the domains, their DKIM keys and the last DNS check
 * (docs/domains.md). Part of {@link Store}; the conformance kit (`store-suite-domains.ts`) checks it.
 */
import type { DkimAlgorithm, DomainFinding } from './domain-types.js';
import type { OutboxWrite } from './event-records.js';
import type { DomainState } from './records.js';

export type { DomainState } from './records.js';

/**
 * A DKIM key's place in its rotation:
 * - `pending`: made and advised, its record not seen yet: nothing is signed with it;
 * - `active`: its record was seen: new mail is signed with it;
 * - `retiring`: replaced by a newer active key; its record must stay published until `retireAt` so mail
 *   signed with it and still in queues verifies;
 * - `retired`: the grace period is over; its private key is erased, its record may go.
 */
export type DkimKeyState = 'pending' | 'active' | 'retiring' | 'retired';

/** One DKIM key of a domain. Unique per (domain, selector). */
export interface DkimKeyRecord {
  /** The selector, for example `mr20260829`. */
  selector: string;
  /** `rsa` or `ed25519`. */
  algorithm: DkimAlgorithm;
  /** The `p=` value of its record. */
  publicKey: string;
  /**
   * The private key sealed with the installation secret (`sealKey`, label `<domain>/<selector>`); null
   * once `retired`. Never returned by the HTTP API, never logged.
   */
  sealedPrivateKey: string | null;
  state: DkimKeyState;
  createdAt: Date;
  /** When it became `active`. */
  activatedAt: Date | null;
  /** When a `retiring` key becomes `retired` (the end of its grace period). */
  retireAt: Date | null;
}

/** A sending domain of a project. Unique by id, and per (projectId, domain). */
export interface DomainRecord {
  id: string;
  projectId: string;
  /** The normalised domain (`normalizeDomain`): lower-case ASCII, punycode, no trailing dot. */
  domain: string;
  state: DomainState;
  /** The return-path (envelope sender) domain its mail uses, when it is not the domain itself. */
  returnPath: string | null;
  /** The host the return-path domain's MX must name (the inbound server), when known. */
  returnPathMx: string | null;
  /** The DMARC reporting address of the advised record; null for `dmarc@<domain>`. */
  dmarcReports: string | null;
  /** Its keys, oldest first (by `createdAt`, then selector). */
  keys: DkimKeyRecord[];
  /** The findings of the last check (conclusive or not); null before the first. */
  findings: DomainFinding[] | null;
  /** When it was last checked. */
  checkedAt: Date | null;
  /** When it is next due for a scheduled check (also the lease of a claimed check). */
  nextCheckAt: Date;
  createdAt: Date;
  updatedAt: Date;
}

/** What one check writes (see {@link DomainStore.recordDomainCheck}). */
export interface DomainCheckWrite {
  /** The new state; the same as before when the check got no answer. */
  state: DomainState;
  findings: DomainFinding[];
  /** When the check ran: also the row's `updatedAt`. */
  checkedAt: Date;
  nextCheckAt: Date;
  /**
   * Events and webhook messages inserted in the same transaction when the write happens (`domain.failed`
   * when a verified domain fails), as `DeliveryOutcome.outbox`.
   */
  outbox?: OutboxWrite;
}

/** A key's state change (see {@link DomainStore.setDkimKeyState}). */
export interface DkimKeyTransition {
  /** The state the key must be in for the change to happen. */
  from: DkimKeyState;
  to: DkimKeyState;
  /** The current time: sets `activatedAt` when `to` is `active`, and the domain's `updatedAt`. */
  now: Date;
  /** With `to: 'retiring'`: the end of the grace period (stored as `retireAt`). */
  retireAt?: Date;
}

/**
 * The sending domains of the projects. Read when a message is accepted (whether the sending policy lets
 * it go) and composed (which key signs it), written by the admin API, the CLI and the scheduled check.
 * Every rule of `Store` (store.ts) applies; the domain's `keys` come back with it from every read.
 */
export interface DomainStore {
  /** Insert a domain with its keys. `CONFLICT` if its id or (projectId, domain) exists. */
  addDomain(domain: DomainRecord): Promise<void>;
  /** A domain of the project by its normalised name. */
  getDomain(projectId: string, domain: string): Promise<DomainRecord | undefined>;
  /** The project's domains, ordered by domain. */
  listDomains(projectId: string): Promise<DomainRecord[]>;
  /** Delete a domain and its keys; false if there was none. */
  removeDomain(projectId: string, domain: string): Promise<boolean>;

  /**
   * Claim up to `limit` domains of any project whose `nextCheckAt <= now`, earliest `nextCheckAt` first
   * (then by id), setting their `nextCheckAt` to `now + leaseMs` and `updatedAt` to `now`; returns them
   * as written, in no particular order.
   *
   * Race guarantee: a domain is returned by at most one call per lease, whatever the number of concurrent
   * claimers (processes included, when `capabilities.multiProcess`).
   */
  claimDomainChecks(options: { now: Date; limit: number; leaseMs: number }): Promise<DomainRecord[]>;
  /**
   * Write the outcome of a check (state, findings, `checkedAt`, `nextCheckAt`, and `write.outbox` in the
   * same transaction), only if the domain's state is still `from`. Returns whether it wrote; false,
   * writing nothing (outbox included), when the state moved or the domain is gone.
   *
   * Race guarantee: compare-and-set on the state: of concurrent writers from one state exactly one writes,
   * so a transition (`verified` to `failed`) is written, and its event emitted, once.
   */
  recordDomainCheck(domainId: string, from: DomainState, write: DomainCheckWrite): Promise<boolean>;

  /**
   * Add a key to a domain (a rotation's new `pending` key), setting the domain's `updatedAt` to `now`.
   * `CONFLICT` if the domain has that selector; false, writing nothing, if the domain is gone.
   */
  addDkimKey(domainId: string, key: DkimKeyRecord, now: Date): Promise<boolean>;
  /**
   * Move a key from `transition.from` to `transition.to`: `to: 'active'` sets `activatedAt`, `to:
   * 'retiring'` sets `retireAt`, `to: 'retired'` erases its `sealedPrivateKey`. Returns false, changing
   * nothing, when the key is not in `from` (or does not exist).
   *
   * Race guarantee: compare-and-set: of concurrent calls for one key and one `from`, at most one returns
   * true, so two processes never both activate a key or retire one twice.
   */
  setDkimKeyState(domainId: string, selector: string, transition: DkimKeyTransition): Promise<boolean>;
}
