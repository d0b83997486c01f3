import type { DkimKeyState, DomainState } from '../store/domain-store.js';
import type { DkimAlgorithm } from './dkim-key.js';
import type { DnsResolver } from './dns-lookup.js';
import type { DomainCheckState } from './domain-check.js';
import type { DomainFinding } from './domain-finding.js';
import type { DnsRecordToPublish, SpfRelay } from './domain-records.js';
import type { WarmupDay } from './warmup-schedule.js';

/**
 * What happens to mail whose From domain is not a verified domain of the project:
 * - `warn`: it is sent, and the first such send logs a warning once per domain (per process), which the
 *   dashboard's Domains page shows too;
 * - `enforce`: the send is refused with `DOMAIN_NOT_VERIFIED` (403), naming the record missing or wrong.
 */
export type SendingPolicy = 'warn' | 'enforce';

/** Options of sending domains (`MailroomOptions.domains`). See docs/domains.md. */
export interface DomainsOptions {
  /**
   * The policy for mail from domains that are not verified.
   * @default 'warn'
   */
  sending?: SendingPolicy;
  /**
   * The secret DKIM private keys are sealed with (at least 16 characters). Changing or losing it makes the
   * stored keys unopenable: rotate every domain's key after a change.
   * @default a random secret generated once and kept in the store's settings
   */
  secret?: string;
  /**
   * The relay that carries the mail, as SPF names it: its mechanisms (`include:amazonses.com`) or the
   * addresses it sends from. The records advise it and the check evaluates SPF for its addresses.
   * @default unknown: the records advise `v=spf1 a mx ~all` and the check only sees that a record is there
   */
  relay?: SpfRelay;
  /**
   * Days a replaced DKIM key stays usable after a rotation (its record must stay published): mail signed
   * with it may still be in queues or forwarded.
   * @default 7
   */
  graceDays?: number;
  /**
   * DNS servers the checks ask (`'127.0.0.1:5353'`, `'[::1]:53'`).
   * @default the system's servers
   */
  dnsServers?: string[];
  /** A resolver of your own for the checks (wins over `dnsServers`). */
  resolver?: DnsResolver;
  /**
   * Milliseconds between two looks of the running worker for domains due a scheduled check; 0 turns the
   * scheduled checks off in this process.
   * @default 60000
   */
  checkEveryMs?: number;
}

/** Options of `Mailroom.addDomain`. */
export interface AddDomainOptions {
  /**
   * The DKIM selector of its key (DNS labels).
   * @default `mr` and the UTC date (`mr20260829`), `e` appended for an Ed25519 key
   */
  selector?: string;
  /**
   * The key's algorithm: `rsa` (RSA 2048, verified everywhere) or `ed25519` (RFC 8463).
   * @default 'rsa'
   */
  keyType?: DkimAlgorithm;
  /**
   * The return-path (envelope sender) domain of its mail when it is not the domain itself: the bounce
   * domain when bounces are on (best under the domain, `bounces.acme.com`, so that SPF aligns).
   */
  returnPath?: string;
  /** The host the return-path domain's MX must name: the inbound SMTP server that reads the bounces. */
  returnPathMx?: string;
  /**
   * Where DMARC aggregate reports go (`rua`).
   * @default `dmarc@<domain>`
   */
  dmarcReports?: string;
}

/** Options of `Mailroom.rotateDkim`. */
export interface RotateDkimOptions {
  /** The new key's selector. @default a new dated selector */
  selector?: string;
  /** The new key's algorithm. @default the algorithm of the key it replaces */
  keyType?: DkimAlgorithm;
}

/** One DKIM key of a domain, as the API shows it: never its private key. */
export interface DkimKeyView {
  selector: string;
  algorithm: DkimAlgorithm;
  state: DkimKeyState;
  /** Its TXT record. */
  record: DnsRecordToPublish;
  createdAt: Date;
  activatedAt: Date | null;
  /** A retiring key: when its grace period ends (its record must stay published until then). */
  retireAt: Date | null;
}

/** A sending domain of a project, as the API shows it. */
export interface DomainView {
  /** The normalised name. */
  domain: string;
  /** From its last conclusive check. */
  state: DomainState;
  /** The verdict of the last check, `no-answer` included; null before the first. */
  check: DomainCheckState | null;
  returnPath: string | null;
  returnPathMx: string | null;
  dmarcReports: string | null;
  /** The selector new mail from the domain is signed with; null until a key's record was seen. */
  signingSelector: string | null;
  /** Its keys, oldest first. */
  keys: DkimKeyView[];
  /** The records to publish now, in order, ready to copy (the keys of a rotation included). */
  records: DnsRecordToPublish[];
  /** What the last check saw of each record; null before the first. */
  findings: DomainFinding[] | null;
  checkedAt: Date | null;
  /** When the running worker checks it again. */
  nextCheckAt: Date;
  createdAt: Date;
  /**
   * Where the domain's warm-up stands today (engine option `warmup`: its schedule's first day, today's
   * day number and allowance, null once over, and when the next day's begins); absent without a schedule.
   */
  warmup?: WarmupDay & { start: string };
}

/** Mail sent from a domain that is not verified, under the `warn` policy (seen by this process). */
export interface DomainWarning {
  domain: string;
  /** Why it is not verified, naming the record missing or wrong. */
  problem: string;
  /** The first such send since the process started. */
  firstAt: Date;
}
