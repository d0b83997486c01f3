import type { AuthContext } from '@mailroom/core';
import type { NeutralResponse } from '../../neutral/types.js';
import {
  type AreaDeps,
  type AreaRoutes,
  allowed,
  type Call,
  ctxOf,
  GET,
  POST,
  page,
} from '../dashboard-call.js';
import { queryOf, redirect } from '../dashboard-http.js';
import { webhooksPage } from '../pages/webhooks-page.js';

/** The webhooks: the endpoints with their attempts and failed messages, and the forms that test, switch and replay. */
export function createWebhookRoutes({ mailroom, logger }: AreaDeps): AreaRoutes {
  async function webhooks(call: Call, auth: AuthContext): Promise<NeutralResponse> {
    const [endpoints, attempts, failed] = await Promise.all([
      mailroom.webhooks.list(auth),
      mailroom.webhooks.attempts(auth, { limit: 50 }),
      mailroom.webhooks.messages(auth, { status: 'failed', limit: 50 }),
    ]);
    const done = queryOf(call.req).get('done');
    const notice =
      done === 'test'
        ? 'Test event queued.'
        : done === 'replay'
          ? 'Message queued to be sent again.'
          : done === 'enable'
            ? 'Endpoint enabled.'
            : done === 'disable'
              ? 'Endpoint disabled: new events are not sent to it.'
              : undefined;
    return page(
      call,
      200,
      webhooksPage(ctxOf(call), { endpoints, attempts, failed, ...(notice ? { notice } : {}) }),
    );
  }

  async function webhookTest(call: Call, auth: AuthContext, id: string): Promise<NeutralResponse> {
    await mailroom.webhooks.sendTest(auth, id);
    return redirect(call.requestId, `${call.root}/webhooks?done=test`);
  }

  async function webhookSetEnabled(
    call: Call,
    auth: AuthContext,
    id: string,
    enabled: boolean,
  ): Promise<NeutralResponse> {
    await mailroom.webhooks.setEnabled(auth, id, enabled);
    logger.info(
      { requestId: call.requestId, projectId: auth.project.id, endpoint: id, enabled },
      'mailroom dashboard: webhook endpoint switched',
    );
    return redirect(call.requestId, `${call.root}/webhooks?done=${enabled ? 'enable' : 'disable'}`);
  }

  async function webhookReplay(call: Call, auth: AuthContext, messageId: string): Promise<NeutralResponse> {
    await mailroom.webhooks.replay(auth, messageId);
    logger.info(
      { requestId: call.requestId, projectId: auth.project.id, messageId },
      'mailroom dashboard: webhook replayed',
    );
    return redirect(call.requestId, `${call.root}/webhooks?done=replay`);
  }

  return new Map([
    [
      'webhooks',
      (call, auth) => {
        const { segments } = call;
        const [, ref = '', action = ''] = segments;
        if (segments.length === 1) return allowed(call, GET, () => webhooks(call, auth));
        if (segments.length === 3 && action === 'test')
          return allowed(call, POST, () => webhookTest(call, auth, ref));
        if (segments.length === 3 && (action === 'enable' || action === 'disable'))
          return allowed(call, POST, () => webhookSetEnabled(call, auth, ref, action === 'enable'));
        if (segments.length === 4 && ref === 'messages' && segments[3] === 'replay')
          return allowed(call, POST, () => webhookReplay(call, auth, action));
        return undefined;
      },
    ],
  ]);
}
