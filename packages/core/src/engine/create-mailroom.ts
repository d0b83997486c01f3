import {
  buildBatch,
  commitAndSettle,
  newMailing,
  resolveContent,
  resolveGroup,
  resolveSources,
} from '../accept/accept.js';
import type { BroadcastResult, RequestOptions, SendResult } from '../accept/accept-options.js';
import {
  checkIdempotencyKey,
  DEFAULT_IDEMPOTENCY_TTL_MS,
  type IdempotentOperation,
  runIdempotent,
} from '../accept/idempotency.js';
import { createAdmin } from '../admin/admin.js';
import { createDashboardQueries } from '../admin/dashboard-queries.js';
import type { MailingView } from '../admin/mailing-view.js';
import { systemClock } from '../base/clock.js';
import { MailroomError } from '../base/errors.js';
import { silentLogger } from '../base/logger.js';
import { hashSecret, isWellFormedSecret } from '../base/secrets.js';
import {
  cancelBroadcast,
  latenessOf,
  parseScheduleTime,
  realignScheduledBatch,
  rescheduleBroadcast,
} from '../broadcasts/broadcast-schedule.js';
import { createWorker } from '../delivery/worker.js';
import { createEventOutbox } from '../events/event-outbox.js';
import { createGuardedFetcher } from '../fetch/index.js';
import { createInbound } from '../inbound/inbound-receiver.js';
import { createReturnPaths } from '../inbound/return-path.js';
import { normalizeAddress, parseBroadcastRequest, parseSendRequest } from '../request/index.js';
import type { BatchRequest, BroadcastRequest } from '../request/request-types.js';
import type { MailingRecord, MailingStatus } from '../store/records.js';
import type { BatchTarget } from '../store/store.js';
import { createTracking } from '../tracking/tracking.js';
import { trackingView } from '../tracking/tracking-view.js';
import { createUnsubscribeLinks } from '../unsubscribe/unsubscribe.js';
import { createWebhooks, listEvents } from '../webhooks/webhook-endpoints.js';
import { createWebhookSender } from '../webhooks/webhook-sender.js';
import type { AuthContext } from './auth-context.js';
import type { EngineContext } from './engine-context.js';
import { EventHub } from './event-hub.js';
import type { Mailroom, MailroomOptions } from './mailroom-types.js';
import { createProgressReporter, DEFAULT_PROGRESS_INTERVAL_MS } from './progress-reporter.js';
import { createRetention } from './retention.js';

