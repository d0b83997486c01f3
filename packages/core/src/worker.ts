import { domainOf, localPart, newDelivery } from './accept.js';
import { composeMessage, decodeAttachments, dkimFor, type MailingParts } from './compose-message.js';
import type { EngineContext } from './engine-context.js';
import { isMailroomError, MailroomError } from './errors.js';
import type { MailroomWorker, WorkerOptions } from './mailroom-types.js';
import { createRateLimiter } from './rate-limiter.js';
import type { ClaimedDelivery, DeliveryOutcome, MailingRecord, SourceJobRecord } from './records.js';
import { type PreparedContent, prepareContent, renderDelivery } from './render/index.js';
import { retryDelay } from './retry-policy.js';

/** Worker settings with their defaults applied. */
export type ResolvedWorkerOptions = Required<WorkerOptions>;

/** The defaults of {@link WorkerOptions}. */
export const WORKER_DEFAULTS: ResolvedWorkerOptions = {
  concurrency: 8,
  batchSize: 100,
  leaseMs: 60_000,
  pollMs: 250,
  maxAttempts: 8,
  retryBaseMs: 1_000,
  retryMaxMs: 300_000,
  ratePerSecond: 0,
};

/** Members read from an audience group per source-job page. */
const SOURCE_PAGE = 500;
const MAILING_CACHE_SIZE = 256;

interface MailingEntry {
  mailing: MailingRecord;
  prepared: PreparedContent;
  parts: MailingParts;
}

/**
 * The delivery loop: claim due deliveries with a lease, render each from the mailing's content parsed
 * once, send through the transport with bounded concurrency and a rate limit, record the outcome fenced
 * by the lease token. Several workers (in one or many processes) may run against one store.
 */
