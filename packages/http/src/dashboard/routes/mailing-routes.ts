import type { AuthContext, DeliveryStatus, MailingKind } from '@mailroom/core';
import { isMailroomError, MailroomError } from '@mailroom/core';
import type { NeutralResponse } from '../../neutral/types.js';
import { destinationParam } from '../activity-destination.js';
import {
  type AreaDeps,
  type AreaRoutes,
  allowed,
  type Call,
  ctxOf,
  GET,
  type PageRoute,
  POST,
  page,
  textDocument,
} from '../dashboard-call.js';
import { jsonData, previewDocument, queryOf, readForm, redirect } from '../dashboard-http.js';
import { DELIVERY_STATUS_ORDER, progressOf } from '../fragments.js';
import { repliesOf } from '../inbound-views.js';
import { deliveryPage } from '../pages/delivery-page.js';
import { mailingPage } from '../pages/mailing-page.js';
import { mailingsPage } from '../pages/mailings-page.js';
import { broadcastPauseControls } from '../pages/pauses-page.js';
import { mailingUrl } from '../urls.js';

/** How far back the broadcasts page counts the project's bounces by destination. */
const RECENT_BOUNCES_MS = 7 * 24 * 3600 * 1000;

/**
 * The broadcasts and messages: their lists (the broadcasts' with the project's recent bounces and
 * activity), one mailing with its deliveries, one delivery and its preview, the progress a page polls,
 * and a broadcast's cancel, pause and resume forms.
 */
