import { createAcceptance } from '../accept/accept-requests.js';
import { DEFAULT_IDEMPOTENCY_TTL_MS } from '../accept/idempotency.js';
import { createActivityQueries } from '../admin/activity-series.js';
import { createAdmin } from '../admin/admin.js';
import { createCountCache } from '../admin/count-cache.js';
import { createDashboardQueries } from '../admin/dashboard-queries.js';
import type { MailingView } from '../admin/mailing-view.js';
import { messageStatus } from '../admin/message-status.js';
import { createProgressReporter, DEFAULT_PROGRESS_INTERVAL_MS } from '../admin/progress-reporter.js';
import { createAudienceApi } from '../audience/audience-api.js';
import { systemClock } from '../base/clock.js';
import { MailroomError } from '../base/errors.js';
import { silentLogger } from '../base/logger.js';
import {
  cancelBroadcast,
  latenessOf,
  parseScheduleTime,
  rescheduleBroadcast,
} from '../broadcasts/broadcast-schedule.js';
import type { AuthContext } from '../context/auth-context.js';
import type { BaseContext } from '../context/base-context.js';
import type { CapabilitySetup } from '../context/capability.js';
import { EventHub } from '../context/event-hub.js';
import { watchStore } from '../context/store-health.js';
import type { DeliveryContext } from '../delivery/delivery-context.js';
import { checkWarmupOptions } from '../delivery/warmup.js';
import { createWorker } from '../delivery/worker.js';
import { createEventOutbox } from '../events/event-outbox.js';
import { createGuardedFetcher } from '../fetch/index.js';
import { bouncesByDomain } from '../inbound/bounce-counts.js';
import { createInbound } from '../inbound/inbound-receiver.js';
import { createReturnPaths } from '../inbound/return-path.js';
import { authenticateSecret, isAuthContext } from '../keys/authenticate.js';
import { createKeyUse } from '../keys/key-use.js';
import { createKeys } from '../keys/keys.js';
import { destinationName, pause, pauseView, resume } from '../pauses/pause-control.js';
import { checkPausable, checkPauseOptions } from '../pauses/pause-options.js';
import { createReputationGuard } from '../pauses/reputation-guard.js';
import { createPreviewRenderer } from '../render/preview-renderer.js';
import { createRenderBudget, DEFAULT_RENDER_MS_PER_MINUTE } from '../render/render-budget.js';
import { normalizeAddress } from '../request/index.js';
import { createSenderResources } from '../resources/sender-resources.js';
import { createSuppressionResources } from '../resources/suppression-resources.js';
import { createTemplateResources } from '../resources/template-resources.js';
import { createRetention } from '../retention/retention.js';
import { createSignups } from '../signup/signup.js';
import { createFormsApi } from '../signup/signup-forms.js';
import type { MailingRecord } from '../store/records.js';
import { createPreferenceCentre } from '../unsubscribe/preference-centre.js';
import { createUnsubscribeLinks } from '../unsubscribe/unsubscribe.js';
import { createWebhooks, listEvents } from '../webhooks/webhook-endpoints.js';
import { createWebhookSender } from '../webhooks/webhook-sender.js';
import { plugCapabilities } from './capabilities.js';
import type { MailroomEvents } from './engine-events.js';
import type { Mailroom, MailroomOptions } from './mailroom-types.js';

/**
 * Create the engine.
 *
 * @example
 * const mailroom = createMailroom({ store: memoryStore(), transport: memoryTransport() });
 * const { project, secret } = await mailroom.admin.createProject({ name: 'Acme' });
 * await mailroom.admin.addSender(project.id, { address: 'news@acme.test' });
 * await mailroom.send(secret, { subject: 'Hi', sender: 'news@acme.test', message: 'Hello', recipients: 'a@b.test' });
 * await mailroom.worker.drain();
 */