export function createWorker(ctx: EngineContext, options: WorkerOptions = {}): MailroomWorker {
  const opts: ResolvedWorkerOptions = { ...WORKER_DEFAULTS, ...options };
  const { store, transport, clock, logger, events } = ctx;
  const limiter = createRateLimiter(opts.ratePerSecond);
  const cache = new Map<string, MailingEntry>();
  let running = false;
  let loop: Promise<void> | undefined;
  let wake: (() => void) | undefined;

  async function mailingEntry(id: string): Promise<MailingEntry | undefined> {
    const hit = cache.get(id);
    if (hit) return hit;
    const mailing = await store.getMailingById(id);
    if (!mailing) return undefined;
    const sender = await store.findSender(mailing.projectId, mailing.sender.address);
    const entry: MailingEntry = {
      mailing,
      // Content is frozen at accept time, so parsing once per mailing is enough for every batch.
      prepared: prepareContent(mailing.content, { strictVariables: ctx.strictVariables }),
      parts: { attachments: decodeAttachments(mailing), dkim: dkimFor(mailing.sender.address, sender?.dkim) },
    };
    if (cache.size >= MAILING_CACHE_SIZE) cache.delete(cache.keys().next().value as string);
    cache.set(id, entry);
    return entry;
  }

  async function expandOneSourcePage(): Promise<number> {
    const now = clock.now();
    const job = await store.claimSourceJob({ now, leaseMs: opts.leaseMs });
    if (!job) return 0;
    try {
      return await expandAudiencePage(job, now);
    } catch (error) {
      logger.error({ err: error, job: job.id }, 'source job failed');
      await store.commitSourcePage(job.id, job.leaseToken, {
        deliveries: [],
        profiles: [],
        profileOptions: { onExistingProfile: 'preserve', onExistingTrait: 'preserve' },
        patch: { status: 'failed', error: error instanceof Error ? error.message : String(error) },
        leaseUntil: now,
        now,
      });
      return 1;
    }
  }

  async function expandAudiencePage(job: SourceJobRecord, now: Date): Promise<number> {
    const config = job.config as { groupId: string; includeUnsubscribed: boolean };
    const checkpoint = job.checkpoint as { after?: string } | null;
    const entry = await mailingEntry(job.mailingId);
    if (!entry) throw new MailroomError('NOT_FOUND', `Mailing ${job.mailingId} of source job ${job.id} is gone`);
    const members = await store.listGroupMembers(job.projectId, config.groupId, {
      after: checkpoint?.after ?? null,
      limit: SOURCE_PAGE,
    });
    const { mailing } = entry;
    const notBefore =
      mailing.options.scheduleFor && mailing.options.scheduleFor > now ? mailing.options.scheduleFor : now;
    const deliveries = members
      .filter((m) => config.includeUnsubscribed || m.status === 'subscribed')
      // The job id stands as batch id so the worker can tell a source delivery and its source options.
      .map((m) =>
        newDelivery(
          mailing,
          job.id,
          { address: m.address, name: m.name ?? localPart(m.address), traits: m.traits },
          notBefore,
          domainOf(mailing.sender.address),
          now,
        ),
      );
    const last = members.at(-1)?.address ?? checkpoint?.after ?? null;
    const done = members.length < SOURCE_PAGE;
    const result = await store.commitSourcePage(job.id, job.leaseToken, {
      deliveries,
      profiles: [],
      profileOptions: { onExistingProfile: 'preserve', onExistingTrait: 'preserve' },
      patch: {
        checkpoint: { after: last },
        rowsDone: job.rowsDone + members.length,
        ...(done ? { status: 'done' as const } : {}),
      },
      leaseUntil: new Date(now.getTime() + opts.leaseMs),
      now,
    });
    if (!result) logger.warn({ job: job.id }, 'source job lease lost; another worker continues it');
    if (done) await settle(job.mailingId);
    return 1;
  }

  async function settle(mailingId: string): Promise<void> {
    const now = clock.now();
    if (await store.completeMailingIfSettled(mailingId, now)) {
      const entry = await mailingEntry(mailingId);
      if (entry) {
        events.emit('broadcast:completed', {
          projectId: entry.mailing.projectId,
          ref: entry.mailing.ref,
          kind: entry.mailing.kind,
        });
      }
    }
  }

  async function deliverDue(): Promise<number> {
    const now = clock.now();
    const claimed = await store.claimDeliveries({ now, limit: opts.batchSize, leaseMs: opts.leaseMs });
    if (claimed.length === 0) return 0;
    const renew = setInterval(() => {
      const until = new Date(clock.now().getTime() + opts.leaseMs);
      store
        .renewLeases(
          claimed.map((d) => ({ id: d.id, leaseToken: d.leaseToken })),
          until,
        )
        .catch((err: unknown) => logger.warn({ err }, 'lease renewal failed'));
    }, Math.max(1_000, opts.leaseMs / 3));
    renew.unref();
    try {
      const blocked = await blockedAddresses(claimed);
      let next = 0;
      const runners = Array.from({ length: Math.min(opts.concurrency, claimed.length) }, async () => {
        while (next < claimed.length) {
          const delivery = claimed[next++] as ClaimedDelivery;
          await deliverOne(delivery, blocked);
        }
      });
      await Promise.all(runners);
    } finally {
      clearInterval(renew);
    }
    const mailingIds = new Set(claimed.map((d) => d.mailingId));
    for (const id of mailingIds) {
      await store.setMailingStatus(id, ['queued', 'scheduled'], 'sending', clock.now());
      await settle(id);
    }
    return claimed.length;
  }

  /**
   * Suppressed addresses (any mailing) and unsubscribed profiles (broadcasts), looked up once per claim.
   * Read at send time, not accept time, so an unsubscribe between the two is honoured.
   */
  async function blockedAddresses(claimed: ClaimedDelivery[]): Promise<Map<string, 'suppressed' | 'unsubscribed'>> {
    const blocked = new Map<string, 'suppressed' | 'unsubscribed'>();
    const byProject = new Map<string, Set<string>>();
    for (const d of claimed) {
      let set = byProject.get(d.projectId);
      if (!set) byProject.set(d.projectId, (set = new Set()));
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

  async function sourceAllowsUnsubscribed(delivery: ClaimedDelivery): Promise<boolean> {
    if (!delivery.batchId.startsWith('src_')) return false;
    const jobs = await store.listSourceJobs(delivery.mailingId);
    const job = jobs.find((j) => j.id === delivery.batchId);
    return (job?.config as { includeUnsubscribed?: boolean } | undefined)?.includeUnsubscribed === true;
  }

  async function deliverOne(
    delivery: ClaimedDelivery,
    blocked: Map<string, 'suppressed' | 'unsubscribed'>,
  ): Promise<void> {
    const entry = await mailingEntry(delivery.mailingId);
    if (!entry) {
      await record(delivery, undefined, { status: 'failed', lastError: 'mailing not found', now: clock.now() });
      return;
    }
    const { mailing } = entry;
    if (mailing.sandbox) {
      await record(delivery, mailing, { status: 'skipped', lastError: 'sandbox', now: clock.now() });
      return;
    }
    const block = blocked.get(`${delivery.projectId}\n${delivery.address}`);
    if (block === 'suppressed') {
      await record(delivery, mailing, { status: 'suppressed', lastError: 'address is suppressed', now: clock.now() });
      return;
    }
    if (block === 'unsubscribed' && mailing.kind === 'broadcast' && !(await sourceAllowsUnsubscribed(delivery))) {
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
      logger.warn({ delivery: delivery.id }, 'lease lost before the outcome was written; another worker owns it');
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

  async function runOnce(): Promise<number> {
    const sources = await expandOneSourcePage();
    const sent = await deliverDue();
    return sources + sent;
  }

  async function runLoop(): Promise<void> {
    while (running) {
      let n = 0;
      try {
        n = await runOnce();
      } catch (error) {
        logger.error({ err: error }, 'worker round failed');
      }
      if (n === 0 && running) {
        await new Promise<void>((resolve) => {
          const timer = setTimeout(resolve, opts.pollMs);
          wake = () => {
            clearTimeout(timer);
            resolve();
          };
        });
        wake = undefined;
      }
    }
  }

  return {
    start() {
      if (running) return;
      running = true;
      loop = runLoop();
    },
    async stop() {
      running = false;
      wake?.();
      await loop;
      loop = undefined;
    },
    async drain() {
      let idle = 0;
      for (;;) {
        if ((await runOnce()) > 0) {
          idle = 0;
          continue;
        }
        const due = await store.nextDueAt();
        // Something due that this worker could not claim (another worker holds it): wait a little, then
        // give up rather than spin; drain means "nothing left for me to do now".
        if (!due || due > clock.now() || ++idle > 50) return;
        await new Promise((r) => setTimeout(r, 10));
      }
    },
    runOnce,
  };
}

// RFC 3463 5.1.x: bad destination mailbox ("no such user"): the address will never work.
function isNoSuchUser(error: MailroomError): boolean {
  return /\b5\.1\.\d\b/.test(error.response ?? error.message) || (error.responseCode === 550 && /user|mailbox/i.test(error.response ?? ''));
}
