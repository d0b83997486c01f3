/**
 * SKETCH, not yet part of `Store`: the role a store takes on to keep a project's sending domains, their
 * DKIM keys and the last DNS check (docs/domains.md). Types only; no adapter implements it yet. When it is
 * wired, the record types move to `records.ts` and the role joins the `Store` union and the conformance kit.
 */
import type { DkimAlgorithm } from '../domains/dkim-key.js';
import type { DomainFinding } from '../domains/domain-finding.js';
import type { OutboxWrite } from './event-records.js';

/**
 * Where a domain stands, from its last conclusive check:
 * - `pending`: added, never verified (a check that got no answer leaves it here);
 * - `verified`: every required record was found;
 * - `failed`: was verified, then a required record went missing or wrong (`domain.failed` was emitted).
 * A check that gets no answer changes nothing: the last conclusive state stands.
 */
export type DomainState = 'pending' | 'verified' | 'failed';

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

/** A sending domain of a project. Unique per (projectId, domain). */
export interface DomainRecord {
  id: string;
  projectId: string;
  /** The normalised domain (`normalizeDomain`): lower-case ASCII, punycode, no trailing dot. */
  domain: string;
  state: DomainState;
  /** The VERP return-path domain its mail uses, when bounces are on. */
  returnPath: string | null;
  /** The DMARC reporting address of the advised record; null for `dmarc@<domain>`. */
  dmarcReports: string | null;
  /** Its keys, oldest first. */
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
  /** The current time: sets `activatedAt` when `to` is `active`, and `updatedAt`. */
  now: Date;
  /** With `to: 'retiring'`: the end of the grace period. */
  retireAt?: Date;
}

/**
 * The sending domains of the projects. Read when a message is composed (which key signs, whether the
 * sending policy lets it go), written by the admin API, the CLI and the scheduled check. Every rule of
 * `Store` (store.ts) applies.
 */
export interface DomainStore {
  /** Insert a domain with its first key(s). `CONFLICT` if (projectId, domain) exists. */
  addDomain(domain: DomainRecord): Promise<void>;
  /** A domain of the project by its normalised name. */
  getDomain(projectId: string, domain: string): Promise<DomainRecord | undefined>;
  /** The project's domains, by domain. */
  listDomains(projectId: string): Promise<DomainRecord[]>;
  /** Delete a domain and its keys; false if there was none. */
  removeDomain(projectId: string, domain: string, now: Date): Promise<boolean>;

  /**
   * Claim up to `limit` domains of any project whose `nextCheckAt <= now`, oldest first, setting their
   * `nextCheckAt` to `now + leaseMs`.
   *
   * Race guarantee: a domain is returned by at most one call per lease, whatever the number of concurrent
   * claimers (processes included, when `capabilities.multiProcess`).
   */
  claimDomainChecks(options: { now: Date; limit: number; leaseMs: number }): Promise<DomainRecord[]>;
  /**
   * Write the outcome of a check and return the state it replaced (undefined when the domain is gone,
   * and then nothing is written, outbox included).
   *
   * Race guarantee: the read of the previous state and the write are one atomic step, so of concurrent
   * writers exactly one sees a given transition (`verified` to `failed`) and emits its event.
   */
  recordDomainCheck(domainId: string, write: DomainCheckWrite): Promise<DomainState | undefined>;

  /** Add a key (a rotation's new `pending` key). `CONFLICT` if the domain has that selector. */
  addDkimKey(domainId: string, key: DkimKeyRecord, now: Date): Promise<void>;
  /**
   * Move a key from `transition.from` to `transition.to`; `to: 'retired'` also erases its
   * `sealedPrivateKey`. Returns false, changing nothing, when the key is not in `from`.
   *
   * Race guarantee: compare-and-set: of concurrent calls for one key and one `from`, at most one returns
   * true, so two processes never both activate a key or retire one twice.
   */
  setDkimKeyState(domainId: string, selector: string, transition: DkimKeyTransition): Promise<boolean>;
}
