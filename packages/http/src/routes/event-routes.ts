import type { AuthContext, EventType, Mailroom } from '@mailroom/core';
import { MailroomError } from '@mailroom/core';
import { successResponse } from '../neutral/responses.js';
import type { NeutralRequest, NeutralResponse } from '../neutral/types.js';
import type { RouteName } from './routes.js';

/** The routes this module serves, all with the project secret. */
export type EventRouteName = Extract<RouteName, 'events' | 'webhooks' | 'webhook' | 'webhook-rotate'>;

/** What an event route is given: the caller's project is already authenticated and within its rate. */
export interface ProjectCall {
  mailroom: Mailroom;
  auth: AuthContext;
  req: NeutralRequest;
  requestId: string;
  /** The path's parameters (`id` of a webhook endpoint). */
  params: Readonly<Record<string, string>>;
  /** Parses the body of a POST or PATCH (its content type checked); only the routes that take a body call it. */
  readJson: () => unknown;
}

/**
 * `GET /events` (the project's events, in pages), `GET/POST /webhooks` (list, add), `PATCH /webhooks/:id`
 * (`{ enabled }`), `DELETE /webhooks/:id` and `POST /webhooks/:id/rotate-secret`.
 */
export const EVENT_ROUTES = {
  async events({ mailroom, auth, req, requestId }) {
    const query = new URLSearchParams(req.query ?? '');
    const limit = query.get('limit');
    const types = query.get('types');
    const page = await mailroom.listEvents(auth, {
      ...(query.get('after') ? { after: query.get('after') as string } : {}),
      ...(types ? { types: types.split(',').map((t) => t.trim()) as EventType[] } : {}),
      ...(query.get('mailingRef') ? { mailingRef: query.get('mailingRef') as string } : {}),
      ...(query.get('address') ? { address: query.get('address') as string } : {}),
      ...(limit !== null ? { limit: positiveInteger(limit, 'limit') } : {}),
    });
    return successResponse(requestId, 'Events', { events: page.items, next: page.next });
  },

  async webhooks({ mailroom, auth, req, requestId, readJson }) {
    if (req.method !== 'POST') {
      return successResponse(requestId, 'Webhook endpoints', {
        webhooks: await mailroom.webhooks.list(auth),
      });
    }
    const body = readJson();
    if (typeof body !== 'object' || body === null || Array.isArray(body)) {
      throw new MailroomError(
        'VALIDATION_FAILED',
        'The body must be an object with `url` and optional `events`',
      );
    }
    const { url, events, enabled } = body as { url?: unknown; events?: unknown; enabled?: unknown };
    const added = await mailroom.webhooks.add(auth, {
      url: url as string,
      ...(events !== undefined ? { events: events as string[] } : {}),
      ...(typeof enabled === 'boolean' ? { enabled } : {}),
    });
    return successResponse(requestId, 'Webhook endpoint added; its secret is shown only now', {
      webhook: added.endpoint,
      secret: added.secret,
    });
  },

  async webhook({ mailroom, auth, req, requestId, params, readJson }) {
    const id = params.id ?? '';
    if (req.method === 'DELETE') {
      await mailroom.webhooks.remove(auth, id);
      return successResponse(requestId, 'Webhook endpoint removed', { id });
    }
    const body = readJson();
    const enabled =
      typeof body === 'object' && body !== null ? (body as { enabled?: unknown }).enabled : undefined;
    if (typeof enabled !== 'boolean') {
      throw new MailroomError(
        'VALIDATION_FAILED',
        'The body must be an object with `enabled`: true or false',
      );
    }
    const webhook = await mailroom.webhooks.setEnabled(auth, id, enabled);
    return successResponse(requestId, enabled ? 'Webhook endpoint enabled' : 'Webhook endpoint disabled', {
      webhook,
    });
  },

  async 'webhook-rotate'({ mailroom, auth, requestId, params }) {
    const id = params.id ?? '';
    return successResponse(requestId, 'Webhook secret rotated; the new one is shown only now', {
      id,
      secret: (await mailroom.webhooks.rotateSecret(auth, id)).secret,
    });
  },
} satisfies Record<EventRouteName, (call: ProjectCall) => Promise<NeutralResponse>>;

function positiveInteger(value: string, name: string): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1)
    throw new MailroomError('VALIDATION_FAILED', `${name} must be a positive integer`);
  return n;
}
