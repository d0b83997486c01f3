import {
  isMailroomError,
  type Mailroom,
  MailroomError,
  type ReceivingRouteInput,
  type ReceivingSettingsInput,
} from '@mailroom/core';
import { errorResponse, successResponse } from '../neutral/responses.js';
import type { NeutralResponse } from '../neutral/types.js';
import type { ProjectCall } from './event-routes.js';
import type { RouteName } from './routes.js';

/** The routes this module serves, all with a project key. */
export type ReceivingRouteName = Extract<
  RouteName,
  'inbound-routes' | 'inbound-route' | 'inbound-messages' | 'inbound-message' | 'inbound-settings'
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

  async 'inbound-settings'({ mailroom, auth, req, requestId, readJson }) {
    if (req.method !== 'PATCH') {
      return successResponse(requestId, 'Receiving settings', {
        settings: await mailroom.receiving.getSettings(auth),
      });
    }
    const settings = await mailroom.receiving.updateSettings(auth, readJson() as ReceivingSettingsInput);
    return successResponse(requestId, 'Receiving settings updated', { settings });
  },
} satisfies Record<ReceivingRouteName, (call: ProjectCall) => Promise<NeutralResponse>>;

/**
 * `GET /inbound/attachments/:token`: an attachment's bytes, as received. No key: the token is signed and
 * expires (receiving/attachment-token.ts); an edited or expired token, or a message deleted since
 * (retention, erasure), is 404. Served as a download, never rendered in the API's origin.
 */
export async function inboundAttachmentResponse(
  mailroom: Mailroom,
  requestId: string,
  token: string,
): Promise<NeutralResponse> {
  try {
    const found = await mailroom.receiving.attachment(token);
    const bytes = Buffer.from(found.content.buffer, found.content.byteOffset, found.content.byteLength);
    const name = (found.filename ?? 'attachment').replace(/[^\x20-\x7e]|["\\]/g, '_');
    return {
      status: 200,
      headers: {
        'content-type': found.content_type,
        'content-length': String(bytes.length),
        'content-disposition': `attachment; filename="${name}"; filename*=UTF-8''${encodeURIComponent(found.filename ?? 'attachment')}`,
        'x-content-type-options': 'nosniff',
        'cache-control': 'private, no-store',
        'x-request-id': requestId,
      },
      body: '',
      bytes,
    };
  } catch (error) {
    if (isMailroomError(error) && error.status < 500) return errorResponse(requestId, error);
    throw error;
  }
}
