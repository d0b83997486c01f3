import type { KeyScope } from '@mailroom/core';
import { MailroomError } from '@mailroom/core';
import { successResponse } from '../neutral/responses.js';
import type { NeutralResponse } from '../neutral/types.js';
import type { ProjectCall } from './event-routes.js';
import type { RouteName } from './routes.js';

/** The routes this module serves, all with a project key. */
export type KeyRouteName = Extract<RouteName, 'keys' | 'key' | 'key-rotate'>;

/** Keys per page of `GET /keys` unless `limit` says otherwise, and the most it may say. */
const DEFAULT_LIMIT = 100;
const MAX_LIMIT = 1000;

/**
 * `GET /keys` (the project's keys, in pages: `?cursor=&limit=`, answering `nextCursor`), `POST /keys`
 * (`{ scope, domains?, mode?, name? }`: the new key, its secret shown only in this answer), `DELETE /keys/:id`
 * (revoke) and `POST /keys/:id/rotate` (`{ graceSeconds? }`: the new key and its secret, once).
 */
export const KEY_ROUTES = {
  async keys({ mailroom, auth, req, requestId, readJson }) {
    if (req.method !== 'POST') {
      const query = new URLSearchParams(req.query ?? '');
      const limit = pageLimit(query.get('limit'));
      const cursor = query.get('cursor');
      const all = await mailroom.keys.list(auth);
      // Keys are listed oldest first, by id within a time: the cursor is the last id of the page.
      const start = cursor ? all.findIndex((k) => k.id === cursor) + 1 : 0;
      if (cursor && start === 0) throw invalid(['cursor'], 'cursor is not a key of this project');
      const keys = all.slice(start, start + limit);
      const more = start + limit < all.length;
      return successResponse(requestId, 'Keys', {
        keys: keys,
        nextCursor: more ? (keys.at(-1)?.id ?? null) : null,
      });
    }
    const body = objectBody(readJson(), ['scope', 'domains', 'mode', 'name']);
    const created = await mailroom.keys.create(auth, {
      scope: body.scope as KeyScope,
      ...(body.domains !== undefined ? { domains: body.domains as string[] } : {}),
      ...(body.mode !== undefined ? { mode: body.mode as 'live' | 'sandbox' } : {}),
      // Checked by the engine (a string of one line), which names the field when it is not.
      ...(body.name !== undefined ? { name: body.name as string } : {}),
    });
    return successResponse(requestId, 'Key created; its secret is shown only now', {
      key: created.key,
      secret: created.secret,
    });
  },

  async key({ mailroom, auth, requestId, params }) {
    const key = await mailroom.keys.revoke(auth, params.id ?? '');
    return successResponse(requestId, 'Key revoked', { key });
  },

  async 'key-rotate'({ mailroom, auth, req, requestId, params, readJson }) {
    // The body is optional: none rotates with no grace period.
    const body = req.body && req.body.byteLength > 0 ? objectBody(readJson(), ['graceSeconds']) : {};
    if (body.graceSeconds !== undefined && typeof body.graceSeconds !== 'number') {
      throw invalid(['graceSeconds'], 'graceSeconds must be a number of seconds');
    }
    const rotated = await mailroom.keys.rotate(auth, params.id ?? '', {
      ...(body.graceSeconds !== undefined ? { graceSeconds: body.graceSeconds as number } : {}),
    });
    return successResponse(requestId, 'Key rotated; the new secret is shown only now', {
      key: rotated.key,
      secret: rotated.secret,
      previous: rotated.previous,
    });
  },
} satisfies Record<KeyRouteName, (call: ProjectCall) => Promise<NeutralResponse>>;

/** The body as an object with only `allowed` fields; an unknown one is refused by name. */
function objectBody(body: unknown, allowed: readonly string[]): Record<string, unknown> {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) {
    throw new MailroomError('VALIDATION_FAILED', 'The body must be a JSON object');
  }
  for (const field of Object.keys(body)) {
    if (!allowed.includes(field)) throw invalid([field], `Unknown field ${field}`);
  }
  return body as Record<string, unknown>;
}

function pageLimit(value: string | null): number {
  if (value === null) return DEFAULT_LIMIT;
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1 || n > MAX_LIMIT) {
    throw invalid(['limit'], `limit must be a whole number from 1 to ${MAX_LIMIT}`);
  }
  return n;
}

function invalid(path: string[], message: string): MailroomError {
  return new MailroomError('VALIDATION_FAILED', message, { issues: [{ code: 'custom', path, message }] });
}
