import { isMailroomError } from '../base/errors.js';
import { newId } from '../base/ids.js';
import type { BaseContext } from '../engine/base-context.js';
import type {
  ClaimedWebhookMessage,
  WebhookAttemptRecord,
  WebhookEndpointRecord,
  WebhookOutcome,
} from '../store/event-records.js';
import { createBusyPacer } from './busy-pacer.js';
import { secretKey, signedHeaders } from './webhook-signature.js';
import type { WebhookOptions } from './webhook-types.js';

const SECOND = 1_000;
const MINUTE = 60 * SECOND;
const HOUR = 60 * MINUTE;

/** The defaults of {@link WebhookOptions}. */
export const WEBHOOK_DEFAULTS: Required<WebhookOptions> = {
  send: true,
  // Svix's schedule: the waits after the 1st, 2nd, ... failed attempt.
  retryScheduleMs: [5 * SECOND, 5 * MINUTE, 30 * MINUTE, 2 * HOUR, 5 * HOUR, 10 * HOUR, 10 * HOUR],
  disableAfterMs: 5 * 24 * HOUR,
  concurrency: 32,
  timeoutMs: 10 * SECOND,
  maxResponseBytes: 64 * 1024,
  leaseMs: MINUTE,
  pollMs: 250,
  busyRatePerSecond: 100,
};

/** How long a sender trusts its copy of an endpoint (URL, secret, enabled). */
const ENDPOINT_CACHE_MS = 5_000;
/** Outcomes recorded per store transaction at most (each transaction has a cost of its own). */
const FLUSH_EVERY = 500;
/** ... or at the latest this long after the first of them. */
const FLUSH_MS = 25;
/** An endpoint refused by the address policy is logged at most once in this long. */
const REFUSAL_LOG_INTERVAL_MS = 10 * MINUTE;
/** Messages claimed at most by one poll of a sender whose hand is more than half full while paced. */
const PEEK_LIMIT = 8;

/** The webhook sender loop of one process. */
export interface WebhookSender {
  /** Start claiming and sending in the background. */
  start(): void;
  /** Stop claiming; resolves when the POSTs in flight have ended and their outcomes are recorded. */
  stop(): Promise<void>;
  /** Send every message due now, and wait for them (tests and scripts). */
  drain(): Promise<void>;
  /** Claim now rather than at the next poll (a message was just queued). */
  wake(): void;
  /** Drop the cached copy of an endpoint (it changed). */
  forget(endpointId: string): void;
}

interface Finished {
  id: string;
  leaseToken: number;
  outcome: WebhookOutcome;
  attempt: WebhookAttemptRecord | null;
}

/**
 * Claims due webhook messages with a lease (like deliveries: several processes may share the queue),
 * POSTs each one signed per Standard Webhooks through the guarded fetcher (SSRF policy and allow-list,
 * `timeoutMs`, `maxResponseBytes`), and records the outcome fenced by the lease: a 2xx is `delivered`;
 * anything else (a refusal by the address policy too, which is logged) waits the next entry of
 * `retryScheduleMs` and is sent again with the same `webhook-id`, and after the last it is `failed`. An endpoint that has failed every attempt for `disableAfterMs` is
 * disabled. Order is not kept: messages are sent concurrently, and a retry goes after newer ones.
 */