export function createMailroom(options: MailroomOptions): Mailroom {
  const logger = options.logger ?? silentLogger;
  const clock = options.clock ?? systemClock;
  // Every part of the engine reaches the store through the watch: an outage is logged once, here.
  const watched = watchStore(options.store, clock, logger);
  const base: BaseContext = {
    store: watched.store,
    transport: options.transport,
    clock,
    logger,
    events: new EventHub(logger),
    outbox: createEventOutbox(watched.store),
    limits: {
      recipientsPerMessage: options.limits?.recipientsPerMessage ?? 10,
      recipientsPerBatch: options.limits?.recipientsPerBatch ?? 250,
      attachments: { maxCount: 10, maxTotalBytes: 25 * 1024 * 1024 },
    },
    strictVariables: options.strictVariables ?? false,
    storeContentDefault: options.storeContentDefault ?? false,
    fetcher: createGuardedFetcher(options.fetch),
    ready: () => {
      // A failed init (the database was out) is tried again by the next caller, not remembered.
      initialized ??= watched.store.init().catch((error: unknown) => {
        initialized = undefined;
        throw error;
      });
      return initialized;
    },
  };
  let initialized: Promise<void> | undefined;
  // A bad warm-up schedule is refused now, naming its field, not at the first send from its domain.
  if (options.warmup) checkWarmupOptions(options.warmup, options.transport);
  const { store, ready } = base;

  const keyUse = createKeyUse(store, logger);
  async function authenticate(secret: string | null | undefined): Promise<AuthContext> {
    await ready();
    const now = clock.now();
    return authenticateSecret(store, secret, now, (key) => keyUse.note(key, now));
  }
  const resolveAuth = async (auth: string | AuthContext): Promise<AuthContext> =>
    isAuthContext(auth) ? auth : authenticate(auth as string);
  async function findMailing(auth: string | AuthContext, ref: string): Promise<MailingRecord> {
    const { project } = await resolveAuth(auth);
    const mailing = await store.getMailing(project.id, ref);
    if (!mailing) throw new MailroomError('NOT_FOUND', `${ref} not found`);
    return mailing;
  }

  // The capabilities on the seam (engine/capabilities.ts), then the parts that use them.
  const setup: CapabilitySetup = {
    ctx: base,
    resolveAuth,
    findMailing,
    // Bound late: the acceptance is built below, on the context the capabilities complete.
    send: (auth, body, sendOptions) => acceptance.send(auth, body, sendOptions),
  };
  const capabilities = plugCapabilities(setup, options);
  const ctx: DeliveryContext = Object.assign(base, capabilities.provides);
  if (options.unsubscribe) {
    ctx.unsubscribe = createUnsubscribeLinks(ctx, options.unsubscribe);
    ctx.preferences = createPreferenceCentre(ctx, options.unsubscribe);
  }
  if (options.bounces) ctx.bounces = createReturnPaths(ctx, options.bounces);
  if (options.destinations) ctx.destinations = options.destinations;
  if (options.warmup) ctx.warmup = options.warmup;
  // One render budget per project for previews, template checks and sends (issue 36).
  const renderMsPerMinute = options.renderBudget?.msPerMinute ?? DEFAULT_RENDER_MS_PER_MINUTE;
  ctx.renderBudget = {
    budget: createRenderBudget(clock, renderMsPerMinute),
    msPerMinute: renderMsPerMinute,
  };
  const worker = createWorker(ctx, options.worker);
  const webhookSender = createWebhookSender(ctx, options.webhooks, () => worker.outstanding > 0);
  const retention = createRetention(ctx, options.retention);
  const guard = options.guard === false ? undefined : createReputationGuard(ctx, options.guard);
  // The worker's batches hold back what a pause covers as soon as this process knows of it.
  if (guard) ctx.heldBack = guard;
  const progress = createProgressReporter(ctx, options.progressIntervalMs ?? DEFAULT_PROGRESS_INTERVAL_MS);
  const idempotencyTtlMs = options.idempotency?.ttlMs ?? DEFAULT_IDEMPOTENCY_TTL_MS;
  if (!(Number.isSafeInteger(idempotencyTtlMs) && idempotencyTtlMs > 0)) {
    throw new MailroomError(
      'VALIDATION_FAILED',
      'idempotency.ttlMs must be a positive number of milliseconds',
    );
  }

  const acceptance = createAcceptance(ctx, {
    idempotencyTtlMs,
    resolveAuth,
    // Inside the app's transaction the domain is read through it, never past it.
    checkSender: (projectId, address, on) =>
      ctx.domains.admit(projectId, address, on === store ? undefined : on),
  });

  // Status reads of a large mailing share one count a second (see count-cache.ts): they cost the sender.
  const countCache = createCountCache((mailingId) => store.countDeliveries(mailingId));

  async function view(mailing: MailingRecord): Promise<MailingView> {
    return {
      ref: mailing.ref,
      kind: mailing.kind,
      status: mailing.status,
      subject: mailing.content.subject,
      sender: mailing.sender,
      createdAt: mailing.createdAt,
      scheduleFor: mailing.options.scheduleFor,
      batchCount: mailing.batchCount,
      counts: await countCache.counts(mailing.id),
      lateByMs: await latenessOf(ctx, mailing),
      ...(mailing.content.plan && store.countWaitingByHour
        ? { waiting: await store.countWaitingByHour(mailing.id, ctx.clock.now()) }
        : {}),
    };
  }

  async function findBroadcast(auth: string | AuthContext, ref: string): Promise<MailingRecord> {
    const mailing = await findMailing(auth, ref);
    if (mailing.kind !== 'broadcast') throw new MailroomError('NOT_FOUND', `Broadcast ${ref} not found`);
    return mailing;
  }

  /** The mailing as it is now (after a change made through its id). */
  async function reread(mailing: MailingRecord): Promise<MailingRecord> {
    return (await store.getMailingById(mailing.id)) ?? mailing;
  }

  /** The project's pauses in force, broadcasts by ref. */
  async function pausesOf(projectId: string) {
    const records = await store.listPauses({ projectId, now: ctx.clock.now() });
    const refs = new Map<string, string>();
    for (const record of records) {
      if (record.scope !== 'broadcast') continue;
      const mailing = await store.getMailingById(record.target);
      if (mailing) refs.set(mailing.id, mailing.ref);
    }
    return records.map((record) => pauseView(record, refs));
  }

  const noUnsubscribe = () => new MailroomError('NOT_FOUND', 'Unknown or invalid unsubscribe link');
  const noPreferences = () => new MailroomError('NOT_FOUND', 'Unknown or invalid preferences link');

  const previews = createPreviewRenderer({
    clock,
    logger,
    strictVariables: ctx.strictVariables,
    msPerMinute: renderMsPerMinute,
    budget: ctx.renderBudget.budget,
    ...(options.renderBudget?.hardLimitMs === undefined
      ? {}
      : { hardLimitMs: options.renderBudget.hardLimitMs }),
  });
  const signups = createSignups(
    ctx,
    {
      send: (auth, body) => acceptance.send(auth, body),
      ...(options.unsubscribe ? { fallbackBaseUrl: options.unsubscribe.baseUrl } : {}),
    },
    options.signup,
  );
  const queries = createDashboardQueries(ctx, { resolveAuth, findMailing, view, previews });
  const admin = createAdmin(ctx);

  return {
    // The store as given (the engine's own calls go through the watch).
    store: options.store,
    transport: options.transport,
    admin,
    audience: createAudienceApi(ctx, { resolveAuth, admin, topics: capabilities.facade.topics }),
    templates: createTemplateResources(ctx, {
      resolveAuth,
      previewTemplate: queries.previewTemplate,
      checkTemplate: (projectId, template) => previews.check(projectId, template),
    }),
    senders: createSenderResources(ctx, resolveAuth),
    forms: createFormsApi(ctx, resolveAuth),
    signups,
    suppressions: createSuppressionResources(ctx, resolveAuth),
    inbound: createInbound(ctx, options.notifications),
    worker: {
      start() {
        ready().then(
          () => {
            worker.start();
            retention.start();
            guard?.start();
            webhookSender.start();
            for (const task of capabilities.tasks) task.start();
          },
          (error: unknown) => logger.error({ err: error }, 'store init failed; worker not started'),
        );
      },
      async stop() {
        await guard?.stop();
        await retention.stop();
        for (const task of capabilities.tasks) await task.stop();
        await worker.stop();
        await webhookSender.stop();
      },
      async drain(options) {
        await ready();
        await worker.drain(options);
      },
      async runOnce() {
        await ready();
        return worker.runOnce();
      },
    },
    authenticate,
    webhooks: createWebhooks(ctx, resolveAuth, webhookSender),
    keys: createKeys(ctx, resolveAuth),
    listEvents: async (auth, eventOptions) => listEvents(ctx, await resolveAuth(auth), eventOptions),

    send: acceptance.send,
    sendBatch: acceptance.sendBatch,
    broadcast: acceptance.broadcast,

    getMessage: (auth, ref) => messageStatus(ctx, { resolveAuth, view }, auth, ref),

    async getMailing(auth, ref) {
      return view(await findMailing(auth, ref));
    },

    async listDeliveries(auth, ref, page = {}) {
      const mailing = await findMailing(auth, ref);
      return store.listDeliveries(mailing.id, {
        after: page.after ?? null,
        limit: Math.min(page.limit ?? 100, 1000),
        ...(page.status ? { status: page.status } : {}),
      });
    },

    async getDelivery(auth, ref, address) {
      const mailing = await findMailing(auth, ref);
      const delivery = await store.findDelivery(mailing.id, normalizeAddress(address));
      if (!delivery) throw new MailroomError('NOT_FOUND', `${ref} has no delivery to ${address}`);
      return delivery;
    },

    async listInboundSignals(auth, ref, address) {
      const mailing = await findMailing(auth, ref);
      const delivery = await store.findDelivery(mailing.id, normalizeAddress(address));
      if (!delivery) throw new MailroomError('NOT_FOUND', `${ref} has no delivery to ${address}`);
      return store.listInboundSignals(delivery.id);
    },

    async bouncesByDomain(auth, options = {}) {
      const { project } = await resolveAuth(auth);
      const { ref, ...rest } = options;
      const mailingId = ref === undefined ? undefined : (await findMailing(auth, ref)).id;
      return bouncesByDomain(store, project.id, { ...rest, ...(mailingId ? { mailingId } : {}) });
    },

    async cancel(auth, ref) {
      const mailing = await findBroadcast(auth, ref);
      await cancelBroadcast(ctx, mailing);
      countCache.forget(mailing.id);
      return view(await reread(mailing));
    },

    async reschedule(auth, ref, scheduleFor) {
      const mailing = await findBroadcast(auth, ref);
      await rescheduleBroadcast(ctx, mailing, parseScheduleTime(scheduleFor));
      countCache.forget(mailing.id);
      return view(await reread(mailing));
    },

    async pauseBroadcast(auth, ref, pauseOptions = {}) {
      const mailing = await findBroadcast(auth, ref);
      checkPauseOptions(pauseOptions);
      checkPausable(mailing);
      const target = { projectId: mailing.projectId, scope: 'broadcast' as const, mailing };
      await pause(ctx, target, { by: 'operator', reason: pauseOptions.reason ?? null });
      return pausesOf(mailing.projectId);
    },
    async resumeBroadcast(auth, ref) {
      const mailing = await findBroadcast(auth, ref);
      await resume(ctx, { projectId: mailing.projectId, scope: 'broadcast', mailing });
      return pausesOf(mailing.projectId);
    },
    async pauseSending(auth, pauseOptions = {}) {
      const { project } = await resolveAuth(auth);
      checkPauseOptions(pauseOptions);
      const target = { projectId: project.id, scope: 'project' as const };
      await pause(ctx, target, { by: 'operator', reason: pauseOptions.reason ?? null });
      return pausesOf(project.id);
    },
    async resumeSending(auth) {
      const { project } = await resolveAuth(auth);
      await resume(ctx, { projectId: project.id, scope: 'project' });
      return pausesOf(project.id);
    },
    async pauseDestination(auth, name, pauseOptions = {}) {
      const { project } = await resolveAuth(auth);
      checkPauseOptions(pauseOptions);
      const { minutes, domains, reason } = pauseOptions;
      const until = minutes === undefined ? null : new Date(ctx.clock.now().getTime() + minutes * 60_000);
      const target = {
        projectId: project.id,
        scope: 'destination' as const,
        destination: destinationName(name),
        ...(domains ? { domains: domains.map(destinationName) } : {}),
      };
      await pause(ctx, target, { by: 'operator', reason: reason ?? null, until });
      return pausesOf(project.id);
    },
    async resumeDestination(auth, name) {
      const { project } = await resolveAuth(auth);
      await resume(ctx, { projectId: project.id, scope: 'destination', destination: destinationName(name) });
      return pausesOf(project.id);
    },
    async listPauses(auth) {
      return pausesOf((await resolveAuth(auth)).project.id);
    },

    pruneContent: (pruneOptions) => retention.pruneContent(pruneOptions),

    async resolveUnsubscribe(token) {
      if (!ctx.unsubscribe) throw noUnsubscribe();
      return ctx.unsubscribe.resolve(token);
    },

    async unsubscribe(token, request) {
      if (!ctx.unsubscribe) throw noUnsubscribe();
      return ctx.unsubscribe.unsubscribe(token, request);
    },

    async preferencesUrl(auth, address) {
      const { project } = await resolveAuth(auth);
      if (!ctx.preferences) {
        throw new MailroomError('NOT_FOUND', 'The engine has no `unsubscribe` option: no preference centre');
      }
      return ctx.preferences.link(project.id, normalizeAddress(address));
    },

    async openPreferences(token) {
      if (!ctx.preferences) throw noPreferences();
      return ctx.preferences.open(token);
    },

    async savePreferences(token, input) {
      if (!ctx.preferences) throw noPreferences();
      return ctx.preferences.save(token, input);
    },

    ...queries,
    ...createActivityQueries(ctx, {
      resolveAuth,
      findMailing,
      listPauses: async (auth) => pausesOf((await resolveAuth(auth)).project.id),
      guard: options.guard,
      destinations: options.destinations,
      warmup: options.warmup,
    }),

    ...capabilities.facade,

    on: (event, listener) => ctx.events.view<MailroomEvents>().on(event, listener),
    health: () => watched.health(),

    async close() {
      progress.stop();
      // Signups answered and still being written finish first.
      await signups.settled();
      await guard?.stop();
      await retention.stop();
      for (const task of capabilities.tasks) await task.stop();
      await worker.stop();
      await previews.close();
      await webhookSender.stop();
      await capabilities.close();
      await options.transport.close?.();
      await ctx.fetcher.close();
      await keyUse.settle();
      await store.close();
    },
  };
}
