import { domainOf } from '../base/address-parts.js';
import { isMailroomError } from '../base/errors.js';
import { createTopicGate } from '../consent/topic-gate.js';
import { refusalEventData, type SignalFacts } from '../inbound/inbound-effects.js';
import { outgoingComposer } from '../mime/outgoing-composer.js';
import { createRenderBudget, DEFAULT_RENDER_MS_PER_MINUTE } from '../render/render-budget.js';
import { windowOpensAt } from '../store/delivery-plan.js';
import type { DeliveryOutcome } from '../store/delivery-queue.js';
import type { ClaimedDelivery, MailingRecord } from '../store/records.js';
import { type SendReceipt, sentVia } from '../transport/transport.js';
import type { DeliveryContext } from './delivery-context.js';
import type { DeliveryEvents } from './delivery-events.js';
import { createDestinationGate, deferredOutcome } from './destination-gate.js';
import type { MailingCache } from './mailing-cache.js';
import { messageLinks, withLinks } from './message-links.js';
import { type BufferedOutcome, createOutcomeBuffer } from './outcome-buffer.js';
import { createOutgoingBuilder } from './outgoing-build.js';
import { pastConsentRecords } from './past-consent-records.js';
import {
  type Block,
  blockedAddresses,
  isUnsubscribedAddress,
  retryWindowStart,
  skipBeforeWork,
  waitBeforeWork,
} from './pre-send-checks.js';
import { createSendRenderGuard } from './render-guard.js';
import { overBudget } from './render-lane.js';
import { isHeld } from './retry-by-reason.js';
import { asTransportError, failureOutcome } from './retry-policy.js';
import { createSendAdmission } from './send-admission.js';
import { runAttempt } from './send-attempt.js';
import { createSendGate } from './send-gate.js';
import { createSendRateLimiter, type SendRateLimiter } from './send-rate-limiter.js';
import { createWarmupGate } from './warmup.js';
import type { ResolvedWorkerOptions } from './worker-options.js';

/** An outcome with the mailing it belongs to (for the `delivery` event). */
interface PipelineOutcome extends BufferedOutcome {
  mailing: MailingRecord | undefined;
  /** How long the transport took, when it was called (for the `delivery` event). */
  latencyMs?: number;
}

/** How long a delivery a pause held back after its claim waits before it is due again. */
const HELD_DELAY_MS = 1_000;

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
 * What happens to each claimed delivery, one role per file: the checks before any work
 * (`pre-send-checks.ts`: sandbox, suppressed, unsubscribed, past its window; its destination or warm-up
 * waits), the message built by the core (`outgoing-build.ts`: rendered and composed, on the main thread or
 * the render threads), the attempt (`send-attempt.ts`: the gates of `send-admission.ts`, the send, the
 * outcome), and the outcome recorded in bulk by an outcome buffer, fenced by the lease token. `delivery`
 * events are emitted once an outcome is durable.
 */
