import { createHash, timingSafeEqual } from 'node:crypto';
import type { Mailroom, QueueDepth } from '@mailroom/core';
import { MailroomError } from '@mailroom/core';
import { Counter, collectDefaultMetrics, Gauge, Histogram, Registry } from 'prom-client';
import { methodNotAllowedResponse } from '../neutral/responses.js';
import type { NeutralRequest, NeutralResponse } from '../neutral/types.js';
import type { MetricsOptions } from './metrics-options.js';

/** Buckets of the send latency histogram, in seconds: a loopback relay to a slow remote one. */
const SEND_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30];

/** Buckets of the request duration histogram, in seconds. */
const REQUEST_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5];

/** The Prometheus endpoint of one handler. */
export interface HttpMetrics {
  /** The path it answers, relative to the mount point. */
  readonly path: string;
  /** The registry (its own, never prom-client's global one). */
  readonly registry: Registry;
  /** Counts an answered request. `route` is a route name, never a raw path (bounded label values). */
  observeRequest(route: string, method: string, status: number, seconds: number): void;
  /** `GET /metrics`: the text exposition format, behind the bearer token when one is configured. */
  serve(req: NeutralRequest, requestId: string): Promise<NeutralResponse>;
}

/**
 * Metrics of one HTTP handler and of the engine behind it, in a registry of their own (two handlers in one
 * process never collide, and the app's global registry stays the app's). Delivery figures come from the
 * engine's events, so they count what the worker of this process does; queue depth is read from the store
 * at scrape time and covers every process.
 */
