/**
 * The types a sending domain's records hold (DKIM algorithm, DNS findings): defined here, with the records
 * that keep them, so that the store depends on no capability; `domains/` re-exports them.
 */

/**
 * The DKIM signing algorithms Mailroom makes keys for: `rsa` (RSA 2048, `rsa-sha256`, which every
 * receiver verifies) and `ed25519` (RFC 8463, `ed25519-sha256`: short keys and signatures, but not yet
 * verified everywhere, so RFC 8463 advises signing with an RSA key as well).
 */
export type DkimAlgorithm = 'rsa' | 'ed25519';

/** What a record is for. */
export type DomainRecordKind =
  /** The DKIM public key: `<selector>._domainkey.<domain>` TXT. */
  | 'dkim'
  /** SPF of the From domain: which hosts may send as it. */
  | 'spf'
  /** The DMARC policy: `_dmarc.<domain>` TXT. */
  | 'dmarc'
  /** RFC 7489 7.1: lets the reporting address's domain receive the domain's DMARC reports. */
  | 'dmarc-report-auth'
  /** Where bounces to the VERP return-path domain are delivered. */
  | 'return-path-mx'
  /** SPF of the return-path domain: what receivers check against the envelope sender. */
  | 'return-path-spf';

/**
 * What a check saw of one record:
 * - `found`: published as expected (and, where the check can evaluate it, it works: SPF passes for the
 *   relay's addresses, a message signed with the key verifies, DMARC passes and aligns);
 * - `missing`: the name has no such record;
 * - `wrong`: a record is there but does not do its job (`problem` says why, `expected` is what to publish);
 * - `no-answer`: the DNS server did not answer or failed: nothing is concluded, and the domain is not
 *   verified.
 */
export type FindingState = 'found' | 'missing' | 'wrong' | 'no-answer';

/** The records a check looks at: those to publish, and BIMI when asked for. */
export type FindingKind = DomainRecordKind | 'bimi';

/** One record's finding. */
export interface DomainFinding {
  /** What the record is for. */
  readonly kind: FindingKind;
  /** The record type looked up. */
  readonly type: 'TXT' | 'MX';
  /** The name looked up. */
  readonly name: string;
  /** What was seen. */
  readonly state: FindingState;
  /** The exact value to publish, when the check knows it (always for `missing` and `wrong` when known). */
  readonly expected?: string;
  /** What DNS answered at the name (TXT strings joined; MX as `priority exchange`). */
  readonly actual: readonly string[];
  /** Why the state is not `found`, or what a found record still lacks (BIMI). */
  readonly problem?: string;
  /** Not needed for the domain to be verified (BIMI, the DMARC report authorisation). */
  readonly optional?: boolean;
}
