import type { AuthContext, DeliveryStatus, Logger, MailingKind, Mailroom, Variables } from '@mailroom/core';
import { ERROR_CODES, isMailroomError, MailroomError } from '@mailroom/core';
import type { AuthFailureLimit } from '../limits/auth-failure-limit.js';
import type { NeutralRequest, NeutralResponse } from '../neutral/types.js';
import { errorPage } from '../pages/error-page.js';
import { escapeHtml, html, type SafeHtml } from '../pages/html.js';
import { isScopeRefusal, requireScope } from '../routes/route-access.js';
import { destinationParam } from './activity-destination.js';
import { automationsView, workflowView } from './automation-views.js';
import {
  checkSameOrigin,
  htmlPage,
  isHttps,
  jsonData,
  newNonce,
  previewDocument,
  queryOf,
  readCookie,
  readForm,
  redirect,
  SESSION_COOKIE,
  sessionCookie,
} from './dashboard-http.js';
import type { ResolvedDashboardOptions } from './dashboard-options.js';
import { DELIVERY_STATUS_ORDER, progressOf } from './fragments.js';
import { inboundMessageView, inboundView, repliesOf } from './inbound-views.js';
import { frameOf, type PageContext } from './layout.js';
import { audiencePage } from './pages/audience-page.js';
import { deliveryPage } from './pages/delivery-page.js';
import { domainsPage } from './pages/domains-page.js';
import { keysPage } from './pages/keys-page.js';
import { mailingPage } from './pages/mailing-page.js';
import { mailingsPage } from './pages/mailings-page.js';
import { broadcastPauseControls, pausesPage } from './pages/pauses-page.js';
import { signInPage } from './pages/sign-in-page.js';
import { suppressionsPage } from './pages/suppressions-page.js';
import { type TemplateSampleForm, templatePage, templatesPage } from './pages/templates-page.js';
import { type ContactConsent, topicsPage } from './pages/topics-page.js';
import { webhooksPage } from './pages/webhooks-page.js';
import { createPauseActions } from './pause-actions.js';
import { createSessionStore, type DashboardSession, isCsrfToken } from './session-store.js';
import { mailingUrl } from './urls.js';

/** The dashboard of one HTTP handler. */
export interface Dashboard {
  /** Its path relative to the mount point (`/dashboard`). */
  readonly prefix: string;
  /** Whether `path` (relative to the mount point) is the dashboard's. */
  owns(path: string): boolean;
  /** Answers a request for one of its paths. Never rejects: refusals and faults become pages. */
  handle(req: NeutralRequest, requestId: string): Promise<NeutralResponse>;
}

/** One request being answered. */
interface Call {
  req: NeutralRequest;
  requestId: string;
  nonce: string;
  /** The dashboard's URL root: mount point and prefix. */
  root: string;
  /** GET for HEAD: the same answer, without its body. */
  method: string;
  segments: string[];
  /** Set once the session is known, so that error pages keep the navigation. */
  ctx?: PageContext;
  /** The answer is read by a script or a frame, not a person: refusals as JSON. */
  machine: boolean;
}

const GET = ['GET', 'HEAD'] as const;
/** How far back the broadcasts page counts the project's bounces by destination. */
const RECENT_BOUNCES_MS = 7 * 24 * 3600 * 1000;
const POST = ['POST'] as const;

const DEFAULT_SAMPLE: TemplateSampleForm = {
  variables: '{}',
  name: 'Ada Lovelace',
  address: 'ada@example.com',
};

/**
 * The project dashboard: server-rendered pages over the engine's read methods, each scoped to the project
 * whose secret signed in (docs/architecture.md, invariant 4). The session cookie holds a random id only;
 * every form that changes something carries the session's CSRF token and must come from the dashboard's
 * own origin.
 */
