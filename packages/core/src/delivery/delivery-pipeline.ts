import { domainOf } from '../base/address-parts.js';
import { MailroomError } from '../base/errors.js';
import { recordRefusal, refusalEventData, type SignalFacts } from '../inbound/inbound-effects.js';
import { refusalFacts } from '../inbound/refusal-reason.js';
import { outgoingComposer } from '../mime/outgoing-composer.js';
import { renderDelivery } from '../render/index.js';
import type { DeliveryOutcome } from '../store/delivery-queue.js';
import type { ClaimedDelivery, MailingRecord } from '../store/records.js';
import { trackingRewrite } from '../tracking/tracking-links.js';
import {
  type RawOutgoingMessage,
  receiptResponse,
  type SendReceipt,
  sentVia,
} from '../transport/transport.js';
import { listUnsubscribeHeaders } from '../unsubscribe/unsubscribe.js';
import { composeMessage } from './compose-message.js';
import type { DeliveryContext } from './delivery-context.js';
import type { DeliveryEvents } from './delivery-events.js';
import { createDestinationGate, deferredOutcome, isDestinationSlowDown } from './destination-gate.js';
import type { MailingCache } from './mailing-cache.js';
import { type BufferedOutcome, createOutcomeBuffer } from './outcome-buffer.js';
import { createRenderPool, type RenderPool } from './render-pool.js';
import { asTransportError, backpressureOf, failureOutcome, pausedOutcome } from './retry-policy.js';
import { createSendGate, type GateSignal } from './send-gate.js';
import { createSendRateLimiter, type SendRateLimiter } from './send-rate-limiter.js';
import { createWarmupGate } from './warmup.js';
import type { ResolvedWorkerOptions } from './worker-options.js';

type Block = 'suppressed' | 'unsubscribed';

/** An outcome with the mailing it belongs to (for the `delivery` event). */
interface PipelineOutcome extends BufferedOutcome {
  mailing: MailingRecord | undefined;
  /** How long the transport took, when it was called (for the `delivery` event). */
  latencyMs?: number;
}

/** Retries a pipeline remembers for `drain` at most (the oldest is forgotten first). */
const MAX_RETRIES_KEPT = 4096;

/** A delivery this pipeline tried, that failed transiently and waits for its retry. */
export interface RetryWait {
  address: string;
  mailingRef: string;
  nextAttemptAt: Date;
  /** The failure's message (the relay's reply, or the connection error). */
  error: string;
}

/** The delivery stage of a worker. */
export interface DeliveryPipeline {
  /**
   * Deliver a claimed batch; resolves once the outcome of every delivery of it is durable (or, after a
   * store failure, left leased for a retry when its lease expires). Batches may overlap: they share the
   * worker's concurrency, rate limit and outcome writes.
   */
  deliverBatch(claimed: ClaimedDelivery[]): Promise<void>;
  /** Deliveries handed to `deliverBatch` whose outcome is not durable yet: what a crash could resend. */
  readonly outstanding: number;
  /**
   * By delivery id, the deliveries whose last durable outcome here was a retry (`queued` later, with an
   * error); an entry goes with the next outcome of the delivery here. For `drain`.
   */
  readonly retries: Map<string, RetryWait>;
  /**
   * Stop starting sends: deliveries of the batches in flight that are not being sent yet are handed back
   * (`queued`, due now) for any worker to claim. `deliverBatch` then resolves once the sends under way end.
   */
  halt(): void;
  /** Stop the render threads, if any (started again on demand), and allow sending again. */
  close(): Promise<void>;
}

/**
 * What happens to each claimed delivery: the suppression and subscription checks, rendering from the
 * mailing's prepared content and composing it (on the main thread, or on render threads that also build
 * the MIME), the send through the transport under the concurrency gate and the
 * rate limits, and the outcome, recorded in bulk by an outcome buffer and fenced by the lease token.
 * `delivery` events are emitted once an outcome is durable.
 */
