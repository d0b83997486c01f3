import { MailroomError } from '@mailroom/core';
import { successResponse } from '../neutral/responses.js';
import type { NeutralResponse } from '../neutral/types.js';
import { stringField } from './body-fields.js';
import type { ProjectCall } from './event-routes.js';
import type { RouteName } from './routes.js';

/** The routes this module serves, all with a project key. */
export type AudienceRouteName = Extract<
  RouteName,
  | 'audience-groups'
  | 'audience-group'
  | 'audience-members'
  | 'audience-profiles'
  | 'audience-profile'
  | 'audience-imports'
  | 'audience-import'
  | 'broadcasts-list'
  | 'broadcast-status'
  | 'message-status'
>;

/**
 * The audience (`/audience/groups`, `/audience/profiles`, `/audience/imports`) and the status reads of
 * broadcasts and messages (`GET /broadcasts`, `GET /broadcasts/:ref`, `GET /messages/:ref`). Listings
 * page with `?cursor=&limit=` and answer `nextCursor` (null on the last page).
 */
export const AUDIENCE_ROUTES = {
  async 'audience-groups'({ mailroom, auth, req, requestId, readJson }) {
    if (req.method !== 'POST') {
      return successResponse(requestId, 'Audience groups', {
        groups: await mailroom.audience.listGroups(auth),
      });
    }
    const body = objectBody(readJson(), ['ref', 'name', 'doubleOptIn']);
    const ref = stringField(body, 'ref', true) as string;
    const name = body.name === null ? null : stringField(body, 'name');
    if (body.doubleOptIn !== undefined && typeof body.doubleOptIn !== 'boolean') {
      const message = '`doubleOptIn` must be true or false';
      throw new MailroomError('VALIDATION_FAILED', message, {
        issues: [{ code: 'invalid_type', path: ['doubleOptIn'], message }],
      });
    }
    const group = await mailroom.audience.createGroup(auth, {
      ref,
      ...(name ? { name } : {}),
      ...(body.doubleOptIn === true ? { doubleOptIn: true } : {}),
    });
    return successResponse(requestId, 'Audience group created', { group });
  },

  async 'audience-group'({ mailroom, auth, requestId, params }) {
    const ref = params.group ?? '';
    await mailroom.audience.deleteGroup(auth, ref);
    return successResponse(requestId, 'Audience group deleted; its profiles stay', { group: ref });
  },

  async 'audience-members'({ mailroom, auth, req, requestId, params }) {
    const paging = pageQuery(req.query);
    const page = await mailroom.audience.listMembers(auth, params.group ?? '', paging);
    return successResponse(requestId, 'Audience group members', {
      profiles: page.items,
      nextCursor: page.next,
    });
  },

  async 'audience-profiles'({ mailroom, auth, req, requestId }) {
    const query = new URLSearchParams(req.query ?? '');
    const q = query.get('q');
    const label = query.get('label');
    const page = await mailroom.audience.listProfiles(auth, {
      ...pageQuery(req.query),
      ...(q ? { q } : {}),
      ...(label ? { label } : {}),
    });
    return successResponse(requestId, 'Profiles', { profiles: page.items, nextCursor: page.next });
  },

  async 'audience-profile'({ mailroom, auth, req, requestId, params, readJson }) {
    const address = params.email ?? '';
    if (req.method === 'DELETE') {
      const erased = await mailroom.audience.eraseProfile(auth, address);
      return successResponse(requestId, 'Profile erased with its personal data', { erased });
    }
    if (req.method === 'PATCH') {
      const profile = await mailroom.audience.updateProfile(auth, address, readJson());
      return successResponse(requestId, 'Profile updated', { profile });
    }
    return successResponse(requestId, 'Profile', {
      profile: await mailroom.audience.getProfile(auth, address),
    });
  },

  async 'audience-imports'({ mailroom, auth, requestId, readJson }) {
    const started = await mailroom.audience.startImport(auth, readJson());
    return successResponse(requestId, 'Import started: follow it at /audience/imports/{id}', {
      import: started,
    });
  },

  async 'audience-import'({ mailroom, auth, requestId, params }) {
    return successResponse(requestId, 'Import', {
      import: await mailroom.audience.getImport(auth, params.id ?? ''),
    });
  },

  async 'broadcasts-list'({ mailroom, auth, req, requestId }) {
    const paging = pageQuery(req.query);
    const page = await mailroom.listMailings(auth, 'broadcast', paging);
    return successResponse(requestId, 'Broadcasts', { broadcasts: page.items, nextCursor: page.next });
  },

  async 'broadcast-status'({ mailroom, auth, requestId, params }) {
    const ref = params.ref ?? '';
    const broadcast = await mailroom.getMailing(auth, ref);
    if (broadcast.kind !== 'broadcast') throw new MailroomError('NOT_FOUND', `Broadcast ${ref} not found`);
    const sources = await mailroom.listSourceJobs(auth, ref);
    return successResponse(requestId, 'Broadcast', { broadcast: { ...broadcast, sources } });
  },

  async 'message-status'({ mailroom, auth, requestId, params }) {
    return successResponse(requestId, 'Message', {
      message: await mailroom.getMessage(auth, params.ref ?? ''),
    });
  },
} satisfies Record<AudienceRouteName, (call: ProjectCall) => Promise<NeutralResponse>>;

/** `?cursor=&limit=` of a listing; a bad limit is `VALIDATION_FAILED`. */
function pageQuery(raw: string | undefined): { after?: string; limit?: number } {
  const query = new URLSearchParams(raw ?? '');
  const cursor = query.get('cursor');
  const limit = query.get('limit');
  const out: { after?: string; limit?: number } = {};
  if (cursor) out.after = cursor;
  if (limit !== null) {
    const n = Number(limit);
    if (!Number.isInteger(n) || n < 1 || n > 500) {
      const message = '`limit` must be an integer from 1 to 500';
      throw new MailroomError('VALIDATION_FAILED', message, {
        issues: [{ code: 'invalid_type', path: ['limit'], message }],
      });
    }
    out.limit = n;
  }
  return out;
}

/** The body as an object with only `allowed` members: an unknown one is refused, named. */
function objectBody(body: unknown, allowed: readonly string[]): Record<string, unknown> {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) {
    throw new MailroomError('VALIDATION_FAILED', 'The body must be a JSON object');
  }
  for (const key of Object.keys(body)) {
    if (!allowed.includes(key)) {
      const message = `Unknown field \`${key}\`; expected ${allowed.map((a) => `\`${a}\``).join(', ')}`;
      throw new MailroomError('VALIDATION_FAILED', message, {
        issues: [{ code: 'unrecognized_keys', path: [key], message }],
      });
    }
  }
  return body as Record<string, unknown>;
}
