import type { Condition } from './workflow-schema.js';

/**
 * A condition on the contact's traits or the starting event's properties (a dotted path reads nested
 * values). A missing value is never an error: `missing` is true, `exists` false, every comparison false
 * (`not-equals` true).
 */
export function evaluateCondition(
  condition: Condition,
  traits: Record<string, unknown>,
  properties: Record<string, unknown>,
): boolean {
  // A condition on a message is read from its events by the run (step-condition.ts), never here.
  if (condition.message !== undefined) return false;
  const source = condition.trait === undefined ? properties : traits;
  const value = read(source, (condition.trait ?? condition.property) as string);
  const expected = condition.value;
  switch (condition.op) {
    case 'exists':
      return value !== undefined && value !== null;
    case 'missing':
      return value === undefined || value === null;
    case 'equals':
      return value === expected;
    case 'not-equals':
      return value !== expected;
    case 'contains':
      if (typeof value === 'string') return typeof expected === 'string' && value.includes(expected);
      return Array.isArray(value) && value.includes(expected);
    case 'gt':
      return typeof value === 'number' && value > (expected as number);
    case 'gte':
      return typeof value === 'number' && value >= (expected as number);
    case 'lt':
      return typeof value === 'number' && value < (expected as number);
    case 'lte':
      return typeof value === 'number' && value <= (expected as number);
    default:
      return false;
  }
}

function read(source: Record<string, unknown>, path: string): unknown {
  if (Object.hasOwn(source, path)) return source[path];
  let value: unknown = source;
  for (const key of path.split('.')) {
    if (typeof value !== 'object' || value === null || !Object.hasOwn(value, key)) return undefined;
    value = (value as Record<string, unknown>)[key];
  }
  return value;
}