export function createDeliveryPipeline(
  ctx: DeliveryContext,
  opts: ResolvedWorkerOptions,
  cache: MailingCache,
  onDurable: () => void = () => {},
): DeliveryPipeline {
  const { store, transport, clock, logger } = ctx;
  const events = ctx.events.view<DeliveryEvents>();
  const limiter = createSendRateLimiter(opts.ratePerSecond);
  const projectLimiters = new Map<string, SendRateLimiter>();
  const gate = createSendGate({
    concurrency: opts.concurrency,
    pauseMs: opts.throttlePauseMs,
    transportPauseMs: opts.transportPauseMs,
  });
  // Destinations (engine option `destinations`): limits shared through the store, and slow-downs per destination.
  const destinations =
    ctx.destinations &&
    createDestinationGate(ctx.destinations, { store, clock, logger, concurrency: opts.concurrency });
  // Warm-up (engine option `warmup`): a daily allowance per sender domain and route, shared through the store.
  const warmup = ctx.warmup && createWarmupGate(ctx.warmup, { store, clock, logger });
  // The one composition every message gets, as the transport's capabilities say (on this thread, or the
  // same module on the render threads); a transport that also wants the fields renders here.
  const composer = outgoingComposer(transport.capabilities);
  const useThreads = opts.renderThreads > 0 && transport.capabilities.fields !== true;
  let pool: RenderPool | undefined;
  let outstanding = 0;
  let halted = false;
  const retries = new Map<string, RetryWait>();

  const buffer = createOutcomeBuffer<PipelineOutcome>(store, logger, {
    maxItems: opts.flushEvery,
    maxDelayMs: opts.flushMs,
    onWritten({ delivery, mailing, outcome, latencyMs }, written) {
      if (!written || !mailing) return;
      if (outcome.status === 'queued' && outcome.lastError) {
        // Bounded: a retry another worker settles never comes back here to be deleted.
        if (retries.size >= MAX_RETRIES_KEPT) retries.delete(retries.keys().next().value as string);
        retries.set(delivery.id, {
          address: delivery.address,
          mailingRef: mailing.ref,
          nextAttemptAt: outcome.nextAttemptAt ?? outcome.now,
          error: outcome.lastError,
        });
      } else {
        retries.delete(delivery.id);
      }
      if (!events.has('delivery')) return;
      events.emit('delivery', {
        projectId: delivery.projectId,
        mailingRef: mailing.ref,
        kind: mailing.kind,
        address: delivery.address,
        status: outcome.status,
        attempts: delivery.attempts,
        response: outcome.lastResponse ?? null,
        error: outcome.lastError ?? null,
        latencyMs: latencyMs ?? null,
        transport: (outcome.status === 'sent' && sentVia(outcome.lastResponse)) || null,
      });
    },
  });

  /**
   * Outcomes of a relay's permanent refusal, with its facts: they emit `email.bounced` (a recipient-hard
   * one ends `bounced`, like a DSN; the others `failed`, with `email.failed` too).
   */
  const refusals = new WeakMap<DeliveryOutcome, SignalFacts>();

  /** The `email.bounced` event of a refusal at send time (written with its outcome). */
  function refusedEvent(
    delivery: ClaimedDelivery,
    mailing: MailingRecord,
    outcome: DeliveryOutcome,
    facts: SignalFacts,
  ) {
    return ctx.outbox.event(
      delivery.projectId,
      'email.bounced',
      outcome.now,
      { mailingRef: mailing.ref, deliveryId: delivery.id, address: delivery.address },
      refusalEventData(delivery, mailing, facts),
    );
  }

  function projectLimiter(projectId: string): SendRateLimiter | undefined {
    const rate = opts.projectRatePerSecond;
    const perSecond = typeof rate === 'function' ? rate(projectId) : rate;
    if (!(perSecond > 0)) return undefined;
    let found = projectLimiters.get(projectId);
    if (!found) {
      found = createSendRateLimiter(perSecond);
      projectLimiters.set(projectId, found);
    }
    return found;
  }

  async function deliverBatch(claimed: ClaimedDelivery[]): Promise<void> {
    outstanding += claimed.length;
    let handed = 0;
    const done = () => {
      outstanding--;
      onDurable();
    };
    const durable: Array<Promise<unknown>> = [];
    try {
      const blocked = await blockedAddresses(claimed);
      let next = 0;
      // With render threads, a few more runners than sending places keep the threads busy ahead of the sends.
      const width = opts.concurrency + (useThreads ? opts.renderThreads * 2 : 0);
      const runners = Array.from({ length: Math.min(width, claimed.length) }, async () => {
        while (next < claimed.length) {
          const delivery = claimed[next++] as ClaimedDelivery;
          try {
            const item = halted ? handBack(delivery) : await deliverOne(delivery, blocked);
            if (item.mailing) {
              const outbox = await ctx.outbox.forDelivery(delivery, item.mailing, item.outcome);
              if (outbox) item.outcome.outbox = outbox;
              const refusal = refusals.get(item.outcome);
              if (refusal !== undefined) {
                const bounced = await refusedEvent(delivery, item.mailing, item.outcome, refusal);
                item.outcome.outbox = {
                  events: [...(outbox?.events ?? []), ...bounced.events],
                  messages: [...(outbox?.messages ?? []), ...bounced.messages],
                };
              }
            }
            handed++;
            durable.push(buffer.add(item).finally(done));
          } catch (error) {
            handed++;
            // A store failure here leaves the delivery leased; it is retried when the lease expires.
            logger.error({ err: error, delivery: delivery.id }, 'delivery failed unexpectedly');
            done();
          }
        }
      });
      await Promise.all(runners);
      await buffer.flush();
      await Promise.all(durable);
    } finally {
      // What never reached the buffer (the suppression lookup failed) stays leased, retried later.
      for (let i = handed; i < claimed.length; i++) done();
    }
  }

  /**
   * Suppressed addresses (any mailing) and unsubscribed profiles (broadcasts), looked up once per claim.
   * Read at send time, not accept time, so an unsubscribe between the two is honoured.
   */
  async function blockedAddresses(claimed: ClaimedDelivery[]): Promise<Map<string, Block>> {
    const blocked = new Map<string, Block>();
    const byProject = new Map<string, Set<string>>();
    for (const d of claimed) {
      const set = byProject.get(d.projectId) ?? new Set<string>();
      byProject.set(d.projectId, set);
      set.add(d.address);
    }
    for (const [projectId, set] of byProject) {
      const addresses = [...set];
      for (const p of await store.findProfiles(projectId, addresses)) {
        if (p.status === 'unsubscribed') blocked.set(`${projectId}\n${p.address}`, 'unsubscribed');
      }
      for (const s of await store.findSuppressed(projectId, addresses)) {
        blocked.set(`${projectId}\n${s.address}`, 'suppressed');
      }
    }
    return blocked;
  }

  // Deliveries expanded from a source carry the source job's id as batch id.
  async function sourceAllowsUnsubscribed(delivery: ClaimedDelivery): Promise<boolean> {
    if (!delivery.batchId.startsWith('src_')) return false;
    const job = (await store.listSourceJobs(delivery.mailingId)).find((j) => j.id === delivery.batchId);
    return (job?.config as { includeUnsubscribed?: boolean } | undefined)?.includeUnsubscribed === true;
  }

  /** A delivery given back unsent (the worker stops): due again now, for any worker. */
  function handBack(delivery: ClaimedDelivery): PipelineOutcome {
    // The attempt its claim counted did not happen, but nothing was handed to the relay either.
    const now = clock.now();
    return { delivery, mailing: undefined, outcome: { status: 'queued', nextAttemptAt: now, now } };
  }

  /** When the delivery first became due: a retry is not scheduled beyond `maxAgeMs` after it. */
  /**
   * When the retry window (`maxAgeMs`) of a delivery started: its first attempt. A worker that was down
   * past `scheduleFor` still gives a late broadcast its full window. The first attempt's time is not
   * stored; it is at least the current retry's due time minus the longest the backoff could have waited
   * between the attempts so far, and never before the delivery became due.
   */
  function retryWindowStart(delivery: ClaimedDelivery, mailing: MailingRecord): Date {
    const now = clock.now();
    if (delivery.attempts <= 1) return now;
    const scheduled = mailing.options.scheduleFor;
    const due = scheduled && scheduled > delivery.createdAt ? scheduled : delivery.createdAt;
    let waited = 0;
    for (let attempt = 1; attempt < delivery.attempts; attempt++) {
      waited += Math.min(opts.retryMaxMs, opts.retryBaseMs * 2 ** (attempt - 1));
    }
    const firstAttempt = delivery.nextAttemptAt.getTime() - waited;
    return new Date(Math.min(now.getTime(), Math.max(due.getTime(), firstAttempt)));
  }

  async function deliverOne(
    delivery: ClaimedDelivery,
    blocked: Map<string, Block>,
  ): Promise<PipelineOutcome> {
    const result = (mailing: MailingRecord | undefined, outcome: DeliveryOutcome): PipelineOutcome => ({
      delivery,
      mailing,
      outcome,
    });
    const entry = await cache.get(delivery.mailingId);
    if (!entry)
      return result(undefined, { status: 'failed', lastError: 'mailing not found', now: clock.now() });
    const { mailing } = entry;
    if (mailing.sandbox)
      return result(mailing, { status: 'skipped', lastError: 'sandbox', now: clock.now() });
    const block = blocked.get(`${delivery.projectId}\n${delivery.address}`);
    if (block === 'suppressed') {
      return result(mailing, { status: 'suppressed', lastError: 'address is suppressed', now: clock.now() });
    }
    if (
      block === 'unsubscribed' &&
      mailing.kind === 'broadcast' &&
      !(await sourceAllowsUnsubscribed(delivery))
    ) {
      return result(mailing, { status: 'skipped', lastError: 'unsubscribed', now: clock.now() });
    }
    const since = retryWindowStart(delivery, mailing);
    const expiry = opts.maxAgeMs > 0 ? since.getTime() + opts.maxAgeMs : Number.POSITIVE_INFINITY;
    if (delivery.attempts > 1 && clock.now().getTime() > expiry) {
      // A retry that became due while no worker ran, past its deadline: not sent.
      return result(mailing, {
        status: 'failed',
        lastError: `gave up: older than ${opts.maxAgeMs} ms`,
        now: clock.now(),
      });
    }
    const destination = destinations && (await destinations.destinationOf(delivery.address));
    const closed = destination !== undefined && destinations?.closedUntil(destination);
    // Known to take nothing now: put back before rendering, not rendered again and again.
    if (closed)
      return result(mailing, deferredOutcome(closed, `destination ${destination} waits`, clock.now()));
    const senderDomain = domainOf(mailing.sender.address);
    const envelopeFrom = ctx.bounces ? await ctx.bounces.address(delivery.id) : mailing.sender.address;
    const context = { projectId: mailing.projectId, kind: mailing.kind, ref: mailing.ref };
    // The route that will take it (a warm-up per route), by the sender's address, as the route sees it.
    const route = transport.routeOf?.(mailing.sender.address, context);
    const cold = warmup?.closedUntil(senderDomain, route);
    if (cold) return result(mailing, deferredOutcome(cold.until, cold.reason, clock.now()));
    let outgoing: RawOutgoingMessage;
    let content: DeliveryOutcome['content'] = null;
    const headers = await listUnsubscribeHeaders(ctx, mailing, delivery);
    try {
      if (useThreads) {
        pool ??= createRenderPool({
          threads: opts.renderThreads,
          composer: composer.threadComposer,
          strictVariables: ctx.strictVariables,
          logger,
        });
        const built = await pool.build(entry, delivery, headers, clock.now());
        content = built.content;
        outgoing = {
          messageId: delivery.messageId,
          envelope: { from: envelopeFrom, to: [delivery.address] },
          from: mailing.sender.address,
          raw: built.raw,
          mailing: context,
        };
      } else {
        const rendered = renderDelivery(
          entry.prepared,
          delivery,
          trackingRewrite(entry.prepared, trackingStamp(delivery, clock.now())),
        );
        if (mailing.options.storeContent) content = rendered;
        const message = composeMessage(mailing, delivery, rendered, entry.parts, headers, clock.now());
        if (ctx.bounces) message.envelopeFrom = envelopeFrom;
        outgoing = composer.compose(message);
      }
    } catch (error) {
      // A render or build failure is the content's fault (final), unless a render thread died.
      const err = asTransportError(error);
      if (err.retryable) return result(mailing, failureOutcome(delivery, err, opts, since, clock.now()));
      return result(mailing, { status: 'failed', lastError: err.message, now: clock.now() });
    }
    let latencyMs: number | undefined;
    const timed = async (): Promise<SendReceipt> => {
      const started = performance.now();
      try {
        return await transport.send(outgoing);
      } finally {
        latencyMs = performance.now() - started;
      }
    };
    const outcome = await attempt(delivery, mailing, timed, content, since, destination, senderDomain, route);
    return latencyMs === undefined ? result(mailing, outcome) : { ...result(mailing, outcome), latencyMs };
  }

  async function attempt(
    delivery: ClaimedDelivery,
    mailing: MailingRecord,
    send: () => Promise<SendReceipt>,
    content: DeliveryOutcome['content'],
    since: Date,
    destination: string | undefined,
    senderDomain: string,
    route: string | undefined,
  ): Promise<DeliveryOutcome> {
    if (halted) return handBack(delivery).outcome;
    const forProject = projectLimiter(delivery.projectId);
    const projectDone = forProject ? await forProject.acquire() : undefined;
    const rateDone = await limiter.acquire();
    const release = await gate.acquire();
    let result: GateSignal = 'failed';
    // The day's warm-up allowance first (a refusal there spends no destination token), then, last, right
    // before the send, the destination: a grant's time is close to the message's arrival.
    const warm = await warmup?.admit(senderDomain, route);
    const admitted =
      destination === undefined || warm?.go === false ? undefined : await destinations?.admit(destination);
    try {
      if (halted) return handBack(delivery).outcome;
      if (warm && !warm.go) return deferredOutcome(warm.until, warm.reason, clock.now());
      if (admitted && !admitted.go) return deferredOutcome(admitted.until, admitted.reason, clock.now());
      const receipt = await send();
      result = 'ok';
      if (admitted?.go) admitted.done('ok');
      const now = clock.now();
      return {
        status: 'sent',
        lastResponse: receiptResponse(receipt),
        lastError: null,
        sentAt: now,
        content: mailing.options.storeContent ? content : null,
        now,
      };
    } catch (error) {
      const pressure = backpressureOf(error);
      if (pressure === 'pause') {
        // The account may not send for now: wait out the pause without holding it against the delivery.
        release('pause');
        return pausedOutcome(error, gate.resumesInMs, clock.now());
      }
      // With destinations, a slow-down slows the destination that said it, never the whole transport.
      const slowDestination = admitted?.go === true && isDestinationSlowDown(error);
      if (admitted?.go) admitted.done(slowDestination ? 'slow-down' : 'failed');
      if (pressure === 'slow-down' && !slowDestination) result = 'slow-down';
      let outcome = failureOutcome(delivery, error, opts, since, clock.now());
      const resumes = slowDestination && destination !== undefined && destinations?.pausedUntil(destination);
      if (resumes && outcome.status === 'queued' && (outcome.nextAttemptAt as Date) < resumes) {
        outcome = { ...outcome, nextAttemptAt: resumes };
      }
      // A permanent refusal is a bounce with a reason, and has that reason's effect: a recipient-hard
      // one suppresses the address and ends the delivery `bounced` (told at once instead of by a DSN
      // later), a sender-side one (DMARC, a blocklist, a rate) fails it and never suppresses.
      const facts = error instanceof MailroomError ? refusalFacts(error) : undefined;
      if (facts && outcome.status === 'failed') {
        if (facts.kind === 'hard-bounce') outcome = { ...outcome, status: 'bounced' };
        await recordRefusal(ctx, delivery, facts);
        refusals.set(outcome, facts);
      }
      return outcome;
    } finally {
      release(result);
      rateDone();
      projectDone?.();
    }
  }

  return {
    deliverBatch,
    halt() {
      halted = true;
    },
    get outstanding() {
      return outstanding;
    },
    retries,
    async close() {
      halted = false;
      const closing = pool;
      pool = undefined;
      await closing?.close();
    },
  };
}

/** What the tracking tokens of one delivery name (used only when its mailing is tracked). */
function trackingStamp(delivery: ClaimedDelivery, now: Date) {
  return { deliveryId: delivery.id, sentAt: Math.floor(now.getTime() / 1000) };
}
