import type { CallOptions } from './client-types.js';
import { MailroomApiError } from './mailroom-api-error.js';

/** The fetch settings of a call's options. */
export function init(call: CallOptions | undefined): {
  headers?: Record<string, string>;
  signal?: AbortSignal;
} {
  if (!call) return {};
  const headers: Record<string, string> = {};
  if (call.idempotencyKey !== undefined) headers['idempotency-key'] = call.idempotencyKey;
  if (call.requestId !== undefined) headers['x-request-id'] = call.requestId;
  return { headers, ...(call.signal ? { signal: call.signal } : {}) };
}

/** The `data` of a success envelope. */
export async function dataOf<Data>(
  call: Promise<{ data?: { data: Data }; response: Response }>,
): Promise<Data> {
  const { data: body, response } = await call;
  if (body === undefined) {
    // An empty 2xx: not this API, which always answers its envelope.
    const message = `HTTP ${response.status} without an answer from ${response.url}: is this the API's mount point?`;
    throw new MailroomApiError(response.status, {
      message,
      statusCode: response.status,
      code: 'INTERNAL',
    });
  }
  return body.data;
}

/** The path parameters of a call: `{ path: { ref } }`, typed for openapi-fetch. */
export function pathOf<K extends string>(key: K, value: string): { path: Record<K, string> } {
  return { path: { [key]: value } as Record<K, string> };
}
