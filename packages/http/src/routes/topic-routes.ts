import {
  MailroomError,
  type ProjectBrandPatch,
  type TopicInput,
  type TopicPatch,
  type TopicState,
} from '@mailroom/core';
import { successResponse } from '../neutral/responses.js';
import type { NeutralResponse } from '../neutral/types.js';
import type { ProjectCall } from './event-routes.js';
import type { RouteName } from './routes.js';

/** The routes this module serves, all with a project key. */
export type TopicRouteName = Extract<
  RouteName,
  'topics' | 'topic' | 'audience-profile-topics' | 'audience-profile-consent' | 'project-brand'
>;

/**
 * Topics and consent (issue 38): `GET/POST /topics`, `GET/PATCH/DELETE /topics/:key`,
 * `GET/PUT /audience/profiles/:email/topics` (a contact's topic states; a PUT is a consent change of source
 * `api`, with the caller's address and user agent) and `GET /audience/profiles/:email/consent` (the
 * contact's consent history, `?cursor=&limit=`). The engine checks every body.
 */
export const TOPIC_ROUTES = {
  async topics({ mailroom, auth, req, requestId, readJson }) {
    if (req.method !== 'POST') {
      return successResponse(requestId, 'Topics', { topics: await mailroom.topics.list(auth) });
    }
    const topic = await mailroom.topics.create(auth, readJson() as TopicInput);
    return successResponse(requestId, 'Topic created', { topic });
  },

  async topic({ mailroom, auth, req, requestId, params, readJson }) {
    const key = params.key ?? '';
    if (req.method === 'DELETE') {
      await mailroom.topics.remove(auth, key);
      return successResponse(requestId, "Topic deleted with the contacts' choices for it", { topic: key });
    }
    if (req.method === 'PATCH') {
      const topic = await mailroom.topics.update(auth, key, readJson() as TopicPatch);
      return successResponse(requestId, 'Topic updated', { topic });
    }
    return successResponse(requestId, 'Topic', { topic: await mailroom.topics.get(auth, key) });
  },

  async 'audience-profile-topics'({ mailroom, auth, req, requestId, params, readJson }) {
    const address = params.email ?? '';
    if (req.method === 'PUT') {
      const body = readJson();
      const topics = (body as { topics?: unknown } | null)?.topics;
      if (typeof topics !== 'object' || topics === null || Array.isArray(topics)) {
        const message = '`topics` is required: an object of topic key to subscribed, unsubscribed or null';
        throw new MailroomError('VALIDATION_FAILED', message, {
          issues: [{ code: 'invalid_type', path: ['topics'], message }],
        });
      }
      const states = await mailroom.topics.setContactTopics(
        auth,
        address,
        topics as Record<string, TopicState | null>,
        { ip: req.ip ?? null, userAgent: req.headers['user-agent'] ?? null },
      );
      return successResponse(requestId, 'Topics updated', { topics: states });
    }
    return successResponse(requestId, 'Topics of the contact', {
      topics: await mailroom.topics.contactTopics(auth, address),
    });
  },

  async 'audience-profile-consent'({ mailroom, auth, req, requestId, params }) {
    const query = new URLSearchParams(req.query ?? '');
    const limit = query.get('limit');
    const n = limit === null ? undefined : Number(limit);
    if (n !== undefined && (!Number.isInteger(n) || n < 1 || n > 500)) {
      const message = '`limit` must be an integer from 1 to 500';
      throw new MailroomError('VALIDATION_FAILED', message, {
        issues: [{ code: 'invalid_type', path: ['limit'], message }],
      });
    }
    const page = await mailroom.topics.history(auth, params.email ?? '', {
      after: query.get('cursor'),
      ...(n !== undefined ? { limit: n } : {}),
    });
    return successResponse(requestId, 'Consent history', { consent: page.data, nextCursor: page.next });
  },

  /** `GET/PATCH /project/brand`: the project's colour and logo on its contacts' pages (the preference centre). */
  async 'project-brand'({ mailroom, auth, req, requestId, readJson }) {
    if (req.method === 'PATCH') {
      const brand = await mailroom.brand.update(auth, readJson() as ProjectBrandPatch);
      return successResponse(requestId, 'Brand updated', { brand });
    }
    return successResponse(requestId, 'Brand', { brand: await mailroom.brand.get(auth) });
  },
} satisfies Record<TopicRouteName, (call: ProjectCall) => Promise<NeutralResponse>>;
