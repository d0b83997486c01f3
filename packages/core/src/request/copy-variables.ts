import type { Json, Variables } from '../store/records.js';

/**
 * Template variables are data supplied by the caller. They are copied into fresh plain objects so
 * that nothing of the caller's objects (prototypes, getters, a `__proto__` key) reaches the engine,
 * and the copy refuses anything that is not JSON. The depth cap bounds the recursion, which also
 * turns a cyclic object from an embedding caller into an issue instead of a stack overflow.
 */

/** Deepest nesting of objects and arrays accepted inside variables. */
export const MAX_VARIABLE_DEPTH = 32;

/** Caps on one variables object (the request's field-limits.ts table gives the values). */
export interface VariablesBudget {
  /** UTF-8 bytes of its JSON text (keys, strings, numbers, punctuation). */
  maxBytes: number;
  /** Object keys, counted at every depth. */
  maxKeys: number;
}

/** No cap but the depth: for values that were already checked, or are not the caller's. */
const UNBOUNDED: VariablesBudget = { maxBytes: Number.POSITIVE_INFINITY, maxKeys: Number.POSITIVE_INFINITY };

/** The outcome of copying variables, without throwing. */
export type VariablesCheck =
  | { ok: true; value: Variables }
  | { ok: false; path: Array<string | number>; reason: string; tooBig?: true };

/**
 * Copies a variables object into a JSON-only plain object. Keys named `__proto__` are dropped (they
 * could only ever be an attempt to reach a prototype); every value must be a string, a finite number,
 * a boolean, null, an array or a plain object, at most {@link MAX_VARIABLE_DEPTH} levels deep. With a
 * `budget`, the copy stops as soon as the size or the key count passes it (a 10 MB string is refused by its
 * length before its bytes are counted), and the failure's path is the variables object itself
 * (`tooBig`), since no one value is at fault.
 */
export function copyVariables(
  input: Record<string, unknown>,
  budget: VariablesBudget = UNBOUNDED,
): VariablesCheck {
  const path: Array<string | number> = [];
  const problem: Problem = {
    reason: null,
    tooBig: false,
    bytesLeft: budget.maxBytes,
    keysLeft: budget.maxKeys,
    budget,
  };
  const value = copyObject(input, path, 1, problem);
  if (problem.tooBig) return { ok: false, path: [], reason: problem.reason ?? 'Too large', tooBig: true };
  if (problem.reason !== null || value === undefined) {
    return { ok: false, path, reason: problem.reason ?? 'Must be a JSON object' };
  }
  return { ok: true, value };
}

type Problem = {
  reason: string | null;
  /** The budget ran out (rather than a value being wrong). */
  tooBig: boolean;
  bytesLeft: number;
  keysLeft: number;
  budget: VariablesBudget;
};

// Spends `bytes` of the budget; false (and the problem set) when it runs out.
function spend(problem: Problem, bytes: number): boolean {
  problem.bytesLeft -= bytes;
  if (problem.bytesLeft >= 0) return true;
  problem.tooBig = true;
  problem.reason = `Must be at most ${problem.budget.maxBytes} bytes as JSON`;
  return false;
}

// UTF-8 bytes of a string, 2 for its quotes; its length alone refuses an oversized one without a scan.
function spendString(problem: Problem, value: string): boolean {
  if (value.length > problem.bytesLeft) return spend(problem, value.length);
  return spend(problem, Buffer.byteLength(value, 'utf8') + 2);
}

function copyValue(
  input: unknown,
  path: Array<string | number>,
  depth: number,
  problem: Problem,
): Json | undefined {
  switch (typeof input) {
    case 'string':
      return spendString(problem, input) ? input : undefined;
    case 'boolean':
      return spend(problem, 5) ? input : undefined;
    case 'number':
      if (!Number.isFinite(input)) {
        problem.reason = 'Numbers must be finite';
        return undefined;
      }
      return spend(problem, String(input).length) ? input : undefined;
    case 'object': {
      if (input === null) return spend(problem, 4) ? null : undefined;
      if (depth > MAX_VARIABLE_DEPTH) {
        problem.reason = `Must not nest deeper than ${MAX_VARIABLE_DEPTH} levels`;
        return undefined;
      }
      if (Array.isArray(input)) return copyArray(input, path, depth + 1, problem);
      if (!isPlainObject(input)) {
        problem.reason = 'Must hold only JSON values (strings, numbers, booleans, null, arrays, objects)';
        return undefined;
      }
      return copyObject(input as Record<string, unknown>, path, depth + 1, problem);
    }
    default:
      problem.reason = 'Must hold only JSON values (strings, numbers, booleans, null, arrays, objects)';
      return undefined;
  }
}

function copyArray(
  input: unknown[],
  path: Array<string | number>,
  depth: number,
  problem: Problem,
): Json[] | undefined {
  const out: Json[] = [];
  // Brackets and a comma per item.
  if (!spend(problem, 2 + input.length)) return undefined;
  for (let i = 0; i < input.length; i++) {
    path.push(i);
    const item = copyValue(input[i], path, depth, problem);
    if (item === undefined) return undefined;
    path.pop();
    out.push(item);
  }
  return out;
}

function copyObject(
  input: Record<string, unknown>,
  path: Array<string | number>,
  depth: number,
  problem: Problem,
): { [key: string]: Json } | undefined {
  const out: { [key: string]: Json } = {};
  const keys = Object.keys(input);
  // Counted before any is copied: 100,000 keys are refused without walking them.
  problem.keysLeft -= keys.length;
  if (problem.keysLeft < 0) {
    problem.tooBig = true;
    problem.reason = `Must hold at most ${problem.budget.maxKeys} keys (counted at every depth)`;
    return undefined;
  }
  if (!spend(problem, 2)) return undefined;
  for (const key of keys) {
    const raw = input[key];
    // An undefined property is what JSON.stringify would drop: treat it as absent.
    if (key === '__proto__' || raw === undefined) continue;
    // The key, its colon and a comma.
    if (!spendString(problem, key) || !spend(problem, 2)) return undefined;
    path.push(key);
    const item = copyValue(raw, path, depth, problem);
    if (item === undefined) return undefined;
    path.pop();
    out[key] = item;
  }
  return out;
}

function isPlainObject(value: object): boolean {
  const proto: unknown = Object.getPrototypeOf(value);
  return proto === Object.prototype || proto === null;
}
