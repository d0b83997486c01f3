import { ERASED_ADDRESS } from '../store/audience-admin-store.js';

/**
 * `value` with every occurrence of `address` in its strings (object keys included) replaced by
 * {@link ERASED_ADDRESS}: what `AudienceAdminStore.eraseAddress` does to an event's data. Written once here
 * and exported for store adapters, so that every store erases alike. Returns the same value when it holds
 * no occurrence.
 */
export function scrubAddress<T>(value: T, address: string): T {
  if (address === '') return value;
  return scrub(value, address) as T;
}

/** `text` with every occurrence of `address` replaced (a webhook payload, a stored JSON text). */
export function scrubText(text: string, address: string): string {
  return address === '' || !text.includes(address) ? text : text.split(address).join(ERASED_ADDRESS);
}

function scrub(value: unknown, address: string): unknown {
  if (typeof value === 'string') return scrubText(value, address);
  if (Array.isArray(value)) return value.map((item) => scrub(item, address));
  if (typeof value === 'object' && value !== null && !(value instanceof Date)) {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) out[scrubText(k, address)] = scrub(v, address);
    return out;
  }
  return value;
}
