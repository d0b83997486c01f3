import { automationsView, workflowView } from '../automation-views.js';
import { type AreaDeps, type AreaRoutes, allowed, ctxOf, GET, page } from '../dashboard-call.js';
import { queryOf } from '../dashboard-http.js';

/** The automations (issue 39): the workflows, with one contact's runs on `?contact=`; one workflow and its runs. */
export function createAutomationRoutes({ mailroom }: AreaDeps): AreaRoutes {
  return new Map([
    [
      'automations',
      (call, auth) => {
        const [, id] = call.segments;
        if (id === undefined) {
          return allowed(call, GET, async () =>
            page(call, 200, await automationsView(mailroom, auth, ctxOf(call), queryOf(call.req))),
          );
        }
        if (call.segments.length !== 2) return undefined;
        return allowed(call, GET, async () =>
          page(call, 200, await workflowView(mailroom, auth, ctxOf(call), id, queryOf(call.req))),
        );
      },
    ],
  ]);
}