/** Statuses of a broadcast that still take a batch. */
const OPEN_STATUSES: readonly MailingStatus[] = ['queued', 'scheduled', 'sending', 'completed'];

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
  const ctx: EngineContext = {
    store: options.store,
    transport: options.transport,
    clock: options.clock ?? systemClock,
    logger,
    events: new EventHub(logger),
    outbox: createEventOutbox(options.store),
    limits: {
      recipientsPerMessage: options.limits?.recipientsPerMessage ?? 10,
      recipientsPerBatch: options.limits?.recipientsPerBatch ?? 250,
      attachments: { maxCount: 10, maxTotalBytes: 25 * 1024 * 1024 },
    },
    strictVariables: options.strictVariables ?? false,
    storeContentDefault: options.storeContentDefault ?? false,
    fetcher: createGuardedFetcher(options.fetch),
    ready: () => {
      initialized ??= options.store.init();
      return initialized;
    },
  };
  let initialized: Promise<void> | undefined;
  const { store, clock, ready } = ctx;
  if (options.unsubscribe) ctx.unsubscribe = createUnsubscribeLinks(ctx, options.unsubscribe);
  if (options.tracking) ctx.tracking = createTracking(ctx, options.tracking);
  if (options.bounces) ctx.bounces = createReturnPaths(ctx, options.bounces);
  const worker = createWorker(ctx, options.worker);
  const webhookSender = createWebhookSender(ctx, options.webhooks, () => worker.outstanding > 0);
  const retention = createRetention(ctx, options.retention);
  const progress = createProgressReporter(ctx, options.progressIntervalMs ?? DEFAULT_PROGRESS_INTERVAL_MS);
  const idempotencyTtlMs = options.idempotency?.ttlMs ?? DEFAULT_IDEMPOTENCY_TTL_MS;
  if (!(Number.isSafeInteger(idempotencyTtlMs) && idempotencyTtlMs > 0)) {
    throw new MailroomError(
      'VALIDATION_FAILED',
      'idempotency.ttlMs must be a positive number of milliseconds',
    );
  }

  async function authenticate(secret: string | null | undefined): Promise<AuthContext> {
    await ready();
    // One answer for missing, malformed and unknown secrets: nothing to learn from the difference.
    const unauthorized = () => new MailroomError('UNAUTHORIZED', 'Missing or invalid project secret');
    if (!secret || !isWellFormedSecret(secret)) throw unauthorized();
    const found = await store.findSecret(hashSecret(secret));
    if (!found) throw unauthorized();
    return { project: found.project, mode: found.secret.mode };
  }

  // Anything but a real AuthContext (a string, null, undefined from a careless caller) goes through the secret check.
  const resolveAuth = async (auth: string | AuthContext): Promise<AuthContext> =>
    typeof auth === 'object' && auth !== null && 'project' in auth ? auth : authenticate(auth as string);

  async function initialBroadcast(auth: AuthContext, req: BroadcastRequest): Promise<BroadcastResult> {
    const now = clock.now();
    const { sender, content } = await resolveContent(ctx, auth, req);
    const groupId = await resolveGroup(ctx, auth, req.options.acquiringAudience);
    const mailing = newMailing(
      auth,
      'broadcast',
      req,
      sender,
      content,
      {
        acquiringAudience: req.options.acquiringAudience,
        scheduleFor: req.options.scheduleFor,
        storeContent: req.options.storeContent ?? ctx.storeContentDefault,
      },
      now,
    );
    return commitBroadcastBatch(auth, mailing, { create: mailing }, 1, req, groupId, now);
  }

  /** Write one batch of a broadcast (its inline recipients and sources) and answer with the batch's figures. */
  async function commitBroadcastBatch(
    auth: AuthContext,
    mailing: MailingRecord,
    target: BatchTarget,
    seq: number,
    req: Pick<BatchRequest, 'recipients' | 'sources'>,
    groupId: string | null,
    now: Date,
  ): Promise<BroadcastResult> {
    const { batch, deliveries, profiles } = buildBatch(mailing, seq, req.recipients, now);
    const sourceJobs = await resolveSources(ctx, auth, mailing.id, batch.id, req.sources, now);
    const result = await commitAndSettle(ctx, {
      target,
      batch,
      deliveries,
      profiles,
      groupId,
      sourceJobs,
      now,
    });
    return {
      ref: result.mailing.ref,
      status: result.mailing.status,
      batch: { seq, recipients: req.recipients.length, inserted: result.inserted },
    };
  }

  async function laterBatch(auth: AuthContext, req: BatchRequest): Promise<BroadcastResult> {
    const now = clock.now();
    const mailing = await store.getMailing(auth.project.id, req.broadcastRef);
    if (mailing?.kind !== 'broadcast') {
      throw new MailroomError('NOT_FOUND', `Broadcast ${req.broadcastRef} not found`);
    }
    if (!OPEN_STATUSES.includes(mailing.status)) {
      throw new MailroomError(
        'BROADCAST_CLOSED',
        `Broadcast ${mailing.ref} is ${mailing.status}; it takes no batch`,
      );
    }
    // Recipients are indexed into the broadcast's acquiring audience, as on the initial batch.
    const groupId = await resolveGroup(ctx, auth, mailing.options.acquiringAudience);
    const target: BatchTarget = {
      mailingId: mailing.id,
      allowStatus: OPEN_STATUSES,
      setStatus: mailing.status === 'scheduled' ? 'scheduled' : 'sending',
    };
    const result = await commitBroadcastBatch(
      auth,
      mailing,
      target,
      mailing.batchCount + 1,
      req,
      groupId,
      now,
    );
    if (mailing.status === 'scheduled') await realignScheduledBatch(ctx, mailing);
    return result;
  }

  /** Runs a request under its idempotency key, if it has one (see `RequestOptions.idempotencyKey`). */
  function idempotent<T extends object>(
    auth: AuthContext,
    operation: IdempotentOperation,
    body: unknown,
    requestOptions: RequestOptions | undefined,
    run: () => Promise<T>,
  ): Promise<T> {
    const given = requestOptions?.idempotencyKey;
    if (given === undefined || given === null) return run();
    const key = checkIdempotencyKey(given);
    return runIdempotent(ctx, auth, { key, operation, body, ttlMs: idempotencyTtlMs }, run);
  }

  async function acceptMessage(auth: AuthContext, body: unknown): Promise<SendResult> {
    const req = parseSendRequest(body, { recipientsPerMessage: ctx.limits.recipientsPerMessage });
    const now = clock.now();
    const { sender, content } = await resolveContent(ctx, auth, req);
    const groupId = await resolveGroup(ctx, auth, req.options.acquiringAudience);
    const mailing = newMailing(
      auth,
      'message',
      req,
      sender,
      content,
      {
        acquiringAudience: req.options.acquiringAudience,
        scheduleFor: null,
        storeContent: ctx.storeContentDefault,
      },
      now,
    );
    const { batch, deliveries, profiles } = buildBatch(mailing, 1, req.recipients, now);
    const result = await commitAndSettle(ctx, {
      target: { create: mailing },
      batch,
      deliveries,
      profiles,
      groupId,
      sourceJobs: [],
      now,
    });
    return { ref: result.mailing.ref, status: result.mailing.status };
  }

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
      counts: await store.countDeliveries(mailing.id),
      lateByMs: await latenessOf(ctx, mailing),
    };
  }

  async function findMailing(auth: string | AuthContext, ref: string): Promise<MailingRecord> {
    const { project } = await resolveAuth(auth);
    const mailing = await store.getMailing(project.id, ref);
    if (!mailing) throw new MailroomError('NOT_FOUND', `${ref} not found`);
    return mailing;
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

  const noUnsubscribe = () => new MailroomError('NOT_FOUND', 'Unknown or invalid unsubscribe link');
  const noTracking = () => new MailroomError('NOT_FOUND', 'Unknown or invalid tracking link');

  return {
    store,
    transport: options.transport,
    admin: createAdmin(ctx),
    inbound: createInbound(ctx, options.notifications),
    worker: {
      start() {
        ready().then(
          () => {
            worker.start();
            retention.start();
            webhookSender.start();
          },
          (error: unknown) => logger.error({ err: error }, 'store init failed; worker not started'),
        );
      },
      async stop() {
        await retention.stop();
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
    listEvents: async (auth, eventOptions) => listEvents(ctx, await resolveAuth(auth), eventOptions),

    async send(authOrSecret, body, requestOptions) {
      const auth = await resolveAuth(authOrSecret);
      return idempotent(auth, 'send', body, requestOptions, () => acceptMessage(auth, body));
    },

    async broadcast(authOrSecret, body, requestOptions) {
      const auth = await resolveAuth(authOrSecret);
      return idempotent(auth, 'broadcast', body, requestOptions, async () => {
        const parsed = parseBroadcastRequest(body, { recipientsPerBatch: ctx.limits.recipientsPerBatch });
        return parsed.kind === 'initial'
          ? initialBroadcast(auth, parsed.request)
          : laterBatch(auth, parsed.request);
      });
    },

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

    async cancel(auth, ref) {
      const mailing = await findBroadcast(auth, ref);
      await cancelBroadcast(ctx, mailing);
      return view(await reread(mailing));
    },

    async reschedule(auth, ref, scheduleFor) {
      const mailing = await findBroadcast(auth, ref);
      await rescheduleBroadcast(ctx, mailing, parseScheduleTime(scheduleFor));
      return view(await reread(mailing));
    },

    pruneContent: (pruneOptions) => retention.pruneContent(pruneOptions),

    async resolveUnsubscribe(token) {
      if (!ctx.unsubscribe) throw noUnsubscribe();
      return ctx.unsubscribe.resolve(token);
    },

    async unsubscribe(token) {
      if (!ctx.unsubscribe) throw noUnsubscribe();
      return ctx.unsubscribe.unsubscribe(token);
    },

    async trackClick(token, meta = {}) {
      if (!ctx.tracking) throw noTracking();
      return ctx.tracking.click(token, meta);
    },

    async trackOpen(token, meta = {}) {
      if (!ctx.tracking) throw noTracking();
      await ctx.tracking.open(token, meta);
    },

    async getTracking(auth, ref, viewOptions) {
      return trackingView(ctx, await findMailing(auth, ref), viewOptions?.limit);
    },

    async getDeliveryTracking(auth, ref, address) {
      const mailing = await findMailing(auth, ref);
      const delivery = await store.findDelivery(mailing.id, normalizeAddress(address));
      if (!delivery) throw new MailroomError('NOT_FOUND', `${ref} has no delivery to ${address}`);
      return store.deliveryTracking(delivery.id);
    },

    ...createDashboardQueries(ctx, { resolveAuth, findMailing, view }),

    on: (event, listener) => ctx.events.on(event, listener),

    async close() {
      progress.stop();
      await ctx.tracking?.close();
      await retention.stop();
      await worker.stop();
      await webhookSender.stop();
      await options.transport.close?.();
      await ctx.fetcher.close();
      await store.close();
    },
  };
}
