import { composeMessage } from './compose-message.js';
import type { EngineContext } from './engine-context.js';
import { isMailroomError, MailroomError } from './errors.js';
import type { MailingCache } from './mailing-cache.js';
import type { WorkerOptions } from './mailroom-types.js';
import { createRateLimiter } from './rate-limiter.js';
import type { ClaimedDelivery, DeliveryOutcome, MailingRecord } from './records.js';
import { renderDelivery } from './render/index.js';
import { retryDelay } from './retry-policy.js';

type Block = 'suppressed' | 'unsubscribed';

/**
 * What happens to each claimed delivery: the suppression and subscription checks, rendering from the
 * mailing's prepared content, the send through the transport under the rate limit, and the outcome
 * written fenced by the lease token (a worker that lost its lease writes nothing).
 */
export function createDeliveryPipeline(
  ctx: EngineContext,
  opts: Required<WorkerOptions>,
  cache: MailingCache,
) {
  const { store, transport, clock, logger, events } = ctx;
  const limiter = createRateLimiter(opts.ratePerSecond);

  /** Deliver a claimed batch with at most `opts.concurrency` sends at once. */
  async function deliverBatch(claimed: ClaimedDelivery[]): Promise<void> {
    const blocked = await blockedAddresses(claimed);
    let next = 0;
    const runners = Array.from({ length: Math.min(opts.concurrency, claimed.length) }, async () => {
      while (next < claimed.length) {
        const delivery = claimed[next++] as ClaimedDelivery;
        try {
          await deliverOne(delivery, blocked);
        } catch (error) {
          // A store failure here leaves the delivery leased; it is retried when the lease expires.
          logger.error({ err: error, delivery: delivery.id }, 'delivery failed unexpectedly');
        }
      }
    });
    await Promise.all(runners);
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

  async function deliverOne(delivery: ClaimedDelivery, blocked: Map<string, Block>): Promise<void> {
    const entry = await cache.get(delivery.mailingId);
    if (!entry) {
      await record(delivery, undefined, {
        status: 'failed',
        lastError: 'mailing not found',
        now: clock.now(),
      });
      return;
    }
    const { mailing } = entry;
    if (mailing.sandbox) {
      await record(delivery, mailing, { status: 'skipped', lastError: 'sandbox', now: clock.now() });
      return;
    }
    const block = blocked.get(`${delivery.projectId}\n${delivery.address}`);
    if (block === 'suppressed') {
      await record(delivery, mailing, {
        status: 'suppressed',
        lastError: 'address is suppressed',
        now: clock.now(),
      });
      return;
    }
    if (
      block === 'unsubscribed' &&
      mailing.kind === 'broadcast' &&
      !(await sourceAllowsUnsubscribed(delivery))
    ) {
      await record(delivery, mailing, { status: 'skipped', lastError: 'unsubscribed', now: clock.now() });
      return;
    }
    let rendered: ReturnType<typeof renderDelivery>;
    try {
      rendered = renderDelivery(entry.prepared, delivery);
    } catch (error) {
      const message = error instanceof Error ? error.message : String(error);
      await record(delivery, mailing, { status: 'failed', lastError: message, now: clock.now() });
      return;
    }
    const message = composeMessage(mailing, delivery, rendered, entry.parts, {}, clock.now());
    await limiter.acquire();
    try {
      const receipt = await transport.send(message);
      const now = clock.now();
      await record(delivery, mailing, {
        status: 'sent',
        lastResponse: receipt.response,
        lastError: null,
        sentAt: now,
        content: mailing.options.storeContent ? rendered : null,
        now,
      });
    } catch (error) {
      await record(delivery, mailing, failureOutcome(delivery, error));
      if (isMailroomError(error, 'TRANSPORT_PERMANENT') && isNoSuchUser(error)) {
        await store.addSuppression({
          projectId: delivery.projectId,
          address: delivery.address,
          reason: 'hard-bounce',
          detail: error.response ?? error.message,
          createdAt: clock.now(),
        });
      }
    }
  }

  function failureOutcome(delivery: ClaimedDelivery, error: unknown): DeliveryOutcome {
    const now = clock.now();
    const err =
      error instanceof MailroomError
        ? error
        : new MailroomError('TRANSPORT_TRANSIENT', error instanceof Error ? error.message : String(error), {
            cause: error,
          });
    const response = err.response ?? (err.responseCode ? String(err.responseCode) : null);
    if (err.retryable && delivery.attempts < opts.maxAttempts) {
      const delay = retryDelay(delivery.attempts, opts.retryBaseMs, opts.retryMaxMs);
      return {
        status: 'queued',
        nextAttemptAt: new Date(now.getTime() + delay),
        lastResponse: response,
        lastError: err.message,
        now,
      };
    }
    return { status: 'failed', lastResponse: response, lastError: err.message, now };
  }

  async function record(
    delivery: ClaimedDelivery,
    mailing: MailingRecord | undefined,
    outcome: DeliveryOutcome,
  ): Promise<void> {
    const written = await store.completeDelivery(delivery.id, delivery.leaseToken, outcome);
    if (!written) {
      logger.warn(
        { delivery: delivery.id },
        'lease lost before the outcome was written; another worker owns it',
      );
      return;
    }
    if (mailing && events.has('delivery')) {
      events.emit('delivery', {
        projectId: delivery.projectId,
        mailingRef: mailing.ref,
        kind: mailing.kind,
        address: delivery.address,
        status: outcome.status,
        attempts: delivery.attempts,
        response: outcome.lastResponse ?? null,
        error: outcome.lastError ?? null,
      });
    }
  }

  return { deliverBatch };
}

// RFC 3463 5.1.x to RCPT TO: bad destination mailbox ("no such user"): the address will never work. The same
// code after MAIL FROM speaks of the sender, so only a reply to RCPT (or after DATA for one recipient) counts.
function isNoSuchUser(error: MailroomError): boolean {
  if (error.command !== undefined && error.command !== 'RCPT TO' && error.command !== 'DATA') return false;
  const text = error.response ?? error.message;
  return /\b5\.1\.[0-9]\b/.test(text) || (error.responseCode === 550 && /no such user|unknown user|mailbox unavailable/i.test(text));
}