export function createWebhookSender(
  ctx: BaseContext,
  options: WebhookOptions = {},
  /** Whether this process's delivery worker has deliveries in flight (see `busyRatePerSecond`). */
  busy: () => boolean = () => false,
): WebhookSender {
  const opts: Required<WebhookOptions> = { ...WEBHOOK_DEFAULTS, ...options };
  // Mail first: while this process's worker has deliveries in flight, events go at a capped rate.
  const pacer = createBusyPacer(opts.busyRatePerSecond, busy, () => running || draining);
  const paced = () => opts.busyRatePerSecond > 0 && busy();
  const { store, clock, logger, events, fetcher, outbox } = ctx;
  const endpoints = new Map<
    string,
    { until: number; endpoint: Promise<WebhookEndpointRecord | undefined> }
  >();
  const keys = new WeakMap<WebhookEndpointRecord, Buffer>();
  let inFlight = 0;
  const sending = new Set<Promise<void>>();
  let finished: Finished[] = [];
  let flushTimer: ReturnType<typeof setTimeout> | undefined;
  let writes: Promise<void> = Promise.resolve();
  let running = false;
  let draining = false;
  let loop: Promise<void> | undefined;
  let wakeUp: (() => void) | undefined;

  function endpointFor(id: string): Promise<WebhookEndpointRecord | undefined> {
    const now = Date.now();
    const hit = endpoints.get(id);
    if (hit && hit.until > now) return hit.endpoint;
    const endpoint = store.getWebhookEndpoint(id);
    endpoint.catch(() => endpoints.delete(id));
    if (endpoints.size >= 4096) endpoints.clear();
    endpoints.set(id, { until: now + ENDPOINT_CACHE_MS, endpoint });
    return endpoint;
  }

  function record(item: Finished): void {
    finished.push(item);
    if (finished.length >= FLUSH_EVERY) void flush();
    else flushTimer ??= setTimeout(() => void flush(), FLUSH_MS);
  }

  function flush(): Promise<void> {
    if (flushTimer !== undefined) {
      clearTimeout(flushTimer);
      flushTimer = undefined;
    }
    if (finished.length === 0) return writes;
    const items = finished;
    finished = [];
    writes = writes.then(async () => {
      try {
        const written = await store.completeWebhookMessages(items);
        const lost = written.filter((w) => !w).length;
        if (lost > 0) logger.warn({ messages: lost }, 'webhook lease lost before the outcome was written');
      } catch (error) {
        // Nothing recorded: the messages stay leased and are sent again when their leases expire.
        logger.error({ err: error, messages: items.length }, 'recording webhook outcomes failed');
      }
    });
    return writes;
  }

  async function post(
    message: ClaimedWebhookMessage,
    endpoint: WebhookEndpointRecord,
  ): Promise<{ statusCode: number | null; error: string | null; refused: boolean }> {
    let key = keys.get(endpoint);
    if (!key) {
      key = secretKey(endpoint.secret);
      keys.set(endpoint, key);
    }
    const body = message.payload;
    const headers = {
      'content-type': 'application/json',
      ...signedHeaders(key, message.id, Math.floor(clock.now().getTime() / 1000), body),
    };
    try {
      // The answer's body is read (capped) and dropped: what it says is not kept.
      const { status } = await fetcher.post(endpoint.url, {
        body,
        headers,
        timeoutMs: opts.timeoutMs,
        maxBytes: opts.maxResponseBytes,
      });
      const ok = status >= 200 && status < 300;
      return { statusCode: status, error: ok ? null : `HTTP ${status}`, refused: false };
    } catch (error) {
      return {
        statusCode: null,
        error: error instanceof Error ? error.message : String(error),
        refused: isMailroomError(error, 'FETCH_REFUSED') && !error.retryable,
      };
    }
  }

  /** When each endpoint's policy refusal was last logged, so that a broadcast's events log it once. */
  const refusalsLogged = new Map<string, number>();

  /**
   * A refusal by this process's address policy is logged (its message names the allow-list entry that
   * lets the host through), at most once per endpoint every {@link REFUSAL_LOG_INTERVAL_MS}.
   */
  function logRefusal(endpoint: WebhookEndpointRecord, error: string): void {
    const now = Date.now();
    const last = refusalsLogged.get(endpoint.id);
    if (last !== undefined && now - last < REFUSAL_LOG_INTERVAL_MS) return;
    if (refusalsLogged.size >= 4096) refusalsLogged.clear();
    refusalsLogged.set(endpoint.id, now);
    logger.warn(
      { endpoint: endpoint.id, projectId: endpoint.projectId, url: endpoint.url },
      `webhook endpoint ${endpoint.id} refused by this process's address policy: ${error} Its messages stay pending and are retried on the schedule.`,
    );
  }

  async function send(message: ClaimedWebhookMessage): Promise<void> {
    const endpoint = await endpointFor(message.endpointId).catch(() => undefined);
    if (!endpoint?.enabled) {
      const now = clock.now();
      record({
        id: message.id,
        leaseToken: message.leaseToken,
        outcome: {
          status: 'failed',
          statusCode: message.lastStatusCode,
          error: endpoint ? 'endpoint disabled' : 'endpoint removed',
          now,
        },
        attempt: null,
      });
      return;
    }
    const started = performance.now();
    const answer = await post(message, endpoint);
    const latencyMs = performance.now() - started;
    const now = clock.now();
    const ok = answer.error === null;
    // A refusal follows the schedule like any failure: the policy is this process's (another worker, or
    // this one restarted with the host allow-listed, may send it), and a refused attempt opens nothing.
    if (answer.refused && answer.error !== null) logRefusal(endpoint, answer.error);
    const wait = ok ? undefined : opts.retryScheduleMs[message.attempts - 1];
    const outcome: WebhookOutcome = ok
      ? { status: 'delivered', statusCode: answer.statusCode, error: null, now }
      : wait === undefined
        ? { status: 'failed', statusCode: answer.statusCode, error: answer.error, now }
        : {
            status: 'pending',
            nextAttemptAt: new Date(now.getTime() + wait),
            statusCode: answer.statusCode,
            error: answer.error,
            now,
          };
    record({
      id: message.id,
      leaseToken: message.leaseToken,
      outcome,
      attempt: {
        id: newId('wha', now.getTime()),
        projectId: message.projectId,
        endpointId: endpoint.id,
        messageId: message.id,
        eventType: message.eventType,
        attempt: message.attempts,
        statusCode: answer.statusCode,
        latencyMs,
        error: answer.error,
        createdAt: now,
      },
    });
    if (events.has('webhook:attempt')) {
      events.emit('webhook:attempt', {
        projectId: message.projectId,
        endpointId: endpoint.id,
        type: message.eventType,
        outcome: ok ? 'delivered' : outcome.status === 'pending' ? 'retry' : 'failed',
        statusCode: answer.statusCode,
        latencyMs,
      });
    }
    await health(endpoint, ok, now).catch((err: unknown) =>
      logger.warn({ err, endpoint: endpoint.id }, 'recording webhook endpoint health failed'),
    );
  }

  /** A success clears the endpoint's failing run; a failure starts one, and one too long disables it. */
  async function health(endpoint: WebhookEndpointRecord, ok: boolean, now: Date): Promise<void> {
    if (ok) {
      if (endpoint.failingSince === null) return;
      endpoint.failingSince = null;
      await store.setWebhookEndpointHealth(endpoint.id, null);
      return;
    }
    endpoint.failingSince ??= (await store.setWebhookEndpointHealth(endpoint.id, now)) ?? now;
    const since = endpoint.failingSince;
    if (!endpoint.enabled || now.getTime() - since.getTime() < opts.disableAfterMs) return;
    endpoint.enabled = false;
    const reason = `every attempt failed since ${since.toISOString()}`;
    await store.updateWebhookEndpoint(
      endpoint.projectId,
      endpoint.id,
      { enabled: false, disabledReason: reason },
      now,
    );
    outbox.invalidate(endpoint.projectId);
    endpoints.delete(endpoint.id);
    logger.warn(
      { endpoint: endpoint.id, projectId: endpoint.projectId },
      `webhook endpoint disabled: ${reason}`,
    );
  }

  /** Claimed messages waiting for a free sending place: priority 0 first, then oldest first. */
  let queue: ClaimedWebhookMessage[] = [];
  let runners = 0;

  /** One sending place: sends queued messages until none is left. */
  async function runner(): Promise<void> {
    runners++;
    try {
      while (queue.length > 0) {
        // The turn first, then the message: one claimed meanwhile with priority 0 goes next, not after
        // the messages of every place waiting for a turn.
        const wait = pacer.turn();
        if (wait) await wait;
        const message = queue.shift();
        if (!message) break;
        await send(message).catch((error: unknown) =>
          logger.error({ err: error, message: message.id }, 'webhook send failed'),
        );
        inFlight--;
        if (inFlight === Math.floor(holdMax / 2)) wakeUp?.();
      }
    } finally {
      runners--;
      wakeUp?.();
    }
  }

  /** Claims up to `limit` due messages and starts sending them; returns how many it claimed. */
  async function claim(limit: number): Promise<number> {
    const claimed = await store.claimWebhookMessages({ now: clock.now(), limit, leaseMs: opts.leaseMs });
    inFlight += claimed.length;
    // Claims come priority 0 first; those go ahead of the broadcast events already waiting here too.
    const first = claimed.filter((m) => m.priority === 0);
    queue =
      first.length === 0
        ? queue.concat(claimed)
        : first.concat(
            queue,
            claimed.filter((m) => m.priority !== 0),
          );
    while (runners < opts.concurrency && runners < queue.length) {
      const running = runner();
      sending.add(running);
      void running.finally(() => sending.delete(running));
    }
    return claimed.length;
  }

  /**
   * Messages a sender holds claimed at most: several rounds of its sending places, and at least 256, so
   * that claims come in rounds of 128 or more (each claim is a transaction of its own). While the worker
   * is busy they go out at `busyRatePerSecond`, so a low cap holds fewer: the last must be sent within
   * half its lease.
   */
  const holdMax = Math.max(
    1,
    Math.min(
      Math.max(opts.concurrency * 8, 256),
      opts.busyRatePerSecond > 0
        ? Math.floor((opts.busyRatePerSecond * opts.leaseMs) / 2000)
        : Number.POSITIVE_INFINITY,
    ),
  );

  async function runLoop(): Promise<void> {
    let lastPeek = 0;
    while (running) {
      let full = false;
      try {
        const room = holdMax - inFlight;
        if (room >= Math.ceil(holdMax / 2)) full = (await claim(room)) === room;
        else if (room > 0 && paced() && performance.now() - lastPeek >= opts.pollMs) {
          // While paced, the hand empties slowly: a small claim at each poll still finds the priority-0
          // messages (a single message's events) that a full hand of broadcast events would keep waiting.
          lastPeek = performance.now();
          await claim(Math.min(room, PEEK_LIMIT));
        }
      } catch (error) {
        logger.error({ err: error }, 'claiming webhook messages failed');
      }
      if (full || !running) continue;
      await new Promise<void>((resolve) => {
        const timer = setTimeout(finish, opts.pollMs);
        function finish() {
          clearTimeout(timer);
          wakeUp = undefined;
          resolve();
        }
        wakeUp = finish;
      });
    }
  }

  async function drainAll(): Promise<void> {
    for (;;) {
      // Claims in rounds of at least half the room: a claim has a cost of its own, whatever its size.
      const room = holdMax - inFlight;
      const claimed = room >= Math.ceil(holdMax / 2) || inFlight === 0 ? await claim(room) : 0;
      if (claimed === 0 && inFlight === 0) break;
      // Less than a full claim: wait for a sending place to finish before claiming again.
      if ((claimed === 0 || claimed < room) && sending.size > 0) await Promise.race(sending);
    }
    await settle();
  }

  async function settle(): Promise<void> {
    while (sending.size > 0) await Promise.all([...sending]);
    await flush();
  }

  return {
    start() {
      if (running || !opts.send) return;
      running = true;
      loop = runLoop();
    },
    async stop() {
      running = false;
      wakeUp?.();
      await loop;
      loop = undefined;
      await settle();
    },
    async drain() {
      await ctx.ready();
      draining = true;
      try {
        await drainAll();
      } finally {
        draining = false;
      }
    },

    wake() {
      wakeUp?.();
    },
    forget(endpointId) {
      endpoints.delete(endpointId);
    },
  };
}
