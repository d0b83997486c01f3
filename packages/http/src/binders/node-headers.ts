import type { IncomingHttpHeaders } from 'node:http';

/** Node's headers as the neutral request takes them: lower-case names, repeated values joined. */
export function flattenHeaders(headers: IncomingHttpHeaders): Record<string, string | undefined> {
  const out: Record<string, string | undefined> = {};
  for (const [name, value] of Object.entries(headers)) {
    out[name.toLowerCase()] = Array.isArray(value) ? value.join(', ') : value;
  }
  return out;
}
