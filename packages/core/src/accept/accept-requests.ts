import { MailroomError } from '../base/errors.js';
import { realignScheduledBatch } from '../broadcasts/broadcast-schedule.js';
import type { AuthContext } from '../context/auth-context.js';
import type { BaseContext } from '../context/base-context.js';
import { authenticateSecret, isAuthContext } from '../keys/authenticate.js';
import { assertKeySender } from '../keys/key-domains.js';
import { parseBroadcastRequest, parseSendRequest } from '../request/index.js';
import type { BatchRequest, BroadcastRequest } from '../request/request-types.js';
import type { TransactionStore } from '../store/app-transaction-store.js';
import type { MailingRecord, MailingStatus, MessageTag } from '../store/records.js';
import type { BatchTarget } from '../store/store.js';
import {
  buildBatch,
  commitAndSettle,
  newMailing,
  resolveContent,
  resolveGroup,
  resolveSources,
  resolveTopic,
} from './accept.js';
import type { AcceptContext } from './accept-context.js';
import type { BroadcastResult, RequestOptions, SendBatchResult, SendResult } from './accept-options.js';
import { inAppTransaction } from './app-transaction.js';
import { acceptSendBatch } from './batch-send.js';
import { checkIdempotencyKey, type IdempotentOperation, runIdempotent } from './idempotency.js';

/** Statuses of a broadcast that still take a batch. */
const OPEN_STATUSES: readonly MailingStatus[] = ['queued', 'scheduled', 'sending', 'completed'];

/** The engine's `send`, `sendBatch` and `broadcast`. */
export interface Acceptance {
  /**
   * `ref` (internal, for a capability sending on the project's behalf): the message's ref, chosen by the
   * caller. The store keeps a ref once per project (`commitBatch` refuses a second with `CONFLICT`), so a
   * ref derived from what the message is for (an automation run's step) is sent at most once, whatever
   * became of an earlier attempt's idempotency key. `tags` (internal too): kept with the message's content.
   */
  send(
    auth: string | AuthContext,
    body: unknown,
    options?: RequestOptions & { ref?: string; tags?: MessageTag[] },
  ): Promise<SendResult>;
  broadcast(auth: string | AuthContext, body: unknown, options?: RequestOptions): Promise<BroadcastResult>;
  sendBatch(auth: string | AuthContext, body: unknown, options?: RequestOptions): Promise<SendBatchResult>;
}

/**
 * Accepting requests: validate, resolve, and commit a message or a broadcast batch, under its idempotency
 * key if it has one, on the engine's store or, with `options.transaction`, on the store's roles bound to the
 * app's transaction (see `RequestOptions.transaction`). What the path does besides the store is harmless
 * if the app then rolls back: it fetches attachments given by URL and probes CSV sources (reads), and it
 * emits no in-process event and wakes no worker (workers find new deliveries by polling, so a rolled-back
 * request is never seen, and a committed one on the next poll).
 */
