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
import { queryOf, readForm, redirect } from '../dashboard-http.js';
import {
  inboundMessageView,
  inboundSettingsView,
  inboundView,
  saveInboundSettings,
} from '../inbound-views.js';

/**
 * The inbound mail (issue 40): the routes with a page of received messages; the project's receiving
 * settings (and the form that changes them); one received message.
 */
export function createInboundRoutes({ mailroom, logger }: AreaDeps): AreaRoutes {
  async function settings(call: Call, auth: AuthContext): Promise<NeutralResponse> {
    if (call.method !== 'POST') {
      const notice = queryOf(call.req).get('done') === 'save' ? 'Settings saved.' : undefined;
      return page(call, 200, await inboundSettingsView(mailroom, auth, ctxOf(call), notice));
    }
    const refused = await saveInboundSettings(mailroom, auth, ctxOf(call), readForm(call.req));
    if (refused) return page(call, 422, refused);
    logger.info(
      { requestId: call.requestId, projectId: auth.project.id },
      'mailroom dashboard: receiving settings saved',
    );
    return redirect(call.requestId, `${call.root}/inbound/settings?done=save`);
  }

  return new Map([
    [
      'inbound',
      (call, auth) => {
        const [, id] = call.segments;
        if (id === undefined) {
          return allowed(call, GET, async () =>
            page(call, 200, await inboundView(mailroom, auth, ctxOf(call), queryOf(call.req))),
          );
        }
        if (call.segments.length !== 2) return undefined;
        // Message ids start with `inm_`: `settings` is never one.
        if (id === 'settings') return allowed(call, [...GET, ...POST], () => settings(call, auth));
        return allowed(call, GET, async () =>
          page(call, 200, await inboundMessageView(mailroom, auth, ctxOf(call), id)),
        );
      },
    ],
  ]);
}
