import type { DomainFinding, FindingState } from '../store/domain-types.js';

export type { DomainFinding, FindingKind, FindingState } from '../store/domain-types.js';

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
