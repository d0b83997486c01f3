import type { AuthContext } from '@mailroom/core';
import { isMailroomError } from '@mailroom/core';
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
import { audiencePage } from '../pages/audience-page.js';
import { suppressionsPage } from '../pages/suppressions-page.js';
import { type ContactConsent, topicsPage } from '../pages/topics-page.js';

/**
 * The audience: its groups, the topics with one contact's states and consent timeline, and the
 * suppressions with the form that lifts one.
 */
export function createAudienceRoutes({ mailroom, logger }: AreaDeps): AreaRoutes {
  /** The project's topics and, with `?address=`, that contact's states and consent timeline (issue 38). */
  async function topics(call: Call, auth: AuthContext): Promise<NeutralResponse> {
    const q = queryOf(call.req);
    const address = (q.get('address') ?? '').trim().slice(0, 320);
    let contact: ContactConsent | null = null;
    if (address !== '') {
      const [states, history] = await Promise.all([
        mailroom.topics.contactTopics(auth, address).catch((error: unknown) => {
          if (isMailroomError(error) && error.code === 'NOT_FOUND') return null;
          throw error;
        }),
        mailroom.topics.history(auth, address, { after: q.get('after') || null, limit: 100 }),
      ]);
      contact = { address, topics: states, history: history.data, next: history.next };
    }
    return page(call, 200, topicsPage(ctxOf(call), await mailroom.topics.list(auth), contact));
  }

  async function suppressions(call: Call, auth: AuthContext): Promise<NeutralResponse> {
    const search = queryOf(call.req);
    const q = search.get('q') ?? '';
    const cursor = search.get('cursor') ?? '';
    const list = await mailroom.suppressions.list(auth, { q, ...(cursor ? { after: cursor } : {}) });
    const lifted = search.get('lifted');
    return page(
      call,
      200,
      suppressionsPage(ctxOf(call), {
        items: list.items,
        q,
        next: list.next,
        paged: cursor !== '',
        ...(lifted ? { notice: `Lifted: ${lifted} may be mailed again.` } : {}),
      }),
    );
  }

  async function liftSuppression(call: Call, auth: AuthContext): Promise<NeutralResponse> {
    const address = readForm(call.req).get('address') ?? '';
    await mailroom.suppressions.lift(auth, address);
    logger.info(
      { requestId: call.requestId, projectId: auth.project.id, address },
      'mailroom dashboard: suppression lifted',
    );
    return redirect(call.requestId, `${call.root}/suppressions?lifted=${encodeURIComponent(address)}`);
  }

  return new Map([
    [
      'audience',
      (call, auth) =>
        call.segments.length === 1
          ? allowed(call, GET, async () =>
              page(call, 200, audiencePage(ctxOf(call), await mailroom.listGroups(auth))),
            )
          : undefined,
    ],
    [
      'topics',
      (call, auth) => (call.segments.length === 1 ? allowed(call, GET, () => topics(call, auth)) : undefined),
    ],
    [
      'suppressions',
      (call, auth) => {
        if (call.segments.length === 1) return allowed(call, GET, () => suppressions(call, auth));
        if (call.segments.length === 2 && call.segments[1] === 'lift')
          return allowed(call, POST, () => liftSuppression(call, auth));
        return undefined;
      },
    ],
  ]);
}
