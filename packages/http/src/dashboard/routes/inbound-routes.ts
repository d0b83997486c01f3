import { type AreaDeps, type AreaRoutes, allowed, ctxOf, GET, page } from '../dashboard-call.js';
import { queryOf } from '../dashboard-http.js';
import { inboundMessageView, inboundView } from '../inbound-views.js';

/** The inbound mail (issue 40): the routes with a page of received messages; one received message. */
export function createInboundRoutes({ mailroom }: AreaDeps): AreaRoutes {
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
        return allowed(call, GET, async () =>
          page(call, 200, await inboundMessageView(mailroom, auth, ctxOf(call), id)),
        );
      },
    ],
  ]);
}
