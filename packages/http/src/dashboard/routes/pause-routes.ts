import { type AreaDeps, type AreaRoutes, allowed, ctxOf, GET, POST, page } from '../dashboard-call.js';
import { queryOf, readForm, redirect } from '../dashboard-http.js';
import { pausesPage } from '../pages/pauses-page.js';

/** The project's pauses of sending, and the forms that add and end them (a broadcast's own are on its page). */
export function createPauseRoutes({ pauseActions }: AreaDeps): AreaRoutes {
  return new Map([
    [
      'pauses',
      (call, auth) => {
        const { segments } = call;
        if (segments.length === 1) {
          return allowed(call, GET, async () => {
            const notice = pauseActions.notice(queryOf(call.req).get('done'));
            const list = await pauseActions.list(auth);
            return page(call, 200, pausesPage(ctxOf(call), { pauses: list, ...(notice ? { notice } : {}) }));
          });
        }
        if (segments.length !== 3) return undefined;
        const [what = '', verb = ''] = segments.slice(1);
        return allowed(call, POST, async () =>
          redirect(
            call.requestId,
            await pauseActions.project(auth, what, verb, readForm(call.req), call.root),
          ),
        );
      },
    ],
  ]);
}
