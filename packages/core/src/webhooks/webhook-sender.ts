import { isMailroomError, isStoreOutage } from '../base/errors.js';
import { newId } from '../base/ids.js';
import type { BaseContext } from '../context/base-context.js';
import type {
  ClaimedWebhookMessage,
  WebhookAttemptRecord,
  WebhookEndpointRecord,
  WebhookOutcome,
  WebhookPriority,
} from '../store/event-records.js';
import { createBusyPacer } from './busy-pacer.js';
import { createLanes, type Lane } from './endpoint-lanes.js';
import type { WebhookEvents } from './webhook-events.js';
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
  // The body only keeps the connection for the next POST; a larger one costs the connection instead.
  maxResponseBytes: 4 * 1024,
  leaseMs: MINUTE,
  pollMs: 250,
  busyRatePerSecond: 100,
  circuitFailures: 5,
  circuitOpenMs: 5 * SECOND,
  circuitMaxOpenMs: 5 * MINUTE,
};

/** How long a sender trusts its copy of an endpoint (URL, secret, enabled, circuit). */
const ENDPOINT_CACHE_MS = 5_000;
/** Outcomes recorded per store transaction at most (each transaction has a cost of its own). */
const FLUSH_EVERY = 500;
/** ... or at the latest this long after the first of them. */
const FLUSH_MS = 25;
/** An endpoint refused by the address policy is logged at most once in this long. */
const REFUSAL_LOG_INTERVAL_MS = 10 * MINUTE;
/** Messages claimed at most by one poll of a sender whose hand is more than half full while paced. */
const PEEK_LIMIT = 8;
/** A held message is sent only with this much of its lease left beyond the POST's time cap. */
const LEASE_MARGIN_MS = 1_000;
/**
 * A claim while the hand is full only with skipped endpoints' messages (`ClaimScan.room`) is made at most
 * this often: it passes over their due rows, and it is how an endpoint with nothing in hand gets its
 * next messages (without it, a slow endpoint holding a full claim kept the others waiting until that
 * claim's lease ran out).
 */
const ROOM_CLAIM_MS = 1_000;
/** Characters of a redirect's `Location` kept in the attempt's error. */
const MAX_LOCATION = 300;

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

interface Released {
  id: string;
  leaseToken: number;
  nextAttemptAt: Date;
}

/** What one POST came to. */
interface Answer {
  statusCode: number | null;
  error: string | null;
  /** Refused by this process's address policy (logged; retried on the schedule). */
  refused: boolean;
}