export function createMailingRoutes({ mailroom, logger, pauseActions }: AreaDeps): AreaRoutes {
  function routeOf(kind: MailingKind): PageRoute {
    return (call, auth) => {
      const [, ref, action] = call.segments;
      if (ref === undefined) return allowed(call, GET, () => mailingList(call, auth, kind));
      if (call.segments.length > 3) return undefined;
      if (action === undefined) return allowed(call, GET, () => mailingDetail(call, auth, kind, ref));
      if (action === 'progress.json') return allowed(call, GET, () => progress(call, auth, kind, ref));
      if (action === 'delivery') return allowed(call, GET, () => delivery(call, auth, kind, ref));
      if (action === 'preview') return allowed(call, GET, () => deliveryPreview(call, auth, kind, ref));
      if (action === 'cancel' && kind === 'broadcast')
        return allowed(call, POST, () => cancel(call, auth, ref));
      if ((action === 'pause' || action === 'resume') && kind === 'broadcast') {
        return allowed(call, POST, async () =>
          redirect(
            call.requestId,
            await pauseActions.broadcast(auth, ref, action, readForm(call.req), call.root),
          ),
        );
      }
      return undefined;
    };
  }

  async function mailingList(call: Call, auth: AuthContext, kind: MailingKind): Promise<NeutralResponse> {
    const after = queryOf(call.req).get('after') || undefined;
    const overview = kind === 'broadcast' && !after;
    const destination = destinationParam(queryOf(call.req));
    const [list, bounces, activity] = await Promise.all([
      mailroom.listMailings(auth, kind, after ? { after, limit: 25 } : { limit: 25 }),
      overview
        ? mailroom.bouncesByDomain(auth, { since: new Date(Date.now() - RECENT_BOUNCES_MS), limit: 10 })
        : Promise.resolve([]),
      overview ? mailroom.activity(auth, destination ? { destination } : {}) : Promise.resolve(undefined),
    ]);
    return page(call, 200, mailingsPage(ctxOf(call), kind, list, after !== undefined, bounces, activity));
  }

  async function mailingDetail(
    call: Call,
    auth: AuthContext,
    kind: MailingKind,
    ref: string,
  ): Promise<NeutralResponse> {
    const view = await mailingOfKind(auth, kind, ref);
    const q = queryOf(call.req);
    const status = q.get('status') ?? '';
    const filter = {
      prefix: (q.get('q') ?? '').slice(0, 254),
      status: (DELIVERY_STATUS_ORDER as readonly string[]).includes(status)
        ? (status as DeliveryStatus)
        : undefined,
      after: q.get('after') || undefined,
    };
    const [sources, deliveries, tracking, bounces, activity, replies] = await Promise.all([
      kind === 'broadcast' ? mailroom.listSourceJobs(auth, ref) : Promise.resolve([]),
      mailroom.searchDeliveries(auth, ref, {
        prefix: filter.prefix,
        limit: 50,
        ...(filter.status ? { status: filter.status } : {}),
        ...(filter.after ? { after: filter.after } : {}),
      }),
      mailroom.getTracking(auth, ref),
      mailroom.bouncesByDomain(auth, { ref, limit: 20 }),
      mailroom.activity(auth, { mailingRef: ref }),
      repliesOf(mailroom, auth, ctxOf(call), ref),
    ]);
    const pauseControls =
      kind === 'broadcast'
        ? broadcastPauseControls(
            ctxOf(call),
            view,
            await pauseActions.list(auth),
            pauseActions.notice(q.get('done')),
          )
        : undefined;
    return page(
      call,
      200,
      mailingPage(
        ctxOf(call),
        view,
        sources,
        deliveries,
        filter,
        tracking,
        bounces,
        activity,
        pauseControls,
        replies,
      ),
    );
  }

  async function progress(
    call: Call,
    auth: AuthContext,
    kind: MailingKind,
    ref: string,
  ): Promise<NeutralResponse> {
    return jsonData(200, call.requestId, progressOf(await mailingOfKind(auth, kind, ref)));
  }

  async function delivery(
    call: Call,
    auth: AuthContext,
    kind: MailingKind,
    ref: string,
  ): Promise<NeutralResponse> {
    const view = await mailingOfKind(auth, kind, ref);
    const found = await deliveryOf(call, auth, ref);
    const [events, signals, tracking] = await Promise.all([
      mailroom.listEvents(auth, { mailingRef: ref, address: found.address, limit: 100 }),
      mailroom.listInboundSignals(auth, ref, found.address),
      mailroom.getDeliveryTracking(auth, ref, found.address),
    ]);
    return page(call, 200, deliveryPage(ctxOf(call), view, found, events.items, signals, tracking));
  }

  async function deliveryPreview(
    call: Call,
    auth: AuthContext,
    kind: MailingKind,
    ref: string,
  ): Promise<NeutralResponse> {
    await mailingOfKind(auth, kind, ref);
    const content = (await deliveryOf(call, auth, ref)).content;
    if (!content) throw new MailroomError('NOT_FOUND', 'No content was kept for this delivery');
    return previewDocument(call.requestId, content.html ?? textDocument(content.text));
  }

  async function cancel(call: Call, auth: AuthContext, ref: string): Promise<NeutralResponse> {
    await mailingOfKind(auth, 'broadcast', ref);
    await mailroom.cancel(auth, ref);
    logger.info(
      { requestId: call.requestId, projectId: auth.project.id, ref },
      'mailroom dashboard: broadcast cancelled',
    );
    return redirect(call.requestId, mailingUrl(call.root, 'broadcast', ref));
  }

  async function mailingOfKind(auth: AuthContext, kind: MailingKind, ref: string) {
    const view = await mailroom.getMailing(auth, ref);
    // A message's ref under /broadcasts (or the reverse) is as absent as another project's ref.
    if (view.kind !== kind) throw new MailroomError('NOT_FOUND', `${ref} not found`);
    return view;
  }

  async function deliveryOf(call: Call, auth: AuthContext, ref: string) {
    const address = queryOf(call.req).get('address') ?? '';
    try {
      return await mailroom.getDelivery(auth, ref, address);
    } catch (error) {
      // A malformed address names no delivery: the same answer as an unknown one.
      if (isMailroomError(error, 'VALIDATION_FAILED'))
        throw new MailroomError('NOT_FOUND', 'No such delivery');
      throw error;
    }
  }

  return new Map([
    ['broadcasts', routeOf('broadcast')],
    ['messages', routeOf('message')],
  ]);
}
