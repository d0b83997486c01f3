/**
 * A deep copy of a record. Records are plain data (JSON values, dates, arrays, plain objects), which a
 * direct copy handles many times faster than `structuredClone` (whose serialization dominated the cost
 * of accepting a batch); anything else, or a structure deeper than any record (a cycle), goes to
 * `structuredClone`.
 */
export function clone<T>(value: T): T {
  return copy(value, 0) as T;
}

/** {@link clone}, passing `undefined` through. */
export function cloneMaybe<T>(value: T | undefined): T | undefined {
  return value === undefined ? undefined : clone(value);
}

/** Nesting beyond which {@link copy} hands over to `structuredClone` (which copes with cycles). */
const MAX_COPY_DEPTH = 64;

function copy(value: unknown, depth: number): unknown {
  if (typeof value !== 'object' || value === null) return value;
  if (depth > MAX_COPY_DEPTH) return structuredClone(value);
  if (Array.isArray(value)) {
    const out: unknown[] = new Array(value.length);
    for (let i = 0; i < value.length; i++) out[i] = copy(value[i], depth + 1);
    return out;
  }
  if (value instanceof Date) return new Date(value.getTime());
  const proto: unknown = Object.getPrototypeOf(value);
  if (proto !== Object.prototype && proto !== null) return structuredClone(value);
  const out: Record<string, unknown> = {};
  for (const key of Object.keys(value)) {
    const item = copy((value as Record<string, unknown>)[key], depth + 1);
    // An own `__proto__` key stays a key (an assignment would set the copy's prototype instead).
    if (key === '__proto__')
      Object.defineProperty(out, key, { value: item, enumerable: true, writable: true, configurable: true });
    else out[key] = item;
  }
  return out;
}
