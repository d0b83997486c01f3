import { MailroomError, type ReceivingRouteInput } from '@mailroom/core';
import { successResponse } from '../neutral/responses.js';
import type { NeutralResponse } from '../neutral/types.js';
import type { ProjectCall } from './event-routes.js';
import type { RouteName } from './routes.js';

/** The routes this module serves, all with a project key. */
export type ReceivingRouteName = Extract<
  RouteName,
  'inbound-routes' | 'inbound-route' | 'inbound-messages' | 'inbound-message'
>;

/**
 * Receiving mail for the app (issue 40): `GET/POST /inbound/routes`, `DELETE /inbound/routes/:id`,
 * `GET /inbound/messages` (`?before=&limit=`, newest first) and `GET /inbound/messages/:id`. The engine
 * checks every body.
 */
export const RECEIVING_ROUTES = {
  async 'inbound-routes'({ mailroom, auth, req, requestId, readJson }) {
    if (req.method !== 'POST') {
      return successResponse(requestId, 'Receiving routes', {
        routes: await mailroom.receiving.listRoutes(auth),
      });
    }
    const route = await mailroom.receiving.addRoute(auth, readJson() as ReceivingRouteInput);
    return successResponse(requestId, 'Receiving route created', { route });
  },

  async 'inbound-route'({ mailroom, auth, requestId, params }) {
    const id = params.id ?? '';
    await mailroom.receiving.removeRoute(auth, id);
    return successResponse(requestId, 'Receiving route deleted', { route: id });
  },

  async 'inbound-messages'({ mailroom, auth, req, requestId }) {
    const query = new URLSearchParams(req.query ?? '');
    const limit = query.get('limit');
    const n = limit === null ? undefined : Number(limit);
    if (n !== undefined && (!Number.isInteger(n) || n < 1 || n > 100)) {
      const message = '`limit` must be an integer from 1 to 100';
      throw new MailroomError('VALIDATION_FAILED', message, {
        issues: [{ code: 'invalid_type', path: ['limit'], message }],
      });
    }
    const before = query.get('before');
    const page = await mailroom.receiving.listMessages(auth, {
      ...(before ? { before } : {}),
      ...(n !== undefined ? { limit: n } : {}),
    });
    return successResponse(requestId, 'Received messages', { messages: page.items, nextCursor: page.next });
  },

  async 'inbound-message'({ mailroom, auth, requestId, params }) {
    const message = await mailroom.receiving.getMessage(auth, params.id ?? '');
    return successResponse(requestId, 'Received message', { message });
  },
} satisfies Record<ReceivingRouteName, (call: ProjectCall) => Promise<NeutralResponse>>;