export function createDashboard(
  mailroom: Mailroom,
  options: ResolvedDashboardOptions,
  logger: Logger,
  failures: AuthFailureLimit | null = null,
): Dashboard {
  const { prefix } = options;
  const sessions = createSessionStore({ ttlMs: options.sessionTtlMs, maxSessions: options.maxSessions });
  const pauseActions = createPauseActions(mailroom, logger);

  async function route(call: Call): Promise<NeutralResponse> {
    const { segments, method, req } = call;
    const [first, ref, action] = segments;
    if (segments.length === 0) {
      allow(call, GET);
      return redirect(call.requestId, `${call.root}/${currentSession(req) ? 'broadcasts' : 'sign-in'}`);
    }
    if (first === 'sign-in' && segments.length === 1) {
      allow(call, [...GET, ...POST]);
      return method === 'POST' ? signIn(call) : page(call, 200, signInPage(call.nonce, call.root));
    }
    if (first === 'sign-out' && segments.length === 1) {
      allow(call, POST);
      return signOut(call);
    }
    call.machine = action === 'progress.json' || action === 'preview';
    let session = currentSession(req);
    if (session && !(await keyStillWorks(session.auth))) {
      // Signed in with a key since revoked or expired: the session ends with it.
      sessions.delete(readCookie(req, SESSION_COOKIE));
      session = undefined;
    }
    if (!session) {
      if (call.machine) throw new MailroomError('UNAUTHORIZED', 'Not signed in');
      return redirect(call.requestId, `${call.root}/sign-in`);
    }
    call.ctx = {
      root: call.root,
      projectName: session.auth.project.name,
      csrfToken: session.csrfToken,
      nonce: call.nonce,
    };
    const auth = session.auth;
    if (method === 'POST') {
      checkForm(req, session);
      // Every form changes something: the API's rule for changes (a `full` key), from the one place it is written.
      requireScope(auth, 'full');
    }

    if ((first === 'broadcasts' || first === 'messages') && ref !== undefined && segments.length <= 3) {
      const kind: MailingKind = first === 'broadcasts' ? 'broadcast' : 'message';
      if (action === undefined) return allowed(call, GET, () => mailingDetail(call, auth, kind, ref));
      if (action === 'progress.json') return allowed(call, GET, () => progress(call, auth, kind, ref));
      if (action === 'delivery') return allowed(call, GET, () => delivery(call, auth, kind, ref));
      if (action === 'preview') return allowed(call, GET, () => deliveryPreview(call, auth, kind, ref));
      if (action === 'cancel' && kind === 'broadcast')
        return allowed(call, POST, () => cancel(call, auth, ref));
      if ((action === 'pause' || action === 'resume') && kind === 'broadcast') {
        return allowed(call, POST, async () =>
          redirect(call.requestId, await pauseActions.broadcast(auth, ref, action, readForm(req), call.root)),
        );
      }
    }
    if (segments.length === 1) {
      if (first === 'broadcasts') return allowed(call, GET, () => mailingList(call, auth, 'broadcast'));
      if (first === 'messages') return allowed(call, GET, () => mailingList(call, auth, 'message'));
      if (first === 'templates') {
        return allowed(call, GET, async () =>
          page(call, 200, templatesPage(ctxOf(call), await mailroom.listTemplates(auth))),
        );
      }
      if (first === 'audience') {
        return allowed(call, GET, async () =>
          page(call, 200, audiencePage(ctxOf(call), await mailroom.listGroups(auth))),
        );
      }
      if (first === 'topics') return allowed(call, GET, () => topics(call, auth));
      if (first === 'automations') {
        return allowed(call, GET, async () =>
          page(call, 200, await automationsView(mailroom, auth, ctxOf(call), queryOf(req))),
        );
      }
      if (first === 'inbound') {
        return allowed(call, GET, async () =>
          page(call, 200, await inboundView(mailroom, auth, ctxOf(call), queryOf(req))),
        );
      }
    }
    if (segments.length === 2 && ref !== undefined && (first === 'automations' || first === 'inbound')) {
      return allowed(call, GET, async () =>
        page(
          call,
          200,
          first === 'automations'
            ? await workflowView(mailroom, auth, ctxOf(call), ref, queryOf(req))
            : await inboundMessageView(mailroom, auth, ctxOf(call), ref),
        ),
      );
    }
    if (first === 'webhooks') {
      if (segments.length === 1) return allowed(call, GET, () => webhooks(call, auth));
      if (segments.length === 3 && action === 'test')
        return allowed(call, POST, () => webhookTest(call, auth, ref ?? ''));
      if (segments.length === 3 && (action === 'enable' || action === 'disable'))
        return allowed(call, POST, () => webhookSetEnabled(call, auth, ref ?? '', action === 'enable'));
      if (segments.length === 4 && ref === 'messages' && segments[3] === 'replay')
        return allowed(call, POST, () => webhookReplay(call, auth, action ?? ''));
    }
    if (first === 'keys') {
      if (segments.length === 1) return allowed(call, GET, () => keys(call, auth));
      if (segments.length === 3 && action === 'revoke')
        return allowed(call, POST, () => keyRevoke(call, auth, ref ?? ''));
    }
    if (first === 'suppressions') {
      if (segments.length === 1) return allowed(call, GET, () => suppressions(call, auth));
      if (segments.length === 2 && ref === 'lift')
        return allowed(call, POST, () => liftSuppression(call, auth));
    }
    if (first === 'pauses') {
      if (segments.length === 1) return allowed(call, GET, () => pauses(call, auth));
      if (segments.length === 3) {
        const [what = '', verb = ''] = segments.slice(1);
        return allowed(call, POST, async () =>
          redirect(call.requestId, await pauseActions.project(auth, what, verb, readForm(req), call.root)),
        );
      }
    }
    if (first === 'domains') {
      if (segments.length === 1) return allowed(call, GET, () => domains(call, auth));
      if (segments.length === 3 && action === 'verify')
        return allowed(call, POST, () => domainVerify(call, auth, ref ?? ''));
    }
    if (first === 'templates' && ref !== undefined) {
      if (segments.length === 2) return allowed(call, GET, () => template(call, auth, ref));
      if (action === 'preview' && segments.length === 3)
        return allowed(call, GET, () => templatePreview(call, auth, ref));
    }
    throw new MailroomError('NOT_FOUND', 'No such page');
  }

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

  /** Whether the key a session signed in with still authenticates (one read by id; no key: an in-process caller). */
  async function keyStillWorks(auth: AuthContext): Promise<boolean> {
    if (!auth.key) return true;
    const key = await mailroom.store.getKey(auth.project.id, auth.key.id);
    return !!key && !key.revokedAt && !(key.expiresAt && key.expiresAt.getTime() <= Date.now());
  }

  function currentSession(req: NeutralRequest): DashboardSession | undefined {
    return sessions.get(readCookie(req, SESSION_COOKIE));
  }

  /** A form that changes something: from this origin, with this session's token. */
  function checkForm(req: NeutralRequest, session: DashboardSession): void {
    checkSameOrigin(req);
    if (!isCsrfToken(session, readForm(req).get('_csrf'))) {
      throw new MailroomError('FORBIDDEN', 'The form does not carry this session’s token');
    }
  }

  async function signIn(call: Call): Promise<NeutralResponse> {
    const { req } = call;
    checkSameOrigin(req);
    const secret = readForm(req).get('secret')?.trim() ?? '';
    let auth: AuthContext;
    try {
      // The API's limit of wrong keys, counted together: a guesser gains nothing by switching to the form.
      auth = failures
        ? await failures.guard(req.ip ?? 'unknown', secret, () => mailroom.authenticate(secret))
        : await mailroom.authenticate(secret);
    } catch (error) {
      if (isMailroomError(error, 'RATE_LIMITED')) {
        logger.warn({ requestId: call.requestId, ip: req.ip }, 'mailroom dashboard: sign-in limited');
        return htmlPage(
          error.status,
          call.requestId,
          call.nonce,
          signInPage(call.nonce, call.root, 'Too many wrong secrets from here: wait a minute and retry.'),
          { 'retry-after': String(error.retryAfter ?? 60) },
        );
      }
      if (!isMailroomError(error, 'UNAUTHORIZED')) throw error;
      logger.warn({ requestId: call.requestId, ip: req.ip }, 'mailroom dashboard: sign-in refused');
      return page(
        call,
        error.status,
        signInPage(call.nonce, call.root, 'That is not a valid project secret.'),
      );
    }
    try {
      // The dashboard shows the project's reads: a `sending` key may not sign in.
      requireScope(auth, 'read');
    } catch (error) {
      if (!isScopeRefusal(error)) throw error;
      return page(
        call,
        error.status,
        signInPage(call.nonce, call.root, 'A sending key cannot sign in: use a full or read key.'),
      );
    }
    // A fresh id on every sign-in: a cookie planted before it (session fixation) is worth nothing after.
    sessions.delete(readCookie(req, SESSION_COOKIE));
    const { id } = sessions.create(auth);
    logger.info(
      { requestId: call.requestId, projectId: auth.project.id, ip: req.ip },
      'mailroom dashboard: signed in',
    );
    return redirect(call.requestId, `${call.root}/broadcasts`, {
      'set-cookie': sessionCookie(id, cookiePath(call), secureCookie(req)),
    });
  }

  function signOut(call: Call): NeutralResponse {
    const { req } = call;
    const id = readCookie(req, SESSION_COOKIE);
    const session = sessions.get(id);
    if (session) checkForm(req, session);
    sessions.delete(id);
    return redirect(call.requestId, `${call.root}/sign-in`, {
      'set-cookie': sessionCookie('', cookiePath(call), secureCookie(req), 0),
    });
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

  async function pauses(call: Call, auth: AuthContext): Promise<NeutralResponse> {
    const notice = pauseActions.notice(queryOf(call.req).get('done'));
    const list = await pauseActions.list(auth);
    return page(call, 200, pausesPage(ctxOf(call), { pauses: list, ...(notice ? { notice } : {}) }));
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

  async function keys(call: Call, auth: AuthContext): Promise<NeutralResponse> {
    const notice =
      queryOf(call.req).get('done') === 'revoke' ? 'Key revoked: it answers 401 from now on.' : undefined;
    return page(
      call,
      200,
      keysPage(ctxOf(call), {
        keys: await mailroom.keys.list(auth),
        currentKeyId: auth.key?.id,
        ...(notice ? { notice } : {}),
      }),
    );
  }

  async function keyRevoke(call: Call, auth: AuthContext, id: string): Promise<NeutralResponse> {
    await mailroom.keys.revoke(auth, id);
    logger.info({ projectId: auth.project.id, keyId: id }, 'mailroom dashboard: key revoked');
    return redirect(call.requestId, `${call.root}/keys?done=revoke`);
  }

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

  async function domains(call: Call, auth: AuthContext): Promise<NeutralResponse> {
    const [list, warnings] = await Promise.all([
      mailroom.listDomains(auth),
      mailroom.listDomainWarnings(auth),
    ]);
    const checked = queryOf(call.req).get('checked');
    const notice = checked ? `Checked ${checked}.` : undefined;
    return page(
      call,
      200,
      domainsPage(ctxOf(call), { domains: list, warnings, ...(notice ? { notice } : {}) }),
    );
  }

  async function domainVerify(call: Call, auth: AuthContext, name: string): Promise<NeutralResponse> {
    const checked = await mailroom.verifyDomain(auth, name);
    return redirect(call.requestId, `${call.root}/domains?checked=${encodeURIComponent(checked.domain)}`);
  }

  async function template(call: Call, auth: AuthContext, ref: string): Promise<NeutralResponse> {
    const view = await mailroom.getTemplate(auth, ref);
    const sample = sampleOf(call.req);
    let rendered: Awaited<ReturnType<Mailroom['previewTemplate']>> | { error: string };
    try {
      rendered = await mailroom.previewTemplate(auth, ref, parseSample(sample));
    } catch (error) {
      if (!isMailroomError(error) || error.status >= 500 || error.code === 'NOT_FOUND') throw error;
      rendered = { error: error.message };
    }
    return page(call, 200, templatePage(ctxOf(call), view, sample, rendered));
  }

  async function templatePreview(call: Call, auth: AuthContext, ref: string): Promise<NeutralResponse> {
    await mailroom.getTemplate(auth, ref);
    try {
      const rendered = await mailroom.previewTemplate(auth, ref, parseSample(sampleOf(call.req)));
      return previewDocument(call.requestId, rendered.html ?? textDocument(rendered.text));
    } catch (error) {
      if (!isMailroomError(error) || error.status >= 500 || error.code === 'NOT_FOUND') throw error;
      return { ...previewDocument(call.requestId, textDocument(error.message)), status: error.status };
    }
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

  function page(call: Call, status: number, body: SafeHtml): NeutralResponse {
    return htmlPage(status, call.requestId, call.nonce, body);
  }

  function failure(call: Call, error: unknown): NeutralResponse {
    const known = isMailroomError(error) && error.status < 500;
    const status = known ? error.status : ERROR_CODES.INTERNAL.status;
    if (!known) {
      // Never the headers (cookie) nor the body (a secret, on sign-in).
      logger.error(
        { requestId: call.requestId, method: call.req.method, path: call.req.path, err: describe(error) },
        'mailroom dashboard: request failed',
      );
    }
    const extra: Record<string, string> = {};
    if (error instanceof MethodNotAllowed) extra.allow = error.allow.join(', ');
    if (call.machine) {
      const res = jsonData(status, call.requestId, {
        code: known ? error.code : 'INTERNAL',
        statusCode: status,
      });
      return { ...res, headers: { ...res.headers, ...extra } };
    }
    return htmlPage(
      status,
      call.requestId,
      call.nonce,
      // A scope refusal says which scope the action needs; other refusals keep their fixed words.
      errorPage(frameOf(call.nonce, call.ctx), status, call.requestId, {
        text: isScopeRefusal(error) ? error.message : undefined,
        after: call.ctx && html`<p><a href="${call.ctx.root}/broadcasts">Back to the broadcasts</a></p>`,
      }),
      extra,
    );
  }

  function cookiePath(call: Call): string {
    return call.root === '' ? '/' : call.root;
  }

  function secureCookie(req: NeutralRequest): boolean {
    return options.secureCookie === 'auto' ? isHttps(req) : options.secureCookie;
  }

  return {
    prefix,
    owns: (path) => path === prefix || path.startsWith(`${prefix}/`),
    async handle(req, requestId) {
      const call: Call = {
        req,
        requestId,
        nonce: newNonce(),
        root: `${(req.base ?? '').replace(/\/+$/, '')}${prefix}`,
        method: req.method === 'HEAD' ? 'GET' : req.method,
        segments: [],
        machine: false,
      };
      let res: NeutralResponse;
      try {
        const segments = splitPath(req.path.slice(prefix.length));
        if (!segments) throw new MailroomError('NOT_FOUND', 'No such page');
        call.segments = segments;
        res = await route(call);
      } catch (error) {
        res = failure(call, error);
      }
      return req.method === 'HEAD' ? { ...res, body: '' } : res;
    },
  };
}

/** Refusal of a method, with the methods the path does take (for `Allow`). */
class MethodNotAllowed extends MailroomError {
  constructor(readonly allow: readonly string[]) {
    super('METHOD_NOT_ALLOWED', `Use ${allow.join(' or ')}`);
  }
}

function allow(call: Call, methods: readonly string[]): void {
  if (!methods.includes(call.method)) throw new MethodNotAllowed(methods);
}

function allowed(
  call: Call,
  methods: readonly string[],
  run: () => Promise<NeutralResponse>,
): Promise<NeutralResponse> {
  allow(call, methods);
  return run();
}

function ctxOf(call: Call): PageContext {
  if (!call.ctx) throw new MailroomError('INTERNAL', 'page rendered before the session was read');
  return call.ctx;
}

/** `/broadcasts/bc_1/` as `['broadcasts', 'bc_1']`, each segment decoded; undefined for broken escapes. */
function splitPath(rest: string): string[] | undefined {
  try {
    return rest
      .split('/')
      .filter((s) => s !== '')
      .map((s) => decodeURIComponent(s));
  } catch {
    return undefined;
  }
}

/** The sample of a template preview, from the query string (the form is a GET: previewing changes nothing). */
function sampleOf(req: NeutralRequest): TemplateSampleForm {
  const q = queryOf(req);
  return {
    variables: q.get('variables') ?? DEFAULT_SAMPLE.variables,
    name: q.get('name') ?? DEFAULT_SAMPLE.name,
    address: q.get('address') ?? DEFAULT_SAMPLE.address,
  };
}

function parseSample(sample: TemplateSampleForm): {
  variables: Variables;
  recipient: { name: string; address: string };
} {
  let variables: unknown;
  try {
    variables = JSON.parse(sample.variables.trim() === '' ? '{}' : sample.variables);
  } catch {
    throw new MailroomError('VALIDATION_FAILED', 'The variables are not valid JSON');
  }
  if (typeof variables !== 'object' || variables === null || Array.isArray(variables)) {
    throw new MailroomError('VALIDATION_FAILED', 'The variables must be a JSON object');
  }
  return { variables: variables as Variables, recipient: { name: sample.name, address: sample.address } };
}

/** A text body as a document of its own for the preview frame. */
function textDocument(text: string): string {
  return `<!doctype html><meta charset="utf-8"><pre style="white-space:pre-wrap;font:14px/1.5 ui-monospace,monospace;margin:1rem">${escapeHtml(text)}</pre>`;
}

function describe(error: unknown): unknown {
  if (!(error instanceof Error)) return { value: String(error) };
  return {
    name: error.name,
    message: error.message,
    stack: error.stack,
    ...(isMailroomError(error) ? { code: error.code } : {}),
  };
}