export function createAcceptance(
  ctx: BaseContext,
  options: {
    idempotencyTtlMs: number;
    /** The engine's authentication on its own store (it waits for the store to be ready). */
    resolveAuth: (auth: string | AuthContext) => Promise<AuthContext>;
    /**
     * The sending policy on the sender's domain (see `DomainSigning.admit`), reading through `store`: the
     * engine's, or the one bound to the app's transaction. Throws to refuse the request.
     */
    checkSender: (projectId: string, address: string, store: TransactionStore) => Promise<void>;
  },
): Acceptance {
  /** Runs `accept` on the engine's store, or in the app's transaction when the options give one. */
  async function accept<T extends object>(
    authOrSecret: string | AuthContext,
    operation: IdempotentOperation,
    body: unknown,
    requestOptions: RequestOptions | undefined,
    run: (actx: AcceptContext, auth: AuthContext) => Promise<T>,
  ): Promise<T> {
    const transaction = requestOptions?.transaction;
    if (transaction === undefined) {
      const auth = await options.resolveAuth(authOrSecret);
      return idempotent(ctx, auth, operation, body, requestOptions, false, () => run(ctx, auth));
    }
    return inAppTransaction(ctx.store, transaction, async (store) => {
      const actx: AcceptContext = {
        clock: ctx.clock,
        logger: ctx.logger,
        limits: ctx.limits,
        strictVariables: ctx.strictVariables,
        storeContentDefault: ctx.storeContentDefault,
        fetcher: ctx.fetcher,
        store,
      };
      const auth = isAuthContext(authOrSecret)
        ? authOrSecret
        : await authenticateSecret(store, authOrSecret, ctx.clock.now());
      return idempotent(actx, auth, operation, body, requestOptions, true, () => run(actx, auth));
    });
  }

  /** Runs a request under its idempotency key, if it has one (see `RequestOptions.idempotencyKey`). */
  function idempotent<T extends object>(
    actx: AcceptContext,
    auth: AuthContext,
    operation: IdempotentOperation,
    body: unknown,
    requestOptions: RequestOptions | undefined,
    transactional: boolean,
    run: () => Promise<T>,
  ): Promise<T> {
    const given = requestOptions?.idempotencyKey;
    if (given === undefined || given === null) return run();
    const key = checkIdempotencyKey(given);
    const ttlMs = options.idempotencyTtlMs;
    return runIdempotent(actx, auth, { key, operation, body, ttlMs, transactional }, run);
  }

  async function acceptMessage(
    actx: AcceptContext,
    auth: AuthContext,
    body: unknown,
    origin: { ref?: string | undefined; tags?: MessageTag[] | undefined } = {},
  ): Promise<SendResult> {
    const req = parseSendRequest(body, { recipientsPerMessage: actx.limits.recipientsPerMessage });
    const now = actx.clock.now();
    const { sender, content } = await resolveContent(actx, auth, req);
    await options.checkSender(auth.project.id, sender.address, actx.store);
    const groupId = await resolveGroup(actx, auth, req.options.acquiringAudience);
    const topic = await resolveTopic(actx, auth, req.options.topic);
    const mailing = newMailing(
      auth,
      'message',
      req,
      sender,
      content,
      {
        acquiringAudience: req.options.acquiringAudience,
        scheduleFor: null,
        storeContent: actx.storeContentDefault,
        ...(topic ? { topic } : {}),
      },
      now,
    );
    if (origin.ref !== undefined) mailing.ref = origin.ref;
    if (origin.tags?.length) content.tags = [...(content.tags ?? []), ...origin.tags];
    const { batch, deliveries, profiles } = buildBatch(mailing, 1, req.recipients, now);
    const result = await commitAndSettle(actx, {
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

  async function initialBroadcast(
    actx: AcceptContext,
    auth: AuthContext,
    req: BroadcastRequest,
  ): Promise<BroadcastResult> {
    const now = actx.clock.now();
    const { sender, content } = await resolveContent(actx, auth, req);
    // Local time and sending window: each delivery gets its own due time (store/delivery-plan.ts).
    if (req.options.plan) content.plan = req.options.plan;
    await options.checkSender(auth.project.id, sender.address, actx.store);
    const groupId = await resolveGroup(actx, auth, req.options.acquiringAudience);
    const topic = await resolveTopic(actx, auth, req.options.topic);
    const mailing = newMailing(
      auth,
      'broadcast',
      req,
      sender,
      content,
      {
        acquiringAudience: req.options.acquiringAudience,
        scheduleFor: req.options.scheduleFor,
        storeContent: req.options.storeContent ?? actx.storeContentDefault,
        ...(topic ? { topic } : {}),
      },
      now,
    );
    return commitBroadcastBatch(actx, auth, mailing, { create: mailing }, 1, req, groupId, now);
  }

  /** Write one batch of a broadcast (its inline recipients and sources) and answer with the batch's figures. */
  async function commitBroadcastBatch(
    actx: AcceptContext,
    auth: AuthContext,
    mailing: MailingRecord,
    target: BatchTarget,
    seq: number,
    req: Pick<BatchRequest, 'recipients' | 'sources'>,
    groupId: string | null,
    now: Date,
  ): Promise<BroadcastResult> {
    const { batch, deliveries, profiles } = buildBatch(mailing, seq, req.recipients, now);
    const sourceJobs = await resolveSources(actx, auth, mailing.id, batch.id, req.sources, now);
    const result = await commitAndSettle(actx, {
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

  async function laterBatch(
    actx: AcceptContext,
    auth: AuthContext,
    req: BatchRequest,
  ): Promise<BroadcastResult> {
    const now = actx.clock.now();
    const mailing = await actx.store.getMailing(auth.project.id, req.broadcastRef);
    if (mailing?.kind !== 'broadcast') {
      throw new MailroomError('NOT_FOUND', `Broadcast ${req.broadcastRef} not found`);
    }
    // A key limited to sender domains adds batches only to broadcasts it could have sent.
    assertKeySender(auth, mailing.sender.address);
    if (!OPEN_STATUSES.includes(mailing.status)) {
      throw new MailroomError(
        'BROADCAST_CLOSED',
        `Broadcast ${mailing.ref} is ${mailing.status}; it takes no batch`,
      );
    }
    // Recipients are indexed into the broadcast's acquiring audience, as on the initial batch.
    const groupId = await resolveGroup(actx, auth, mailing.options.acquiringAudience);
    const target: BatchTarget = {
      mailingId: mailing.id,
      allowStatus: OPEN_STATUSES,
      setStatus: mailing.status === 'scheduled' ? 'scheduled' : 'sending',
    };
    const result = await commitBroadcastBatch(
      actx,
      auth,
      mailing,
      target,
      mailing.batchCount + 1,
      req,
      groupId,
      now,
    );
    if (mailing.status === 'scheduled') await realignScheduledBatch(actx, mailing);
    return result;
  }

  return {
    send: (authOrSecret, body, requestOptions) =>
      accept(authOrSecret, 'send', body, requestOptions, (actx, auth) =>
        acceptMessage(actx, auth, body, { ref: requestOptions?.ref, tags: requestOptions?.tags }),
      ),

    sendBatch: (authOrSecret, body, requestOptions) =>
      accept(authOrSecret, 'batch', body, requestOptions, (actx, auth) =>
        acceptSendBatch(actx, auth, body, {
          checkSender: options.checkSender,
          idempotencyTtlMs: options.idempotencyTtlMs,
        }),
      ),

    broadcast: (authOrSecret, body, requestOptions) =>
      accept(authOrSecret, 'broadcast', body, requestOptions, (actx, auth) => {
        const parsed = parseBroadcastRequest(body, { recipientsPerBatch: actx.limits.recipientsPerBatch });
        return parsed.kind === 'initial'
          ? initialBroadcast(actx, auth, parsed.request)
          : laterBatch(actx, auth, parsed.request);
      }),
  };
}