export function createHttpMetrics(mailroom: Mailroom, options: MetricsOptions): HttpMetrics {
  const registry = new Registry();
  const path = options.path ?? '/metrics';
  if (options.token === '') {
    throw new MailroomError('VALIDATION_FAILED', 'metrics.token must not be empty', {
      source: '@mailroom/http',
    });
  }
  const tokenDigest = options.token === undefined ? undefined : digest(options.token);
  if (options.processMetrics ?? true) collectDefaultMetrics({ register: registry });

  const requests = new Counter({
    name: 'mailroom_http_requests_total',
    help: 'HTTP requests answered, by route, method and status.',
    labelNames: ['route', 'method', 'status'] as const,
    registers: [registry],
  });
  const requestSeconds = new Histogram({
    name: 'mailroom_http_request_duration_seconds',
    help: 'Time to answer an HTTP request, by route.',
    labelNames: ['route'] as const,
    buckets: REQUEST_BUCKETS,
    registers: [registry],
  });
  const deliveries = new Counter({
    name: 'mailroom_deliveries_total',
    help: 'Delivery outcomes recorded by this process (retry: a transient failure, tried again later).',
    labelNames: ['kind', 'outcome'] as const,
    registers: [registry],
  });
  const replies = new Counter({
    name: 'mailroom_smtp_replies_total',
    help: 'Replies of the relay to send attempts, by class (none: no reply, such as a dropped connection).',
    labelNames: ['class'] as const,
    registers: [registry],
  });
  const sendSeconds = new Histogram({
    name: 'mailroom_send_duration_seconds',
    help: 'Time the transport took to accept or refuse one message.',
    buckets: SEND_BUCKETS,
    registers: [registry],
  });
  const completed = new Counter({
    name: 'mailroom_mailings_completed_total',
    help: 'Broadcasts and messages that completed in this process.',
    labelNames: ['kind'] as const,
    registers: [registry],
  });
  const sourceRows = new Counter({
    name: 'mailroom_source_rows_total',
    help: 'Rows of audience groups and CSV files expanded into deliveries (failed: refused rows).',
    labelNames: ['kind', 'result'] as const,
    registers: [registry],
  });

  // One store walk per scrape, shared by the gauges that read it (and by concurrent scrapes).
  let depth: Promise<QueueDepth> | undefined;
  const readDepth = (): Promise<QueueDepth> => {
    depth ??= mailroom.queueDepth().finally(() => {
      depth = undefined;
    });
    return depth;
  };
  new Gauge({
    name: 'mailroom_queue_deliveries',
    help: 'Deliveries waiting (due: now or for a retry; scheduled: for a later send time) or being sent.',
    labelNames: ['state'] as const,
    registers: [registry],
    async collect() {
      const d = await readDepth();
      this.set({ state: 'due' }, d.due);
      this.set({ state: 'scheduled' }, d.scheduled);
      this.set({ state: 'sending' }, d.sending);
    },
  });
  new Gauge({
    name: 'mailroom_queue_oldest_due_age_seconds',
    help: 'How long the most overdue queued delivery has been due (0 when none is overdue).',
    registers: [registry],
    async collect() {
      const oldest = (await readDepth()).oldestDueAt;
      this.set(oldest ? Math.max(0, (Date.now() - oldest.getTime()) / 1000) : 0);
    },
  });

  const webhookAttempts = new Counter({
    name: 'mailroom_webhook_attempts_total',
    help: 'Webhook POSTs made by this process, by outcome (retry: failed, to be sent again; failed: the last one failed).',
    labelNames: ['outcome'] as const,
    registers: [registry],
  });
  const webhookSeconds = new Histogram({
    name: 'mailroom_webhook_duration_seconds',
    help: 'Time a webhook endpoint took to answer one POST.',
    buckets: SEND_BUCKETS,
    registers: [registry],
  });
  new Gauge({
    name: 'mailroom_webhook_oldest_pending_age_seconds',
    help: 'Age of the oldest event not yet delivered to (nor given up on by) a webhook endpoint (0 when none).',
    registers: [registry],
    async collect() {
      this.set(((await mailroom.webhooks.queue()).oldestPendingAgeMs ?? 0) / 1000);
    },
  });
  mailroom.on('webhook:attempt', (event) => {
    webhookAttempts.inc({ outcome: event.outcome });
    webhookSeconds.observe(event.latencyMs / 1000);
  });

  mailroom.on('delivery', (event) => {
    deliveries.inc({ kind: event.kind, outcome: event.status === 'queued' ? 'retry' : event.status });
    if (event.latencyMs === null) return;
    sendSeconds.observe(event.latencyMs / 1000);
    replies.inc({ class: replyClass(event.response) });
  });
  const inboundMessages = new Counter({
    name: 'mailroom_inbound_messages_total',
    help: 'Inbound messages and provider notifications taken by this process, by way (smtp, ses, mailgun), what they were read as, outcome (applied, duplicate, ignored, deferred) and why one was ignored or deferred (none otherwise).',
    labelNames: ['via', 'report', 'outcome', 'reason'] as const,
    registers: [registry],
  });
  const signals = new Counter({
    name: 'mailroom_inbound_signals_total',
    help: 'Bounces, complaints and delivery reports applied by this process (repeats excepted), by kind (hard-bounce, soft-bounce, sender-side, complaint, delivered) and reason.',
    labelNames: ['kind', 'reason'] as const,
    registers: [registry],
  });
  mailroom.on('inbound:message', (event) =>
    inboundMessages.inc({
      via: event.via,
      report: event.report,
      outcome: event.outcome,
      reason: event.code ?? 'none',
    }),
  );
  mailroom.on('inbound', (event) => signals.inc({ kind: event.signal, reason: event.reason }));
  mailroom.on('broadcast:completed', (event) => completed.inc({ kind: event.kind }));
  mailroom.on('source:page', (event) => {
    sourceRows.inc({ kind: event.kind, result: 'ok' }, event.rows - event.failedRows);
    if (event.failedRows > 0) sourceRows.inc({ kind: event.kind, result: 'failed' }, event.failedRows);
  });

  return {
    path,
    registry,
    observeRequest(route, method, status, seconds) {
      requests.inc({ route, method, status: String(status) });
      requestSeconds.observe({ route }, seconds);
    },
    async serve(req, requestId) {
      if (req.method !== 'GET' && req.method !== 'HEAD') {
        return methodNotAllowedResponse(requestId, req.method, ['GET', 'HEAD']);
      }
      if (tokenDigest) {
        const given = /^bearer +(\S+) *$/i.exec(req.headers.authorization?.trim() ?? '')?.[1];
        if (!given || !timingSafeEqual(digest(given), tokenDigest)) {
          throw new MailroomError('UNAUTHORIZED', 'A metrics scrape needs the bearer token');
        }
      }
      return {
        status: 200,
        headers: {
          'content-type': registry.contentType,
          'cache-control': 'no-store',
          'x-content-type-options': 'nosniff',
          'x-request-id': requestId,
        },
        body: req.method === 'HEAD' ? '' : await registry.metrics(),
      };
    },
  };
}

/** `2xx`, `4xx` or `5xx` from the reply's code, `none` without one. */
function replyClass(response: string | null): string {
  const code = /^\s*([2-5])\d\d\b/.exec(response ?? '')?.[1];
  return code ? `${code}xx` : 'none';
}

/** Fixed-length digests compare in constant time whatever the lengths of the tokens. */
function digest(token: string): Buffer {
  return createHash('sha256').update(token).digest();
}
