import type { DomainRecordKind } from './domain-records.js';

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

/** The identity of a finding before it is looked up. */
export type FindingBase = Pick<DomainFinding, 'kind' | 'type' | 'name' | 'expected' | 'optional'>;

/** A finding of `state`. */
export function finding(
  base: FindingBase,
  state: FindingState,
  actual: readonly string[],
  problem?: string,
): DomainFinding {
  const result: DomainFinding = { ...withoutUndefined(base), state, actual };
  return problem === undefined ? result : { ...result, problem };
}

/** The finding of a lookup the server did not answer. */
export function noAnswer(base: FindingBase, code: string, actual: readonly string[] = []): DomainFinding {
  return finding(base, 'no-answer', actual, `No answer from DNS for ${base.name} (${code}): not verified`);
}

function withoutUndefined(base: FindingBase): FindingBase {
  return Object.fromEntries(Object.entries(base).filter(([, value]) => value !== undefined)) as FindingBase;
}
