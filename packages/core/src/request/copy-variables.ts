import type { Json, Variables } from '../store/records.js';

/**
 * Template variables are data supplied by the caller. They are copied into fresh plain objects so
 * that nothing of the caller's objects (prototypes, getters, a `__proto__` key) reaches the engine,
 * and the copy refuses anything that is not JSON. The depth cap bounds the recursion, which also
 * turns a cyclic object from an embedding caller into an issue instead of a stack overflow.
 */

/** Deepest nesting of objects and arrays accepted inside variables. */
export const MAX_VARIABLE_DEPTH = 32;

/** The outcome of copying variables, without throwing. */
export type VariablesCheck =
  | { ok: true; value: Variables }
  | { ok: false; path: Array<string | number>; reason: string };

/**
 * Copies a variables object into a JSON-only plain object. Keys named `__proto__` are dropped (they
 * could only ever be an attempt to reach a prototype); every value must be a string, a finite number,
 * a boolean, null, an array or a plain object, at most {@link MAX_VARIABLE_DEPTH} levels deep.
 */
export function copyVariables(input: Record<string, unknown>): VariablesCheck {
  const path: Array<string | number> = [];
  const problem: { reason: string | null } = { reason: null };
  const value = copyObject(input, path, 1, problem);
  if (problem.reason !== null || value === undefined) {
    return { ok: false, path, reason: problem.reason ?? 'Must be a JSON object' };
  }
  return { ok: true, value };
}

type Problem = { reason: string | null };

function copyValue(
  input: unknown,
  path: Array<string | number>,
  depth: number,
  problem: Problem,
): Json | undefined {
  switch (typeof input) {
    case 'string':
    case 'boolean':
      return input;
    case 'number':
      if (Number.isFinite(input)) return input;
      problem.reason = 'Numbers must be finite';
      return undefined;
    case 'object': {
      if (input === null) return null;
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
  for (const key of Object.keys(input)) {
    const raw = input[key];
    // An undefined property is what JSON.stringify would drop: treat it as absent.
    if (key === '__proto__' || raw === undefined) continue;
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