/**
 * Claims due webhook messages with a lease (like deliveries: several processes may share the queue),
 * POSTs each one signed per Standard Webhooks through the guarded fetcher (SSRF policy and allow-list,
 * `timeoutMs`, `maxResponseBytes`), and records the outcome fenced by the lease: a 2xx is `delivered`
 * at its status line, whatever its body (Standard Webhooks; a body past the cap drops the connection);
 * anything else (a 3xx included: redirects are not followed; a refusal by the address policy too, which
 * is logged) waits the next entry of `retryScheduleMs` and is sent again with the same `webhook-id`, and
 * after the last it is `failed`. An endpoint that has failed every attempt for `disableAfterMs` is
 * disabled. Order is not kept: messages are sent concurrently, and a retry goes after newer ones.
 *
 * Each endpoint is isolated (`endpoint-lanes.ts`): its own share of `concurrency`, as many held
 * messages as it can send within half a lease, and a circuit that `circuitFailures` failures in a row
 * open. An open circuit is stored (`Store.setWebhookCircuit`, which defers the endpoint's pending
 * messages), the messages held for it are handed back unsent, and claims skip it; after
 * `circuitOpenMs` (doubling) one probe decides. A slow or dead endpoint never holds another's share.
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
  const { store, clock, logger, fetcher, outbox } = ctx;
  const events = ctx.events.view<WebhookEvents>();
  const endpoints = new Map<
    string,
    { until: number; endpoint: Promise<WebhookEndpointRecord | undefined> }
  >();
  const keys = new WeakMap<WebhookEndpointRecord, Buffer>();
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
  const lanes = createLanes({
    concurrency: opts.concurrency,
    holdMax,
    leaseMs: opts.leaseMs,
    timeoutMs: opts.timeoutMs,
    circuitFailures: opts.circuitFailures,
    circuitOpenMs: opts.circuitOpenMs,
    circuitMaxOpenMs: opts.circuitMaxOpenMs,
  });
  const minLeaseLeft = Math.min(opts.timeoutMs + LEASE_MARGIN_MS, opts.leaseMs / 2);
  /** Messages claimed and not yet recorded or handed back. */
  let held = 0;
  const sending = new Set<Promise<void>>();
  let finished: Finished[] = [];
  let released: Released[] = [];
  let flushTimer: ReturnType<typeof setTimeout> | undefined;
  let writes: Promise<void> = Promise.resolve();
  let running = false;
  let draining = false;
  let loop: Promise<void> | undefined;
  let wakeUp: (() => void) | undefined;
  let dispatching = false;
  /** Whether a claim round was due when last looked at (the claim loop is woken on the change). */
  let roomy = true;

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

  function later(): void {
    if (finished.length + released.length >= FLUSH_EVERY) void flush();
    else flushTimer ??= setTimeout(() => void flush(), FLUSH_MS);
  }

  function record(item: Finished): void {
    finished.push(item);
    later();
  }

  /**
   * Hands a held message back unsent, due at `at` (its attempt does not count); `started`: its POST was
   * counted as started, and its end takes it out of the hand.
   */
  function release(message: ClaimedWebhookMessage, at: Date, started = false): void {
    released.push({ id: message.id, leaseToken: message.leaseToken, nextAttemptAt: at });
    if (!started) held--;
    later();
  }

  function flush(): Promise<void> {
    if (flushTimer !== undefined) {
      clearTimeout(flushTimer);
      flushTimer = undefined;
    }
    if (finished.length === 0 && released.length === 0) return writes;
    const items = finished;
    const back = released;
    finished = [];
    released = [];
    writes = writes.then(async () => {
      try {
        if (back.length > 0) await store.releaseWebhookMessages(back);
        if (items.length === 0) return;
        const written = await store.completeWebhookMessages(items);
        const lost = written.filter((w) => !w).length;
        if (lost > 0) logger.warn({ messages: lost }, 'webhook lease lost before the outcome was written');
      } catch (error) {
        // Nothing recorded: the messages stay leased and are sent again when their leases expire.
        if (!isStoreOutage(error))
          logger.error(
            { err: error, messages: items.length + back.length },
            'recording webhook outcomes failed',
          );
      }
    });
    return writes;
  }

  async function post(message: ClaimedWebhookMessage, endpoint: WebhookEndpointRecord): Promise<Answer> {
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
      // The status line is the answer; the body is read (capped, in the background) only to keep the
      // connection, and dropped.
      const { status, location } = await fetcher.post(endpoint.url, {
        body,
        headers,
        timeoutMs: opts.timeoutMs,
        maxBytes: opts.maxResponseBytes,
      });
      if (status >= 200 && status < 300) return { statusCode: status, error: null, refused: false };
      const error =
        status >= 300 && status < 400
          ? `HTTP ${status} redirect to ${location === null ? '(no Location)' : shown(location)}, not followed`
          : `HTTP ${status}`;
      return { statusCode: status, error, refused: false };
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

  async function send(lane: Lane, message: ClaimedWebhookMessage, probe: boolean): Promise<void> {
    const endpoint = await endpointFor(message.endpointId).catch(() => undefined);
    if (!endpoint?.enabled) {
      const now = clock.now();
      lanes.reset(lane.endpointId);
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
    const openElsewhere = endpoint.circuitOpenUntil?.getTime() ?? 0;
    if (lane.openUntil === 0 && openElsewhere > clock.now().getTime()) {
      // Another process opened the circuit: keep to it.
      lane.openUntil = openElsewhere;
      release(message, laterOf(message.nextAttemptAt, endpoint.circuitOpenUntil as Date), true);
      handBack(lane);
      return;
    }
    const started = performance.now();
    const answer = await post(message, endpoint);
    const latencyMs = performance.now() - started;
    const now = clock.now();
    const ok = answer.error === null;
    // A refusal follows the schedule like any failure: the policy is this process's (another worker, or
    // this one restarted with the host allow-listed, may send it), so it neither opens the circuit, which
    // every process keeps to, nor closes it.
    if (answer.refused && answer.error !== null) logRefusal(endpoint, answer.error);
    const openUntil = ok || answer.refused ? undefined : lanes.failed(lane, latencyMs, now.getTime(), probe);
    if (answer.refused && probe) lane.probing = false;
    const closed = ok && lanes.succeeded(lane, latencyMs);
    const wait = ok ? undefined : opts.retryScheduleMs[message.attempts - 1];
    // A retry due while the circuit is open waits for it to be tried again.
    const retryAt = wait === undefined ? 0 : Math.max(now.getTime() + wait, lane.openUntil);
    const outcome: WebhookOutcome = ok
      ? { status: 'delivered', statusCode: answer.statusCode, error: null, now }
      : wait === undefined
        ? { status: 'failed', statusCode: answer.statusCode, error: answer.error, now }
        : {
            status: 'pending',
            nextAttemptAt: new Date(retryAt),
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
    if (openUntil !== undefined) await openCircuit(lane, endpoint, new Date(openUntil), answer.error);
    else if (closed || (ok && endpoint.circuitOpenUntil !== null)) await closeCircuit(endpoint);
    await health(endpoint, ok, now).catch((err: unknown) =>
      logger.warn({ err, endpoint: endpoint.id }, 'recording webhook endpoint health failed'),
    );
  }

  /** Hands back everything a lane holds and has not started, due when its circuit lets them go. */
  function handBack(lane: Lane): void {
    const at = new Date(lane.openUntil);
    for (const message of lanes.takeHeld(lane)) release(message, laterOf(message.nextAttemptAt, at));
  }

  async function openCircuit(
    lane: Lane,
    endpoint: WebhookEndpointRecord,
    until: Date,
    reason: string | null,
  ): Promise<void> {
    handBack(lane);
    endpoint.circuitOpenUntil = until;
    try {
      await store.setWebhookCircuit(endpoint.id, until);
      // New events for it are written due when it opens again (`events/event-outbox.ts`).
      outbox.invalidate(endpoint.projectId);
    } catch (err) {
      logger.warn({ err, endpoint: endpoint.id }, 'recording a webhook circuit failed');
    }
    logger.warn(
      { endpoint: endpoint.id, projectId: endpoint.projectId, until: until.toISOString(), reason },
      `webhook endpoint circuit open until ${until.toISOString()} after ${lane.failures} failed attempts in a row`,
    );
  }

  async function closeCircuit(endpoint: WebhookEndpointRecord): Promise<void> {
    if (endpoint.circuitOpenUntil === null) return;
    endpoint.circuitOpenUntil = null;
    try {
      await store.setWebhookCircuit(endpoint.id, null);
      outbox.invalidate(endpoint.projectId);
    } catch (err) {
      logger.warn({ err, endpoint: endpoint.id }, 'recording a webhook circuit failed');
    }
    logger.info({ endpoint: endpoint.id, projectId: endpoint.projectId }, 'webhook endpoint circuit closed');
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

  /** Wakes the claim loop when a claim round becomes due (see `ClaimScan.hungry`). */
  function noticeRoom(): void {
    const { hungry } = lanes.scan(clock.now().getTime());
    if (hungry && !roomy) wakeUp?.();
    roomy = hungry;
  }

  /**
   * Starts POSTs while a lane may: each takes a turn of the pacer first, then its message, so that a
   * priority-0 message claimed meanwhile goes next rather than after the messages already waiting.
   */
  async function dispatch(): Promise<void> {
    dispatching = true;
    try {
      while (lanes.next(clock.now().getTime()) !== undefined) {
        const wait = pacer.turn();
        if (wait) await wait;
        const now = clock.now().getTime();
        const lane = lanes.next(now);
        if (!lane) break;
        const { message, probe } = lanes.start(lane, now);
        if (message.leaseExpiresAt.getTime() - now < minLeaseLeft) {
          // Held too long (a claim brought more than its endpoint could take): another claim sends it.
          lanes.end(lane);
          release(message, message.nextAttemptAt);
          if (probe) lane.probing = false;
          continue;
        }
        const posting = send(lane, message, probe)
          .catch((error: unknown) => logger.error({ err: error, message: message.id }, 'webhook send failed'))
          .finally(() => {
            lanes.end(lane);
            held--;
            sending.delete(posting);
            noticeRoom();
            kick();
          });
        sending.add(posting);
      }
    } finally {
      dispatching = false;
    }
  }

  function kick(): void {
    if (dispatching) return;
    const running = dispatch();
    sending.add(running);
    void running.finally(() => sending.delete(running));
  }

  /**
   * Claims up to `limit` due messages (of `priority` only, if given) and starts sending them; returns
   * how many it claimed.
   */
  async function claim(limit: number, skip: string[], priority?: WebhookPriority): Promise<number> {
    const claimed = await store.claimWebhookMessages({
      now: clock.now(),
      limit,
      leaseMs: opts.leaseMs,
      ...(skip.length > 0 ? { skipEndpoints: skip } : {}),
      ...(priority !== undefined ? { priority } : {}),
    });
    held += claimed.length;
    const now = clock.now().getTime();
    for (const message of claimed) {
      const lane = lanes.of(message.endpointId);
      if (lanes.isOpen(lane, now)) {
        release(message, new Date(lane.openUntil));
        continue;
      }
      // Claims come priority 0 first; those go ahead of the broadcast events already waiting here too.
      (message.priority === 0 ? lane.urgent : lane.queue).push(message);
    }
    roomy = lanes.scan(now).hungry;
    kick();
    return claimed.length;
  }

  async function runLoop(): Promise<void> {
    let lastPeek = 0;
    let lastRoomClaim = Number.NEGATIVE_INFINITY;
    while (running) {
      let full = false;
      try {
        const { hungry, room, limit, skip, open } = lanes.scan(clock.now().getTime());
        if (hungry) full = (await claim(limit, skip)) === limit;
        else if (room && performance.now() - lastRoomClaim >= ROOM_CLAIM_MS) {
          // Only skipped endpoints fill the hand: the others may have messages due and none in hand.
          lastRoomClaim = performance.now();
          full = (await claim(limit, skip)) === limit;
        } else if (paced() && performance.now() - lastPeek >= opts.pollMs) {
          // While paced, the hand empties slowly: a small claim at each poll still finds the priority-0
          // messages (a single message's events) that a full hand of broadcast events would keep waiting,
          // whatever their endpoint's hand holds: a short index range, where passing over the broadcast
          // events of every full endpoint would not be.
          lastPeek = performance.now();
          await claim(PEEK_LIMIT, open, 0);
        }
      } catch (error) {
        if (!isStoreOutage(error)) logger.error({ err: error }, 'claiming webhook messages failed');
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
      const { hungry, limit, skip } = lanes.scan(clock.now().getTime());
      const claimed = hungry || held === 0 ? await claim(limit, skip) : 0;
      if (claimed === 0 && held === 0) break;
      // Less than a full claim: wait for a POST to finish before claiming again.
      if ((claimed === 0 || claimed < limit) && sending.size > 0) await Promise.race(sending);
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
      // What is held and not started goes back at once: stopping waits only for the POSTs in flight.
      for (const lane of [...lanes.all()]) {
        for (const message of lanes.takeHeld(lane)) release(message, message.nextAttemptAt);
      }
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
      lanes.reset(endpointId);
    },
  };
}

function laterOf(a: Date, b: Date): Date {
  return a > b ? a : b;
}

/** A redirect's `Location` for an error message: without its query (it may carry a token), capped. */
function shown(location: string): string {
  const q = location.search(/[?#]/);
  const bare = q === -1 ? location : `${location.slice(0, q)}?…`;
  return bare.length > MAX_LOCATION ? `${bare.slice(0, MAX_LOCATION)}…` : bare;
}