export function createDeliveryPipeline(
  ctx: DeliveryContext,
  opts: ResolvedWorkerOptions,
  cache: MailingCache,
  onDurable: () => void = () => {},
): DeliveryPipeline {
  const { store, transport, clock, logger } = ctx;
  const events = ctx.events.view<DeliveryEvents>();
  const projectLimiters = new Map<string, SendRateLimiter>();
  const gate = createSendGate({
    concurrency: opts.concurrency,
    pauseMs: opts.throttlePauseMs,
    transportPauseMs: opts.transportPauseMs,
  });
  // Topic mailings: the contacts' topic states, read once per claim (issue 38).
  const topicGate = createTopicGate(store);
  // Destinations (engine option `destinations`): limits shared through the store, and slow-downs per destination.
  const destinations =
    ctx.destinations &&
    createDestinationGate(ctx.destinations, { store, clock, logger, concurrency: opts.concurrency });
  // Warm-up (engine option `warmup`): a daily allowance per sender domain and route, shared through the store.
  const warmup = ctx.warmup && createWarmupGate(ctx.warmup, { store, clock, logger });
  const admission = createSendAdmission({
    rate: createSendRateLimiter(opts.ratePerSecond),
    projectRate: projectLimiter,
    gate,
    warmup,
    destinations,
  });
  // The one composition every message gets, as the transport's capabilities say (on this thread, or the
  // same module on the render threads); a transport that also wants the fields renders here.
  // Render time per project, in the engine's render budget (shared with previews): a project whose
  // renders run long waits with its own deliveries (`render-guard.ts`, `render-lane.ts`).
  const renderBudget = ctx.renderBudget ?? {
    budget: createRenderBudget(clock, DEFAULT_RENDER_MS_PER_MINUTE),
    msPerMinute: DEFAULT_RENDER_MS_PER_MINUTE,
  };
  const renderGuard = createSendRenderGuard(renderBudget.budget, clock, renderBudget.msPerMinute);
  const builder = createOutgoingBuilder({
    composer: outgoingComposer(transport.capabilities),
    threads: transport.capabilities.fields === true ? 0 : opts.renderThreads,
    strictVariables: ctx.strictVariables,
    logger,
    guard: renderGuard,
    lane: transport.capabilities.fields !== true,
  });
  let outstanding = 0;
  let halted = false;
  const retries = new Map<string, RetryWait>();
  const attemptParts = {
    ctx,
    opts,
    admission,
    gate,
    destinations,
    halted: () => halted,
    held: (delivery: ClaimedDelivery) =>
      ctx.heldBack?.held(delivery.projectId, delivery.mailingId, delivery.address) === true,
    handBack: (delivery: ClaimedDelivery) => (halted ? handBack(delivery) : holdBack(delivery)).outcome,
    refusals: new WeakMap<DeliveryOutcome, SignalFacts>(),
  };
  const { refusals } = attemptParts;
  // Deliveries put back to a sending window's next opening: planned waits, not retries `drain` waits for.
  const windowWaits = new WeakSet<DeliveryOutcome>();

  const buffer = createOutcomeBuffer<PipelineOutcome>(store, logger, {
    maxItems: opts.flushEvery,
    maxDelayMs: opts.flushMs,
    onWritten({ delivery, mailing, outcome, latencyMs }, written) {
      if (!written || !mailing) return;
      // A hold for a sender-side block waits for a resume, not a retry `drain` could wait for.
      if (outcome.status === 'queued' && outcome.lastError && !windowWaits.has(outcome) && !isHeld(outcome)) {
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
        attempts: delivery.attempts - (outcome.uncounted && outcome.status !== 'queued' ? 1 : 0),
        response: outcome.lastResponse ?? null,
        error: outcome.lastError ?? null,
        latencyMs: latencyMs ?? null,
        transport: (outcome.status === 'sent' && sentVia(outcome.lastResponse)) || null,
        refusal: refusals.get(outcome)?.kind ?? null,
      });
    },
  });

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
      const blocked = await blockedAddresses(store, claimed);
      const topicBlocked = await topicGate.blocked(claimed, async (id) => (await cache.get(id))?.mailing);
      const pastConsent = pastConsentRecords(store);
      let next = 0;
      // With render threads, a few more runners than sending places keep the threads busy ahead of the sends.
      const width = opts.concurrency + (builder.threaded ? opts.renderThreads * 2 : 0);
      const runners = Array.from({ length: Math.min(width, claimed.length) }, async () => {
        while (next < claimed.length) {
          const delivery = claimed[next++] as ClaimedDelivery;
          try {
            // A pause that came after the claim holds the rest of the batch back (handed back unsent).
            const item = halted
              ? handBack(delivery)
              : attemptParts.held(delivery)
                ? holdBack(delivery)
                : await deliverOne(delivery, blocked, topicBlocked);
            if (
              item.mailing?.kind === 'broadcast' &&
              item.outcome.status === 'sent' &&
              isUnsubscribedAddress(blocked, delivery)
            ) {
              pastConsent.add(delivery, item.mailing, item.outcome.now);
            }
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
      await pastConsent.flush();
    } finally {
      // What never reached the buffer (the suppression lookup failed) stays leased, retried later.
      for (let i = handed; i < claimed.length; i++) done();
    }
  }

  /** A delivery given back unsent (the worker stops): due again now, for any worker. */
  function handBack(delivery: ClaimedDelivery): PipelineOutcome {
    // The attempt its claim counted did not happen, but nothing was handed to the relay either.
    const now = clock.now();
    return { delivery, mailing: undefined, outcome: { status: 'queued', nextAttemptAt: now, now } };
  }

  /**
   * A delivery a pause holds back (known here since its claim): given back unsent, due a second later.
   * Claims pass over it while the pause lasts; the second keeps a pause this process knows of before the
   * store lists it (or after it was lifted elsewhere) from handing the same deliveries back and forth.
   */
  function holdBack(delivery: ClaimedDelivery): PipelineOutcome {
    const now = clock.now();
    const outcome: DeliveryOutcome = {
      status: 'queued',
      nextAttemptAt: new Date(now.getTime() + HELD_DELAY_MS),
      now,
    };
    return { delivery, mailing: undefined, outcome };
  }

  async function deliverOne(
    delivery: ClaimedDelivery,
    blocked: Map<string, Block>,
    topicBlocked: ReadonlyMap<string, string>,
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
    const since = retryWindowStart(delivery, mailing, clock.now(), opts);
    let skipped = skipBeforeWork(
      { delivery, mailing, blocked, topicBlocked, since, now: clock.now() },
      { store, opts },
    );
    if (skipped instanceof Promise) skipped = await skipped;
    if (skipped) return result(mailing, skipped);
    const destination = destinations && (await destinations.destinationOf(delivery.address));
    const senderDomain = domainOf(mailing.sender.address);
    const context = { projectId: mailing.projectId, kind: mailing.kind, ref: mailing.ref };
    // The route that will take it (a warm-up per route), by the sender's address, as the route sees it.
    const route = transport.routeOf?.(mailing.sender.address, context);
    const waits = waitBeforeWork({ destination, senderDomain, route }, { destinations, warmup, clock });
    if (waits) return result(mailing, waits);
    // A sending window that closed while the delivery waited its turn: back to its next opening.
    const plan = mailing.content.plan;
    const opens = plan?.window ? windowOpensAt(plan, clock.now(), delivery) : undefined;
    if (opens) {
      const wait = deferredOutcome(opens, 'outside the sending window', clock.now());
      windowWaits.add(wait);
      return result(mailing, wait);
    }
    // The project used up its render time: its deliveries wait, unrendered, until it is back.
    const renderWait = renderGuard.waitSeconds(mailing.projectId);
    if (renderWait > 0) return result(mailing, renderDeferral(renderWait));
    const envelopeFrom = ctx.bounces ? await ctx.bounces.address(delivery.id) : mailing.sender.address;
    const links = await messageLinks(ctx, mailing, delivery);
    const unsubscribe = links.headers;
    // A batch item's custom headers (checked at accept: never one the engine writes) go first.
    const custom = mailing.content.headers;
    const headers = custom ? { ...custom, ...unsubscribe } : unsubscribe;
    let built: Awaited<ReturnType<typeof builder.build>>;
    try {
      const verp = ctx.bounces !== undefined;
      const building = builder.build({
        entry,
        delivery: withLinks(delivery, links),
        headers,
        envelopeFrom,
        verp,
        context,
        now: clock.now(),
      });
      built = building instanceof Promise ? await building : building;
    } catch (error) {
      // Refused on the slow lane: the project's render time ran out while the delivery waited its turn.
      if (isMailroomError(error) && error.code === 'RATE_LIMITED' && error.retryAfter !== undefined)
        return result(mailing, renderDeferral(error.retryAfter));
      // A render or build failure is the content's fault (final), unless a render thread died.
      const err = asTransportError(error);
      if (err.retryable) return result(mailing, failureOutcome(delivery, err, opts, since, clock.now()));
      return result(mailing, { status: 'failed', lastError: err.message, now: clock.now() });
    }
    let latencyMs: number | undefined;
    const send = async (): Promise<SendReceipt> => {
      const started = performance.now();
      try {
        return await transport.send(built.outgoing);
      } finally {
        latencyMs = performance.now() - started;
      }
    };
    const outcome = await runAttempt(
      { delivery, mailing, send, content: built.content, since, destination, senderDomain, route },
      attemptParts,
    );
    return latencyMs === undefined ? result(mailing, outcome) : { ...result(mailing, outcome), latencyMs };
  }

  /** A delivery put back unrendered while its project's render time is used up (its attempt given back). */
  function renderDeferral(waitSeconds: number): DeliveryOutcome {
    const now = clock.now();
    const reason = overBudget(renderGuard.msPerMinute, waitSeconds).message;
    return deferredOutcome(new Date(now.getTime() + waitSeconds * 1000), reason, now);
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
      await builder.close();
    },
  };
}
